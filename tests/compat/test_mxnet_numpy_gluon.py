"""Gluon in NumPy mode: `F.np` / `F.npx` in hybrid_forward, `@use_np` on a block class
(its inherited methods too, so deferred parameters are mx.np arrays), mx.np's hsplit /
vsplit / dsplit, and mx.test_utils.check_gluon_hybridize_consistency."""

from __future__ import annotations

import numpy as onp
import pytest

from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet.test_utils import check_gluon_hybridize_consistency


def test_hybrid_forward_reaches_the_numpy_ops_as_F_np():
    @mx.util.use_np
    class Block(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get("w", shape=(3, 2))

        def hybrid_forward(self, F, x, w):
            return F.npx.relu(F.np.dot(x, w))

    net = Block()
    net.initialize(mx.init.One())
    out = net(mx.np.array([[1.0, -2.0, 0.5]]))
    assert type(out) is mx.np.ndarray
    assert type(net.w.data()) is mx.np.ndarray  # made inside the decorated class's methods
    onp.testing.assert_allclose(out.asnumpy(), [[0.0, 0.0]])
    assert mx.nd.np is mx.np and mx.nd.npx is mx.npx


@pytest.mark.parametrize(
    ("name", "axis", "shape"),
    [
        ("hsplit", 1, (2, 4, 3)),
        ("vsplit", 0, (4, 2)),
        ("dsplit", 2, (2, 1, 6)),
        ("hsplit", 0, (6,)),
    ],
)
def test_numpy_splits_match_numpy(name, axis, shape):
    a = onp.arange(onp.prod(shape), dtype=onp.float32).reshape(shape)
    got = getattr(mx.np, name)(mx.np.array(a), 2)
    want = getattr(onp, name)(a, 2)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more"):
        mx.np.vsplit(mx.np.ones(3), 3)


def test_check_gluon_hybridize_consistency_passes_and_catches_a_wrong_reference():
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.dense = mx.gluon.nn.Dense(3, flatten=False)

        def hybrid_forward(self, F, x):
            return self.dense(F.np.concatenate(F.np.hsplit(x, 4)[1:], axis=1))

    x = mx.np.random.normal(0, 1, (2, 8))
    check_gluon_hybridize_consistency(Net, [x])

    class Slice(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x[:, 1:3] * 2

    check_gluon_hybridize_consistency(Slice, [x], numpy_func=lambda a: a[:, 1:3] * 2)
    with pytest.raises(AssertionError):
        check_gluon_hybridize_consistency(Slice, [x], numpy_func=lambda a: a[:, 1:3] * 3)
