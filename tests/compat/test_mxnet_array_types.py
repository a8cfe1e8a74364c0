"""`mx.nd.NDArray` and `mx.np.ndarray`: their own array types whose methods follow MXNet
1.9.1 (`size` is an int, reshape codes, copies where `mxnet.numpy` copies), the class
flowing through ops, gradients and Gluon."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd


def version(t) -> int:
    """The version counter's value (a one-element list today, an int after issue 8)."""
    v = t._version
    return v[0] if isinstance(v, list) else v


A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.fixture
def nd_mode():
    """Gluon in MXNet 1.x's default (NDArray) mode for the test; restored after."""
    was = mx.npx.is_np_array()
    mx.npx.reset_np()
    yield
    if was:
        mx.npx.set_np()


def test_creation_functions_return_ndarrays():
    for t in (
        mx.nd.array([1, 2]),
        mx.nd.zeros((2,)),
        mx.nd.ones(2),
        mx.nd.full((2,), 3.0),
        mx.nd.arange(3),
        mx.nd.empty((1,)),
        mx.nd.zeros_like(mx.nd.ones(2)),
        mx.nd.random.normal(shape=(2,)),
        mx.nd.random.uniform(shape=2),
    ):
        assert type(t) is mx.nd.NDArray
        assert t.dtype == np.float32
    for t in (
        mx.np.array([1, 2]),
        mx.np.zeros((2,)),
        mx.np.arange(3),
        mx.np.eye(2),
        mx.np.linspace(0, 1, 3),
        mx.np.full_like(mx.np.ones(2), 2.0),
        mx.np.random.normal(size=(2,)),
        mx.np.random.uniform(size=2),
    ):
        assert type(t) is mx.np.ndarray
    assert issubclass(mx.np.ndarray, mx.nd.NDArray) and issubclass(mx.nd.NDArray, tg.Tensor)


def test_ops_keep_the_class_and_mixing_nd_with_np_gives_np():
    x, n = mx.nd.array([1.0, 2.0]), mx.np.array([3.0, 4.0])
    assert type(x * 2) is mx.nd.NDArray and type(tg.exp(x)) is mx.nd.NDArray
    assert type(x + tg.ones(2)) is mx.nd.NDArray  # a facade class wins over tg.Tensor
    out = x + n
    assert type(out) is mx.np.ndarray
    np.testing.assert_array_equal(out.asnumpy(), [4.0, 6.0])
    assert type(mx.nd.relu(x)) is mx.nd.NDArray and type(mx.np.exp(n)) is mx.np.ndarray


def test_size_is_an_int_and_core_tensor_keeps_size_method():
    x = mx.nd.array(A)
    assert x.size == 24 and isinstance(x.size, int)
    assert mx.np.array(A).size == 24
    assert tg.tensor(A).size() == (2, 3, 4)  # PyTorch's meaning stays in the core


@pytest.mark.parametrize(
    ("codes", "kwargs", "shape"),
    [
        ((0, -1), {}, (2, 12)),
        ((-1,), {}, (24,)),
        ((0, 0, 2, 2), {}, (2, 3, 2, 2)),
        ((-2,), {}, (2, 3, 4)),
        ((2, -2), {}, (2, 3, 4)),  # 2 takes one input dim, -2 copies the other two
        ((-3, 4), {}, (6, 4)),
        ((0, -3), {}, (2, 12)),
        ((-4, 1, 2, -2), {}, (1, 2, 3, 4)),
        ((-4, -1, 1, 0, 0), {}, (2, 1, 3, 4)),
        ((2, 0, 0, 1), {}, (2, 3, 4, 1)),
        ((-1, 0), {"reverse": True}, (6, 4)),  # 0 copies the LAST input dim when reversed
    ],
)
def test_nd_reshape_takes_mxnets_special_codes(codes, kwargs, shape):
    x = mx.nd.array(A)
    y = x.reshape(codes, **kwargs)
    assert y.shape == shape and type(y) is mx.nd.NDArray
    np.testing.assert_array_equal(y.asnumpy().reshape(-1), A.reshape(-1))
    assert mx.nd.reshape(x, codes, **kwargs).shape == shape
    assert x.reshape(shape=codes, **kwargs).shape == shape


def test_nd_reshape_errors_name_the_codes():
    x = mx.nd.array(A)
    with pytest.raises(ValueError, match=r"codes \(5, -1\)|infer"):
        x.reshape((5, -1))
    with pytest.raises(ValueError, match="-4 splits dimension 2"):
        x.reshape((-4, 3, 1, -2))
    with pytest.raises(ValueError, match="invalid code -7"):
        x.reshape((-7,))


def test_nd_reshape_is_a_view_np_reshape_and_transpose_copy():
    x = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    view = x.reshape((3, 2))
    x[0, 0] = 100.0
    assert view.asnumpy()[0, 0] == 100.0  # NDArray.reshape: a view, as MXNet
    n = mx.np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    copies = [
        n.reshape(3, 2),
        n.reshape((3, 2)),
        n.transpose(),
        n.T,
        mx.np.reshape(n, (6,)),
        mx.np.transpose(n),
        n.flatten(),
    ]
    n[0, 0] = 100.0
    for c in copies:  # mxnet.numpy's reshape/transpose never share memory
        assert c.asnumpy().reshape(-1)[0] == 1.0
        assert type(c) is mx.np.ndarray
    assert [c.shape for c in copies] == [(3, 2), (3, 2), (3, 2), (3, 2), (6,), (3, 2), (6,)]


def test_transpose_and_T_permute_all_axes():
    x, n = mx.nd.array(A), mx.np.array(A)
    for a in (x, n):
        np.testing.assert_array_equal(a.T.asnumpy(), A.T)
        np.testing.assert_array_equal(a.transpose().asnumpy(), A.T)
        np.testing.assert_array_equal(a.transpose((1, 0, 2)).asnumpy(), A.transpose(1, 0, 2))
    np.testing.assert_array_equal(n.transpose(2, 0, 1).asnumpy(), A.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.transpose(axes=(2, 0, 1)).asnumpy(), A.transpose(2, 0, 1))
    v = mx.nd.array([1.0, 2.0])
    assert v.T is v  # MXNet: an array of fewer than 2 axes is returned itself


def test_reductions_and_shape_methods_follow_mxnet():
    x, n = mx.nd.array(A), mx.np.array(A)
    np.testing.assert_array_equal(x.max(axis=1).asnumpy(), A.max(axis=1))
    np.testing.assert_array_equal(x.min(axis=(0, 2)).asnumpy(), A.min(axis=(0, 2)))
    np.testing.assert_array_equal(x.max(axis=1, exclude=True).asnumpy(), A.max(axis=(0, 2)))
    np.testing.assert_array_equal(
        n.max(axis=2, keepdims=True).asnumpy(), A.max(axis=2, keepdims=True)
    )
    np.testing.assert_allclose(n.std(axis=1).asnumpy(), A.std(axis=1), rtol=1e-6)
    np.testing.assert_allclose(n.var().asnumpy(), A.var(), rtol=1e-6)  # ddof=0
    np.testing.assert_allclose(n.var(ddof=1).asnumpy(), A.var(ddof=1), rtol=1e-6)
    parts = x.split(3)  # num_outputs along axis 1 (MXNet's default)
    assert [p.shape for p in parts] == [(2, 1, 4)] * 3 and type(parts[0]) is mx.nd.NDArray
    assert [p.shape for p in x.split(2, axis=2, squeeze_axis=False)] == [(2, 3, 2)] * 2
    np.testing.assert_array_equal(x.repeat(2, axis=0).asnumpy(), np.repeat(A, 2, axis=0))
    assert x.flatten().shape == (2, 12) and n.flatten().shape == (24,)
    assert x.expand_dims(1).shape == (2, 1, 3, 4) and type(x.zeros_like()) is mx.nd.NDArray
    assert x.ones_like().asnumpy().sum() == 24 and type(n.ones_like()) is mx.np.ndarray
    assert mx.nd.ones((3, 1)).broadcast_like(mx.nd.ones((3, 4))).shape == (3, 4)
    e = np.exp(A - A.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(x.softmax().asnumpy(), e / e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(
        x.log_softmax(axis=1).asnumpy().sum(),
        np.log(np.exp(A) / np.exp(A).sum(1, keepdims=True)).sum(),
        rtol=1e-5,
    )


def test_context_copy_and_scalar_methods():
    x = mx.nd.array([1.0, 2.0])
    assert x.context == mx.cpu() and x.ctx == mx.cpu(0)
    assert x.as_in_context(mx.cpu()).asnumpy().tolist() == [1.0, 2.0]
    y = x.copyto(mx.cpu())
    assert type(y) is mx.nd.NDArray and y.asnumpy().tolist() == [1.0, 2.0]
    target = mx.nd.zeros((2,))
    v0 = version(target)
    assert x.copyto(target) is target
    assert target.asnumpy().tolist() == [1.0, 2.0]
    assert version(target) == v0 + 1  # an in-place write bumps the version counter
    with pytest.raises(ValueError, match="does not match"):
        x.copyto(mx.nd.zeros((3,)))
    assert mx.nd.array([3.5]).asscalar() == 3.5
    with pytest.raises(ValueError, match="one-element"):
        x.asscalar()
    assert type(x.as_np_ndarray()) is mx.np.ndarray
    assert type(mx.np.array([1.0]).as_nd_ndarray()) is mx.nd.NDArray
    assert x.astype("float64").dtype == np.float64 and type(x.astype("int32")) is mx.nd.NDArray
    assert isinstance(x.asnumpy(), np.ndarray)


def test_grad_backward_and_detach_have_the_arrays_class():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    assert type(x.grad) is mx.nd.NDArray and x.grad.asnumpy().tolist() == [0.0, 0.0, 0.0]
    with autograd.record():
        y = x * x
    y.backward(out_grad=mx.nd.array([1.0, 10.0, 100.0]))
    assert type(x.grad) is mx.nd.NDArray
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 40.0, 600.0])
    with autograd.record():
        z = (x * x * x).sum()
    z.backward()  # grad_req "write": overwritten
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 12.0, 27.0])
    assert type(x.detach()) is mx.nd.NDArray
    n = mx.np.array([2.0])
    n.attach_grad()
    with autograd.record():
        w = n.copy() * 3  # copy is recorded
    w.backward()
    assert type(n.grad) is mx.np.ndarray and n.grad.asnumpy().tolist() == [3.0]
    g = autograd.grad(_recorded_square(n), [n])[0]
    assert type(g) is mx.np.ndarray and g.asnumpy().tolist() == [4.0]


def _recorded_square(n):
    with autograd.record():
        return (n * n).sum()


def test_as_np_ndarray_of_a_recorded_array_keeps_the_graph():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (x * x).as_np_ndarray()
        loss = (y * 3).sum()
    assert type(y) is mx.np.ndarray
    loss.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, 12.0])


def test_arrays_of_two_frameworks_in_one_op_raise_naming_both():
    import tapegrad.compat.megengine as mge

    with pytest.raises(TypeError, match="NDArray.*megengine._tensor.Tensor"):
        mx.nd.array([1.0]) + mge.tensor([1.0])


def test_gluon_parameters_are_ndarrays_or_np_arrays_in_np_mode(nd_mode):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    assert type(net.weight.data()) is mx.nd.NDArray
    out = net(mx.nd.ones((1, 3)))
    assert type(out) is mx.nd.NDArray and out.asnumpy().tolist() == [[3.0, 3.0]]
    with autograd.record():
        loss = net(mx.np.ones((1, 3))).sum()
    assert type(loss) is mx.np.ndarray
    loss.backward()
    grad = net.weight.grad()
    assert type(grad) is mx.nd.NDArray and grad.asnumpy().tolist() == [[1.0] * 3] * 2
    mx.npx.set_np()
    try:
        assert mx.npx.is_np_array()
        np_net = mx.gluon.nn.Dense(2, in_units=3)
        np_net.initialize()
        assert type(np_net.weight.data()) is mx.np.ndarray
    finally:
        mx.npx.reset_np()
    assert not mx.npx.is_np_array()


def test_gluon_set_data_zero_grad_and_batches_use_the_public_write():
    p = mx.gluon.Parameter("w", shape=(2,))
    p.initialize(mx.init.Zero())
    v0 = version(p.data())
    p.set_data(mx.nd.array([1.0, 2.0]))
    assert p.data().asnumpy().tolist() == [1.0, 2.0] and version(p.data()) == v0 + 1
    with autograd.record():
        (p.data() * 5).sum().backward()
    assert p.grad().asnumpy().tolist() == [5.0, 5.0]
    p.zero_grad()
    assert p.grad().asnumpy().tolist() == [0.0, 0.0]
    ds = mx.gluon.data.ArrayDataset(np.arange(6.0).reshape(3, 2), np.arange(3.0))
    xb, yb = next(iter(mx.gluon.data.DataLoader(ds, batch_size=2)))
    assert isinstance(xb, mx.nd.NDArray) and isinstance(yb, mx.nd.NDArray)
    np.testing.assert_array_equal(xb.asnumpy(), [[0.0, 1.0], [2.0, 3.0]])


def test_clip_global_norm_scales_in_place():
    a, b = mx.nd.array([3.0, 0.0]), mx.nd.array([0.0, 4.0])
    total = mx.gluon.utils.clip_global_norm([a, b], 1.0)
    assert total == pytest.approx(5.0)
    np.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), [0.0, 0.8], rtol=1e-6)


def test_batchnorm_running_statistics_follow_mxnet(nd_mode):
    bn = mx.gluon.nn.BatchNorm(in_channels=2, momentum=0.9)
    bn.initialize()
    x = np.array([[1.0, 2.0], [3.0, 6.0]], dtype=np.float32)
    with autograd.record():
        bn(mx.nd.array(x))
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.1 * x.mean(0), rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.data().asnumpy(), 0.9 + 0.1 * x.var(0), rtol=1e-6)


def test_arrays_print_as_mxnet_prints_them():
    # they printed as core tensors, `tensor([[1., 2.], [3., 4.]])`
    a = mx.nd.array([[1, 2], [3, 4]])
    assert repr(a) == str(a) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"
    assert repr(mx.np.array([1, 2])) == "array([1., 2.])"  # float32: no dtype shown
    assert repr(mx.np.array([1, 2], dtype="float64")) == "array([1., 2.], dtype=float64)"
    assert str(mx.np.array([1.5, 2])) == "[1.5 2. ]"
