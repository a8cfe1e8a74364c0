"""The MXNet code of the seed documents (000, 001), run through the MXNet facade.

Each test body is the seed's code with only the import line changed
(`import mxnet as mx` -> `from tapegrad.compat import mxnet as mx`), followed by checks of
the numbers the text states.
"""

import math

import numpy as np
import pytest

import tapegrad as tg


def test_attach_grad_record_backward_y_2x2():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    x = mx.np.array([1, 2, 3])
    x.attach_grad()
    with autograd.record():
        y = 2 * x**2
    y.backward()
    print(x.grad)

    # "expected output [ 4.  8. 12.]"
    assert x.dtype == np.float32  # MXNet's default for Python numbers
    np.testing.assert_array_equal(x.grad.asnumpy(), [4.0, 8.0, 12.0])


def test_record_scope_of_seed_000_nd_random_normal():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd, nd

    def f(a):
        return a * a * 3

    a = nd.random.normal(shape=1)
    a.attach_grad()
    with autograd.record():
        c = f(a)
    c.backward()
    assert a.shape == (1,) and a.dtype == np.float32
    np.testing.assert_allclose(a.grad.asnumpy(), 6 * a.asnumpy(), rtol=1e-6)
    # outside record() nothing is recorded, and backward says where to compute instead
    d = f(a)
    with pytest.raises(RuntimeError, match="record"):
        d.backward()
    assert mx.autograd.is_recording() is False


def test_backward_inside_record_scope_does_not_crash():
    # seed 000: `with autograd.record(mode == "train"): losses.backward()`
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record(True):
        losses = (x * x).sum()
        losses.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])


def test_recording_state_scope_set_recording_set_training():
    from tapegrad.compat.mxnet import autograd

    assert (autograd.is_recording(), autograd.is_training()) == (False, False)
    prev = autograd.set_recording(True)
    assert prev is False and autograd.is_recording()
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False and autograd.is_training()
    autograd.set_training(False)
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert autograd.is_recording() and not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
    assert (autograd.is_recording(), autograd.is_training()) == (False, False)


def _regression_net():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd
    from tapegrad.compat.mxnet.gluon.loss import L2Loss
    from tapegrad.compat.mxnet.gluon.nn import Dense, HybridSequential

    # 定义网络
    net = HybridSequential()
    net.add(Dense(units=3))
    net.add(Dense(units=1))
    net.initialize()
    # 定义损失
    loss_fn = L2Loss()
    # 创建模拟数据
    x = mx.np.array([[0.3, 0.5]])
    y = mx.np.array([[1.5]])
    with autograd.record():
        y_hat = net(x)
        loss = loss_fn(y_hat, y)
    loss.backward()
    return net, x, y, y_hat, loss


def test_gluon_regression_dense3_dense1_l2loss_weight_grad():
    net, x, y, y_hat, loss = _regression_net()
    grad = net[0].weight.grad()

    # the same numbers by hand: L = 0.5 * (y_hat - y)^2, y_hat = W1 (W0 x + b0) + b1
    w0, b0 = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    w1, b1 = net[1].weight.data().asnumpy(), net[1].bias.data().asnumpy()
    xs, ys = x.asnumpy(), y.asnumpy()
    h = xs @ w0.T + b0
    out = h @ w1.T + b1
    np.testing.assert_allclose(y_hat.asnumpy(), out, rtol=1e-6)
    np.testing.assert_allclose(loss.asnumpy(), 0.5 * (out - ys).ravel() ** 2, rtol=1e-5)
    d_out = out - ys  # dL/dy_hat
    np.testing.assert_allclose(grad.asnumpy(), (d_out @ w1).T @ xs, rtol=1e-5, atol=1e-8)
    assert grad.shape == (3, 2) and loss.shape == (1,)
    # deferred shape inference: shapes became known at the first forward
    assert net[0].weight.shape == (3, 2) and net[1].weight.shape == (1, 3)
    # MXNet's default initializer: U(-0.07, 0.07) weights, zero biases
    assert np.abs(w0).max() <= 0.07 and not b0.any()


def test_gluon_grad_req_write_overwrites_and_null_skips():
    from tapegrad.compat.mxnet import autograd
    from tapegrad.compat.mxnet.gluon.loss import L2Loss

    net, x, y, _, _ = _regression_net()
    first = net[0].weight.grad().asnumpy().copy()
    loss_fn = L2Loss()
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    np.testing.assert_allclose(net[0].weight.grad().asnumpy(), first, rtol=1e-6)  # "write"

    net[0].weight.grad_req = "null"
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    with pytest.raises(RuntimeError, match="grad_req is 'null'"):
        net[0].weight.grad()
    assert net[0].bias.grad() is not None  # the others still get theirs

    params = net.collect_params()
    params.setattr("grad_req", "add")
    assert {p.grad_req for p in params.values()} == {"add"}
    # Gluon 1.x names (dense<k>_weight ...): two layers, a weight and a bias each
    assert [k.rsplit("_", 1)[1] for k in sorted(params)] == ["bias", "weight"] * 2


def test_dropout_inside_and_outside_record():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    tg.manual_seed(0)
    dropout = mx.gluon.nn.Dropout(rate=0.5)
    data = mx.np.ones(shape=(3, 3))
    output = dropout(data)
    is_training = autograd.is_training()
    print("is_training:", is_training, output)
    assert is_training is False
    np.testing.assert_array_equal(output.asnumpy(), np.ones((3, 3)))

    with autograd.record():
        output = dropout(data)
    print("is_training:", is_training, output)
    values = set(np.unique(output.asnumpy()).tolist())
    assert values <= {0.0, 2.0} and values == {0.0, 2.0}  # dropped, the rest scaled by 1/0.5

    with autograd.record(), autograd.pause():
        np.testing.assert_array_equal(dropout(data).asnumpy(), np.ones((3, 3)))
    with autograd.train_mode():
        assert set(np.unique(dropout(data).asnumpy()).tolist()) <= {0.0, 2.0}


def test_python_control_flow_piecewise_gradients():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    def f(x):
        y = x  # 稍后会修改 y，但仍需保留 x
        if x < 0.75:
            # num_loops 可变，因为它依赖 x
            num_loops = math.floor(1 / (1 - x.item()))
            for i in range(num_loops):  # noqa: B007 (the seed's code, verbatim)
                y = y * x  # 提高多项式次数
        else:
            # 否则水平直线
            y = y * 0
        return y

    def get_grad(f, x):
        x.attach_grad()
        with autograd.record():
            y = f(x)
        y.backward()
        return x.grad

    xs = mx.np.arange(0.0, 1.0, step=0.1)
    grads = [get_grad(f, x).item() for x in xs]
    print(grads)

    # pieces: 2x on [0, 1/2), 3x^2 on [1/2, 2/3), 4x^3 on [2/3, 3/4), 0 after
    expected = []
    for v in np.arange(0.0, 1.0, 0.1, dtype=np.float32).astype(np.float64):
        n = math.floor(1 / (1 - np.float32(v))) if v < 0.75 else None
        expected.append(0.0 if n is None else (n + 1) * v**n)
    np.testing.assert_allclose(grads, expected, rtol=1e-5, atol=1e-7)
    assert grads[6] == pytest.approx(1.08, rel=1e-5)  # "x = 0.6: 3x^2 = 1.08"


def test_head_gradient_through_numpy_192():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    x = mx.np.array(
        [
            2,
        ]
    )
    x.attach_grad()
    # 在 mxnet 中，在 autograd 下计算 y
    with autograd.record():
        y = x**3
    # 在 mxnet 外部计算 dz/dy
    y_np = y.asnumpy()
    z_np = y_np**2  # noqa: F841
    dzdy_np = 2 * y_np
    # 在 mxnet 内部计算 dz/dx，给定 dz/dy
    dzdy = mx.np.array(dzdy_np)
    y.backward(dzdy)
    print(x.grad)
    np.testing.assert_array_equal(x.grad.asnumpy(), [192.0])


def test_mark_variables_and_autograd_grad_create_graph():
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet import autograd

    x = mx.np.array([1.0, 2.0])
    gx = mx.np.zeros((2,))
    autograd.mark_variables([x], [gx], grad_reqs="add")
    for _ in range(2):
        with autograd.record():
            y = (x**3).sum()
        y.backward()
    assert x.grad is gx
    np.testing.assert_array_equal(gx.asnumpy(), [6.0, 24.0])  # "add" accumulated twice

    z = mx.np.array([3.0])
    z.attach_grad()
    with autograd.record():
        w = z**3
        dz = autograd.grad(w, [z], create_graph=True)
    assert isinstance(dz, list) and dz[0].item() == pytest.approx(27.0)
    dz[0].backward()
    assert z.grad.item() == pytest.approx(18.0)  # d/dz 3z^2 = 6z
