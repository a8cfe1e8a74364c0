"""`mx.init` follows MXNet's initializer contract: `_init_weight(name, arr)` fills the
array in place (so an initializer written for MXNet works unchanged), `dumps()` writes the
JSON MXNet writes, and `register` makes a class known by name."""

import json

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx


def test_an_mxnet_style_custom_initializer_fills_the_array_in_place():
    class Ramp(mx.init.Initializer):
        def __init__(self, start):
            super().__init__(start=start)
            self.start = start

        def _init_weight(self, name, arr):
            arr[:] = mx.nd.arange(arr.size).reshape(arr.shape) + self.start

    net = mx.gluon.nn.Dense(3, in_units=2)
    net.initialize(Ramp(10.0))
    np.testing.assert_array_equal(net.weight.data().asnumpy(), [[10, 11], [12, 13], [14, 15]])
    np.testing.assert_array_equal(net.bias.data().asnumpy(), [0, 0, 0])  # its own: zeros
    assert Ramp(1.0).dumps() == '["ramp", {"start": 1.0}]'


def test_calling_an_initializer_on_an_array_fills_it():
    arr = mx.nd.zeros((2, 3))
    assert mx.init.Constant(2.5)("w", arr) is None
    np.testing.assert_array_equal(arr.asnumpy(), np.full((2, 3), 2.5))


def test_bilinear_is_the_upsampling_kernel():
    w = mx.nd.zeros((2, 1, 4, 3))
    mx.init.Bilinear()._init_weight("up_weight", w)
    f = np.ceil(3 / 2)
    c = (2 * f - 1 - f % 2) / (2 * f)
    ys, xs = np.arange(4), np.arange(3)
    kernel = (1 - abs(ys[:, None] / f - c)) * (1 - abs(xs[None, :] / f - c))
    np.testing.assert_allclose(w.asnumpy(), np.broadcast_to(kernel, (2, 1, 4, 3)), rtol=1e-6)
    with pytest.raises(ValueError, match="4-d convolution weight"):
        mx.init.Bilinear()._init_weight("w", mx.nd.zeros((3, 3)))


def test_dumps_and_register():
    assert mx.init.Xavier(magnitude=2).dumps() == json.dumps(
        ["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 2}]
    )
    const = mx.init.Constant(np.ones((2, 2)))
    assert json.loads(const.dumps()) == ["constant", {"value": [[1.0, 1.0], [1.0, 1.0]]}]

    @mx.init.register
    class Fives(mx.init.Initializer):
        def _init_weight(self, name, arr):
            arr[:] = 5

    p = mx.gluon.Parameter("p", shape=(2,))
    p.initialize("fives")
    np.testing.assert_array_equal(p.data().asnumpy(), [5, 5])
    with pytest.raises(TypeError, match="Initializer subclass"):
        mx.init.register(object)
