"""MXNet 1.9.1 semantics the facade follows (written from MXNet's documentation; the
upstream test files themselves run through tools/mxnet_conformance.py).

Autograd: `grad` returns a list, constant gradients differentiate to zeros, "write"
writes into the gradient buffer, a freed graph refuses a second backward. Gluon 1.x:
prefixed names and sharing, attribute kinds, split_data, dtype_source, the added layers.
"""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd, gluon, test_utils
from tapegrad.compat.mxnet.gluon import nn


def _grad2(op, x_values):
    """Second derivative of `op` at `x_values` through mx.autograd.grad(create_graph)."""
    x = mx.nd.array(x_values, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = op(x)
        (dy,) = autograd.grad(y, x, create_graph=True, retain_graph=True)
        (d2y,) = autograd.grad(dy, x)
    return dy, d2y


# ------------------------------------------------------------------ mx.autograd
def test_grad_always_returns_a_list_even_for_one_variable():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = (x * x).sum()
    out = autograd.grad(y, x)
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_allclose(out[0].asnumpy(), 2 * x.asnumpy())  # [0] is the whole gradient


@pytest.mark.parametrize(
    "op", [mx.nd.relu, lambda x: mx.nd.clip(x, -0.5, 0.5), mx.nd.radians, lambda x: 3.0 * x]
)
def test_second_derivative_of_a_piecewise_linear_op_is_zeros(op):
    values = [-1.3, -0.2, 0.4, 2.0]
    dy, d2y = _grad2(op, values)
    assert d2y.shape == (4,)
    assert np.all(d2y.asnumpy() == 0)
    # the first derivative is the real one (finite differences)
    v, eps = np.array(values), 1e-6
    fd = (
        op(mx.nd.array(v + eps, dtype="float64")).asnumpy()
        - op(mx.nd.array(v - eps, dtype="float64")).asnumpy()
    ) / (2 * eps)
    np.testing.assert_allclose(dy.asnumpy(), fd, atol=1e-6)


def test_a_variable_the_heads_do_not_use_gets_zeros():
    x, z = mx.nd.array([1.0, 2.0]), mx.nd.array([5.0, 6.0])
    x.attach_grad()
    z.attach_grad()
    with autograd.record():
        y = (x * 3).sum()
    gx, gz = autograd.grad(y, [x, z])
    np.testing.assert_array_equal(gx.asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(gz.asnumpy(), [0.0, 0.0])


def test_arcsinh_second_derivative_has_the_mathematical_sign():
    v = np.array([-1.5, -0.3, 0.7, 2.0])
    _, d2y = _grad2(mx.nd.arcsinh, v)
    np.testing.assert_allclose(d2y.asnumpy(), -v / (v * v + 1) ** 1.5, rtol=1e-10)


def test_write_goes_into_the_buffer_given_to_mark_variables():
    x = mx.nd.array([1.0, 2.0, 3.0])
    buf = mx.nd.zeros((3,))
    autograd.mark_variables([x], [buf])
    for k in (2.0, 5.0):
        with autograd.record():
            y = (x * k).sum()
        y.backward()
        np.testing.assert_array_equal(buf.asnumpy(), [k, k, k])  # the same buffer, written
    assert x.grad is buf


def test_a_saved_gradient_and_parameter_grad_see_new_values():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    saved = x.grad
    with autograd.record():
        (x * x).sum().backward()
    np.testing.assert_array_equal(saved.asnumpy(), [2.0, 4.0])
    p = gluon.Parameter("w", shape=(2,))
    p.initialize(mx.init.One())
    g = p.grad()
    for k in (3.0, 7.0):
        with autograd.record():
            (p.data() * k).sum().backward()
        np.testing.assert_array_equal(g.asnumpy(), [k, k])


def test_the_core_record_scope_writes_in_place_too():
    x, buf = tg.tensor([1.0, 2.0]), tg.zeros(2)
    tg.autograd.mark_variables([x], [buf])
    version = buf._version
    with tg.autograd.record():
        (x * 4).sum().backward()
    assert x.grad is buf and buf._version > version
    np.testing.assert_array_equal(buf.numpy(), [4.0, 4.0])


def test_a_second_backward_without_retain_graph_raises():
    x = mx.nd.ones((2, 2))
    x.attach_grad()
    with autograd.record():
        y = x + 1  # saves nothing: the core alone would allow a second pass
    y.backward()
    with pytest.raises(mx.base.MXNetError, match="retain_graph=True"):
        y.backward()
    x.attach_grad("add")
    with autograd.record():
        y = x + 1
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 2), 2.0))


def test_autograd_star_import_and_contrib_autograd():
    ns: dict = {}
    exec("from tapegrad.compat.mxnet.autograd import *", ns)
    assert {"record", "backward", "grad", "mark_variables", "NDArray"} <= set(ns)
    from tapegrad.compat.mxnet.contrib import autograd as cag

    grads, loss = cag.grad_and_loss(lambda a, b: a * b)(mx.nd.array([2.0]), mx.nd.array([5.0]))
    assert [g.asscalar() for g in grads] == [5.0, 2.0] and loss.asscalar() == 10.0
    x = mx.nd.ones((50,))
    with cag.train_section():
        assert autograd.is_training()
        with cag.test_section():
            assert not autograd.is_training()
            np.testing.assert_array_equal(mx.nd.Dropout(x, p=0.5).asnumpy(), x.asnumpy())


# ------------------------------------------------------------------ Gluon 1.x names
class _Net(nn.Block):
    def __init__(self, in_units=0, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(3, in_units=in_units)
            self.dense1 = nn.Dense(2, in_units=3)

    def forward(self, x):
        return self.dense1(self.dense0(x))


def test_names_follow_the_prefix_and_the_name_scope():
    net = _Net(prefix="net_")
    assert sorted(net.collect_params()) == [
        "net_dense0_bias",
        "net_dense0_weight",
        "net_dense1_bias",
        "net_dense1_weight",
    ]
    assert sorted(net.collect_params(".*weight")) == ["net_dense0_weight", "net_dense1_weight"]
    assert net.dense0.name == "net_dense0" and net.dense1.prefix == "net_dense1_"
    lines = str(nn.Dense(2, in_units=4, prefix="d_").collect_params()).splitlines()
    assert lines[0] == "d_ (" and "d_weight" in lines[1] and "(2, 4)" in lines[1]


def test_params_argument_shares_parameters_by_name():
    a = _Net(prefix="a_", in_units=4)
    b = _Net(prefix="b_", params=a.collect_params())
    assert b.dense0.weight is a.dense0.weight and b.dense1.bias is a.dense1.bias
    a.initialize(mx.init.One())
    x = mx.nd.ones((1, 4))
    np.testing.assert_array_equal(a(x).asnumpy(), b(x).asnumpy())
    c = _Net(prefix="c_", in_units=4)
    assert c.dense0.weight is not a.dense0.weight


def test_parameter_dict_prefix_get_and_save_load(tmp_path):
    params = gluon.ParameterDict("net_")
    w = params.get("w0", shape=(2, 3))
    assert list(params) == ["net_w0"] and params.get("w0") is w
    params.initialize(mx.init.Constant(1.5))
    params.save(str(tmp_path / "p.params"))
    again = gluon.ParameterDict("net_")
    again.get("w0", shape=(2, 3))
    again.load(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(again["net_w0"].data().asnumpy(), np.full((2, 3), 1.5))


def test_load_parameters_dtype_source(tmp_path):
    net = nn.Dense(2, in_units=2, dtype="float32", prefix="d_")
    net.initialize(mx.init.One())
    path = str(tmp_path / "d.params")
    net.save_parameters(path)
    net64 = nn.Dense(2, in_units=2, dtype="float64", prefix="e_")
    net64.load_parameters(path, cast_dtype=True, dtype_source="current")
    assert net64.weight.data().dtype == np.float64
    net64.load_parameters(path, cast_dtype=True, dtype_source="saved")
    assert net64.weight.data().dtype == np.float32
    with pytest.raises(ValueError, match="dtype_source"):
        net64.load_parameters(path, dtype_source="file")


def test_attribute_kinds_and_unregistering():
    b = nn.Block()
    b.child = nn.Block()
    with pytest.raises(TypeError, match="changing the attribute"):
        b.child = (2,)
    b.child = None  # unregisters it
    assert not b._children
    b.p = gluon.Parameter("p", shape=(1,))
    with pytest.raises(TypeError):
        b.p = 3
    b.x = None
    b.x = 1  # plain attributes change freely


def test_a_list_of_blocks_warns_and_sequential_does_not():
    class Listed(nn.Block):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(2), nn.Dense(2)]

    with pytest.warns(UserWarning, match="unregistered container"):
        Listed().collect_params()
    seq = nn.Sequential()
    seq.add(nn.Dense(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seq.collect_params()
    with pytest.warns(UserWarning, match="HybridSequential"):
        seq.hybridize()


def test_split_data_even_and_uneven():
    x = mx.nd.arange(33 * 2).reshape((2, 33))
    parts = gluon.utils.split_data(x, 4, batch_axis=1, even_split=False)
    expected = np.array_split(x.asnumpy(), 4, axis=1)
    assert [p.shape for p in parts] == [e.shape for e in expected]
    for p, e in zip(parts, expected):
        np.testing.assert_array_equal(p.asnumpy(), e)
    with pytest.raises(ValueError, match="even_split=False"):
        gluon.utils.split_data(x, 4, batch_axis=1)
    assert len(gluon.utils.split_data(x, 3, batch_axis=1)) == 3


def test_hooks_summary_and_lambdas(capsys):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    seen = []
    handle = net.register_forward_pre_hook(lambda block, inputs: seen.append(inputs[0].shape))
    net(mx.nd.ones((4, 3)))
    handle.detach()
    net(mx.nd.ones((5, 3)))
    assert seen == [(4, 3)]
    net.summary(mx.nd.ones((4, 3)))
    assert "Total params: 8" in capsys.readouterr().out
    x = mx.nd.array([-1.0, 0.5])
    np.testing.assert_allclose(
        nn.HybridLambda("tanh")(x).asnumpy(), np.tanh([-1.0, 0.5]), rtol=1e-6
    )
    np.testing.assert_allclose(nn.Lambda("relu")(x).asnumpy(), [0.0, 0.5])


# ------------------------------------------------------------------ layers
def _forward(layer, x):
    layer.initialize()
    return layer(x)


def test_channels_last_conv_and_pool_equal_channels_first():
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((2, 3, 6, 5)))
    first = nn.Conv2D(4, 3, in_channels=3)
    last = nn.Conv2D(4, 3, in_channels=3, layout="NHWC")
    first.initialize()
    last.initialize()
    last.weight.set_data(first.weight.data())
    out_last = last(mx.nd.array(np.moveaxis(x.asnumpy(), 1, -1)))
    np.testing.assert_allclose(
        np.moveaxis(out_last.asnumpy(), -1, 1), first(x).asnumpy(), rtol=1e-5, atol=1e-6
    )
    pooled = _forward(nn.MaxPool2D(2, layout="NHWC"), mx.nd.array(np.moveaxis(x.asnumpy(), 1, -1)))
    np.testing.assert_allclose(
        np.moveaxis(pooled.asnumpy(), -1, 1), _forward(nn.MaxPool2D(2), x).asnumpy()
    )


def test_conv3d_and_3d_pools_against_brute_force():
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((1, 2, 4, 4, 4))
    conv = nn.Conv3D(3, 2, in_channels=2, use_bias=False)
    out = _forward(conv, mx.nd.array(xv))
    w = conv.weight.data().asnumpy()
    ref = np.zeros((1, 3, 3, 3, 3))
    for d, h, k in np.ndindex(3, 3, 3):
        ref[0, :, d, h, k] = np.tensordot(w, xv[0, :, d : d + 2, h : h + 2, k : k + 2], axes=4)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    mp = _forward(nn.MaxPool3D(2), mx.nd.array(xv)).asnumpy()
    ap = _forward(nn.AvgPool3D(2), mx.nd.array(xv)).asnumpy()
    blocks = xv.reshape(1, 2, 2, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7)
    np.testing.assert_allclose(mp, blocks.reshape(1, 2, 2, 2, 2, 8).max(-1), rtol=1e-6)
    np.testing.assert_allclose(ap, blocks.reshape(1, 2, 2, 2, 2, 8).mean(-1), rtol=1e-5)
    g1 = _forward(nn.GlobalAvgPool1D(), mx.nd.array(xv[:, :, 0, 0, :])).asnumpy()
    np.testing.assert_allclose(g1, xv[:, :, 0, 0, :].mean(-1, keepdims=True), rtol=1e-6)


def test_conv2d_transpose_matches_the_core_op():
    x = mx.nd.array(np.random.default_rng(2).standard_normal((1, 4, 5, 5)))
    layer = nn.Conv2DTranspose(6, (3, 2), strides=2, output_padding=1, in_channels=4)
    out = _forward(layer, x)
    assert layer.weight.shape == (4, 6, 3, 2)
    ref = tg.nn.functional.conv_transpose2d(
        x, layer.weight.data(), layer.bias.data(), stride=2, output_padding=1
    )
    np.testing.assert_allclose(out.asnumpy(), ref.numpy(), rtol=1e-6)
    assert out.shape == (1, 6, 12, 11)


def test_norms_pad_and_activations():
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((2, 4, 3, 3)) * 3 + 1
    inorm = _forward(nn.InstanceNorm(in_channels=4), mx.nd.array(xv)).asnumpy()
    np.testing.assert_allclose(inorm.mean(axis=(2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(inorm.var(axis=(2, 3)), 1, atol=1e-3)
    gn = nn.GroupNorm(num_groups=2)
    gn.initialize()
    gn.gamma.set_data(mx.nd.array([2.0, 3.0]))
    out = gn(mx.nd.array(xv)).asnumpy().reshape(2, 2, -1)
    np.testing.assert_allclose(out.std(axis=-1), np.broadcast_to([2.0, 3.0], (2, 2)), rtol=1e-3)
    pad = _forward(nn.ReflectionPad2D(2), mx.nd.array(xv)).asnumpy()
    np.testing.assert_allclose(
        pad, np.pad(xv, ((0, 0), (0, 0), (2, 2), (2, 2)), "reflect"), rtol=1e-6
    )
    v = np.array([-1.0, -0.1, 0.2, 2.0])
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(
        _forward(nn.SELU(), mx.nd.array(v)).asnumpy(),
        np.where(v >= 0, scale * v, scale * alpha * np.expm1(v)),
        rtol=1e-6,
    )
    prelu = nn.PReLU(alpha_initializer=mx.init.Constant(mx.nd.array([0.1, 0.5])), in_channels=2)
    x2 = mx.nd.array([[[-1.0], [-1.0]]])
    np.testing.assert_allclose(_forward(prelu, x2).asnumpy().ravel(), [-0.1, -0.5], rtol=1e-6)


def test_contrib_concurrent_and_model_zoo():
    from tapegrad.compat.mxnet.gluon.contrib import nn as cnn

    both = cnn.HybridConcurrent(axis=1)
    both.add(nn.Dense(2, in_units=3), nn.Dense(4, in_units=3))
    assert _forward(both, mx.nd.ones((5, 3))).shape == (5, 6)
    net = gluon.model_zoo.vision.resnet18_v1(classes=7)
    assert _forward(net, mx.nd.ones((1, 3, 32, 32))).shape == (1, 7)
    with pytest.raises(ValueError, match="pretrained"):
        gluon.model_zoo.vision.resnet18_v1(pretrained=True)


# ------------------------------------------------------------------ mx.nd, mx.np
@pytest.mark.parametrize(
    "shape, codes, expected",
    [
        ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
        ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
        ((2, 3, 4), (0, -3), (2, 12)),
        ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
        ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
        ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ],
)
def test_nd_reshape_special_codes(shape, codes, expected):
    x = mx.nd.arange(int(np.prod(shape))).reshape(shape)
    out = mx.nd.reshape(x, codes)
    assert out.shape == expected
    np.testing.assert_array_equal(out.asnumpy().ravel(), x.asnumpy().ravel())


def test_nd_reshape_reverse_and_np_reshape_copies():
    y = mx.nd.zeros((10, 5, 4))
    assert mx.nd.reshape(y, (-1, 0)).shape == (40, 5)
    assert mx.nd.reshape(y, (-1, 0), reverse=True).shape == (50, 4)
    a = mx.np.ones((2, 3))
    b = a.reshape((3, 2))
    b[0, 0] = 5.0
    assert a[0, 0].item() == 1.0  # mx.np reshape copies, as MXNet's


def test_nd_creation_order_math_and_array_methods(tmp_path):
    ones = mx.nd.ones((2, 2), mx.cpu(), "float64")  # MXNet's positional order
    assert ones.dtype == np.float64 and ones.context == mx.cpu()
    v = np.array([0.3, 0.6])
    for name, ref in (
        ("arcsin", np.arcsin),
        ("arccos", np.arccos),
        ("arctan", np.arctan),
        ("sinh", np.sinh),
        ("cosh", np.cosh),
        ("arctanh", np.arctanh),
        ("log10", np.log10),
        ("cbrt", np.cbrt),
        ("radians", np.radians),
    ):
        np.testing.assert_allclose(
            getattr(mx.nd, name)(mx.nd.array(v)).asnumpy(), ref(v), rtol=1e-6
        )
    np.testing.assert_allclose(
        mx.nd.rcbrt(mx.nd.array([-8.0, 27.0])).asnumpy(), [-0.5, 1 / 3], rtol=1e-6
    )
    x = mx.nd.arange(12).reshape((3, 4))
    np.testing.assert_array_equal(
        x.slice((1, 0), (3, 4), (1, 2)).asnumpy(), x.asnumpy()[1:3, 0:4:2]
    )
    np.testing.assert_array_equal(
        x.take(mx.nd.array([2, 0, 7])).asnumpy(), x.asnumpy()[[2, 0, 2]]
    )  # clipped, as mode="clip"
    u = mx.nd.uniform(2.0, 3.0, shape=(100,))
    assert u.shape == (100,) and u.asnumpy().min() >= 2.0 and u.asnumpy().max() < 3.0
    path = str(tmp_path / "arrays")
    mx.nd.save(path, {"a": x, "b": ones})
    loaded = mx.nd.load(path)
    assert sorted(loaded) == ["a", "b"] and isinstance(loaded["a"], mx.nd.NDArray)
    np.testing.assert_array_equal(loaded["a"].asnumpy(), x.asnumpy())
    mx.nd.reset_arrays(x, ones, num_arrays=2)
    assert not x.asnumpy().any() and not ones.asnumpy().any()


# ------------------------------------------------------------------ mx.test_utils and friends
def test_test_utils_helpers(monkeypatch):
    test_utils.assert_almost_equal(mx.nd.array([1.0, 2.0]), np.array([1.00001, 2.0]))
    with pytest.raises(AssertionError):
        test_utils.assert_almost_equal(np.array([1.0]), np.array([1.001]))  # float64: 1e-5
    test_utils.assert_almost_equal(np.ones((1, 3), "float32"), np.ones(3, "float32"))
    assert test_utils.same(mx.nd.array([1, 2]), np.array([1.0, 2.0]))
    assert not test_utils.same(np.array([1.0]), np.array([1.0 + 1e-12]))
    shape = test_utils.rand_shape_nd(4, dim=3)
    assert len(shape) == 4 and all(1 <= d <= 3 for d in shape)
    dense = test_utils.rand_ndarray((2, 3))
    assert isinstance(dense, mx.nd.NDArray) and dense.stype == "default"
    with pytest.raises(ValueError, match="dense"):
        test_utils.rand_ndarray((2, 3), stype="csr")
    monkeypatch.setenv("TG_SEMANTICS_TEST", "before")
    with test_utils.environment({"TG_SEMANTICS_TEST": "inside", "TG_SEMANTICS_NEW": "1"}):
        assert os.environ["TG_SEMANTICS_TEST"] == "inside"
    assert os.environ["TG_SEMANTICS_TEST"] == "before" and "TG_SEMANTICS_NEW" not in os.environ
    assert test_utils.default_context() == mx.cpu()

    @test_utils.use_np
    def inside():
        return mx.util.is_np_array()

    assert inside() and not mx.util.is_np_array()
    assert issubclass(mx.base.MXNetError, RuntimeError)


_SCRIPT = """
import mxnet as mx
import helper_next_to_me
try:
    import mxnet.module
except ModuleNotFoundError as exc:
    print("HINT", exc)
print("OK", helper_next_to_me.VALUE, type(mx.nd.ones((1,))).__name__)
"""


def test_run_puts_the_script_dir_first_and_missing_submodules_hint(tmp_path):
    (tmp_path / "helper_next_to_me.py").write_text("VALUE = 42\n")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    out = subprocess.run(
        [sys.executable, "-m", "tapegrad.compat.run", "mxnet", str(script)],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout
    assert "OK 42 NDArray" in out
    assert "HINT" in out and "the Module API is not provided" in out


# ------------------------------------------------------------------ gluon.data.vision
def test_vision_transforms():
    from tapegrad.compat.mxnet.gluon.data.vision import transforms as T

    raw = (np.arange(4 * 6 * 3).reshape(4, 6, 3) * 5 % 256).astype(np.uint8)
    img = mx.nd.array(raw, dtype="uint8")
    out = T.Compose([T.ToTensor(), T.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.5])])(img)
    expected = (
        np.moveaxis(raw / 255.0, -1, 0) - np.array([0.5, 0.4, 0.3])[:, None, None]
    ) / np.array([0.2, 0.25, 0.5])[:, None, None]
    assert isinstance(out, mx.nd.NDArray) and out.shape == (3, 4, 6)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    # nearest neighbour halving picks every other pixel; bilinear keeps a constant image
    np.testing.assert_array_equal(T.Resize((3, 2), interpolation=0)(img).asnumpy(), raw[::2, ::2])
    flat = mx.nd.array(np.full((5, 7, 3), 9, np.uint8), dtype="uint8")
    np.testing.assert_array_equal(
        T.Resize(3, keep_ratio=True)(flat).asnumpy(), np.full((3, 4, 3), 9)
    )
    np.testing.assert_array_equal(T.CenterCrop((2, 2))(img).asnumpy(), raw[1:3, 2:4])


def test_vision_datasets_read_local_files(tmp_path):
    import struct

    from tapegrad.compat.mxnet.gluon.data import vision

    images = np.arange(3 * 28 * 28, dtype=np.uint8).reshape(3, 28, 28)
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(
        struct.pack(">IIII", 2051, 3, 28, 28) + images.tobytes()
    )
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(
        struct.pack(">II", 2049, 3) + bytes([7, 1, 4])
    )
    ds = vision.MNIST(str(tmp_path), train=False)
    image, label = ds[2]
    assert len(ds) == 3 and label == 4 and image.shape == (28, 28, 1)
    np.testing.assert_array_equal(image.asnumpy()[..., 0], images[2])
    batch = np.concatenate(
        [np.array([[3]], np.uint8), np.arange(3072).reshape(1, -1) % 256], axis=1
    ).astype(np.uint8)
    (tmp_path / "test_batch.bin").write_bytes(batch.tobytes())
    image, label = vision.CIFAR10(str(tmp_path), train=False)[0]
    assert label == 3 and image.shape == (32, 32, 3)
    np.testing.assert_array_equal(
        image.asnumpy()[..., 1], (np.arange(1024, 2048) % 256).reshape(32, 32)
    )
    with pytest.raises(FileNotFoundError, match="downloads nothing"):
        vision.FashionMNIST(str(tmp_path / "missing"))


def test_mx_image_operations(tmp_path):
    raw = (np.arange(6 * 8 * 3).reshape(6, 8, 3) % 256).astype(np.uint8)
    img = mx.nd.array(raw, dtype="uint8")
    assert mx.image.imresize(img, 4, 3).shape == (3, 4, 3)
    assert mx.image.resize_short(img, 3).shape == (3, 4, 3)
    crop, box = mx.image.center_crop(img, (4, 2))
    assert box == (2, 2, 4, 2)
    np.testing.assert_array_equal(crop.asnumpy(), raw[2:4, 2:6])
    norm = mx.image.color_normalize(img, mx.nd.array([1.0, 2.0, 3.0]), mx.nd.array([2.0] * 3))
    np.testing.assert_allclose(norm.asnumpy(), (raw - np.array([1.0, 2.0, 3.0])) / 2.0)
    image_module = pytest.importorskip("PIL.Image")
    path = tmp_path / "x.png"
    image_module.fromarray(raw).save(path)
    np.testing.assert_array_equal(mx.image.imread(str(path)).asnumpy(), raw)
    np.testing.assert_array_equal(
        mx.image.imread(str(path), to_rgb=False).asnumpy(), raw[..., ::-1]
    )


def test_summary_of_a_block_with_nested_outputs(capsys):
    net = gluon.rnn.LSTM(4, input_size=3)
    net.initialize()
    net.summary(mx.nd.ones((2, 5, 3)), net.begin_state(5))
    out = capsys.readouterr().out
    assert "LSTM-1" in out and "(2, 5, 4)" in out and "(1, 5, 4)" in out
