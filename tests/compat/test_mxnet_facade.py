"""The MXNet facade's mappings and defaults: arrays, NumPy semantics, Gluon parameters,
layers, losses, the Trainer's update, and the errors of misuse."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd, gluon
from tapegrad.compat.mxnet.gluon import nn


def test_creation_defaults_float32_and_ctx():
    assert mx.np.array([1, 2]).dtype == np.float32
    assert mx.np.array(np.array([1, 2])).dtype == np.int64  # NumPy arrays keep theirs
    assert mx.nd.array(np.array([1, 2])).dtype == np.float32  # mx.nd makes them float32
    assert mx.np.arange(3).dtype == np.float32
    assert mx.nd.random.normal(shape=(2, 3)).shape == (2, 3)
    assert mx.nd.random.normal().shape == (1,)
    z = mx.nd.zeros((2,), ctx=mx.cpu())
    assert z.context == mx.cpu() and z.ctx.device_type == "cpu"
    assert z.as_in_context(mx.cpu()) is z
    with pytest.raises(ValueError, match="one device"):
        mx.nd.zeros((1,), ctx=[mx.cpu(), mx.cpu(1)])


def test_numpy_semantics_where_pytorch_differs():
    a = mx.np.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(mx.np.transpose(a).asnumpy(), a.asnumpy().T)
    parts = mx.np.split(mx.np.arange(6), [2, 5])
    assert [p.asnumpy().tolist() for p in parts] == [[0, 1], [2, 3, 4], [5]]
    with pytest.raises(ValueError, match="does not divide into 4 equal sections"):
        mx.np.split(a, 4, axis=1)
    np.testing.assert_array_equal(
        mx.np.repeat(a, 2, axis=1).asnumpy(), np.repeat(a.asnumpy(), 2, axis=1)
    )
    np.testing.assert_array_equal(mx.np.flip(a).asnumpy(), np.flip(a.asnumpy()))
    assert mx.np.std(a).item() == pytest.approx(np.std(a.asnumpy()))
    np.testing.assert_array_equal(mx.np.max(a, axis=1).asnumpy(), [3, 6])
    np.testing.assert_array_equal(
        mx.np.pad(a, ((1, 0), (0, 2))).asnumpy(), np.pad(a.asnumpy(), ((1, 0), (0, 2)))
    )
    np.testing.assert_array_equal(
        mx.np.dot(a, mx.np.transpose(a)).asnumpy(), a.asnumpy() @ a.asnumpy().T
    )
    n = mx.nd.ones((2, 4))
    assert [p.shape for p in mx.nd.split(n, num_outputs=2)] == [(2, 2), (2, 2)]  # axis 1
    assert mx.nd.concat(n, n).shape == (2, 8)


def test_repeat_and_split_are_differentiable():
    x = mx.np.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = (mx.np.repeat(x, 3) * mx.np.arange(6)).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0 + 1 + 2, 3 + 4 + 5])


def test_parameter_lifecycle_and_errors():
    p = gluon.Parameter("w", shape=(2, 0), allow_deferred_init=True)
    assert p.grad_req == "write"
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.data()
    p.initialize()
    with pytest.raises(gluon.DeferredInitializationError, match="first forward"):
        p.data()
    with pytest.raises(ValueError, match="must be one of"):
        p.grad_req = "sometimes"
    q = gluon.Parameter("q", shape=(2,), init=mx.init.One())
    q.initialize()
    np.testing.assert_array_equal(q.data().asnumpy(), [1, 1])
    with pytest.warns(UserWarning, match="already initialized"):
        q.initialize()
    with pytest.raises(ValueError, match="set_data got shape"):
        q.set_data(mx.np.ones((3,)))
    q.set_data(mx.np.array([2.0, 3.0]))
    with autograd.record():
        (q.data() ** 2).sum().backward()
    np.testing.assert_array_equal(q.grad().asnumpy(), [4, 6])
    q.zero_grad()
    assert not q.grad().asnumpy().any()
    with pytest.raises(ValueError, match="invalid shape"):
        gluon.Parameter("r", shape=(0, 2)).initialize()


def test_parameters_are_record_scope_variables():
    dense = nn.Dense(2, in_units=3)
    dense.initialize()
    out = dense(mx.np.ones((1, 3)))  # outside record(): nothing recorded
    assert out.grad_fn is None
    with pytest.raises(RuntimeError, match="record"):
        out.sum().backward()


def test_deferred_shape_mismatch_is_reported():
    dense = nn.Dense(2, in_units=3)
    dense.initialize()
    with pytest.raises(RuntimeError, match="input has 4 features"):
        dense(mx.np.ones((1, 4)))


def test_blocks_follow_is_training_batchnorm():
    bn = nn.BatchNorm()
    bn.initialize()
    x = mx.np.array(np.arange(12, dtype="float32").reshape(3, 2, 2))
    np.testing.assert_allclose(bn(x).asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    with autograd.record():
        y = bn(x)
    assert abs(y.asnumpy().mean()) < 1e-5  # batch statistics in training mode
    arr = x.asnumpy()
    np.testing.assert_allclose(
        bn.running_mean.data().asnumpy(), 0.1 * arr.mean(axis=(0, 2)), rtol=1e-5
    )
    np.testing.assert_allclose(
        bn.running_var.data().asnumpy(), 0.9 + 0.1 * arr.var(axis=(0, 2)), rtol=1e-5
    )


def test_losses_match_their_formulas():
    pred = mx.np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.7]])
    label = mx.np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])
    p, t = pred.asnumpy(), label.asnumpy()
    np.testing.assert_allclose(
        gluon.loss.L2Loss()(pred, label).asnumpy(), (0.5 * (p - t) ** 2).mean(axis=1), rtol=1e-6
    )
    np.testing.assert_allclose(
        gluon.loss.L1Loss()(pred, label).asnumpy(), np.abs(p - t).mean(axis=1), rtol=1e-6
    )
    sig = 1 / (1 + np.exp(-p))
    bce = -(t * np.log(sig) + (1 - t) * np.log(1 - sig))
    np.testing.assert_allclose(
        gluon.loss.SigmoidBCELoss()(pred, label).asnumpy(), bce.mean(axis=1), rtol=1e-5
    )
    logp = p - np.log(np.exp(p).sum(axis=1, keepdims=True))
    ce = gluon.loss.SoftmaxCrossEntropyLoss()(pred, mx.np.array([2, 0]))
    np.testing.assert_allclose(ce.asnumpy(), [-logp[0, 2], -logp[1, 0]], rtol=1e-5)


def test_trainer_rescales_by_batch_size_and_keeps_grads():
    w = gluon.Parameter("w", shape=(2,), init=mx.init.Constant(1.0))
    w.initialize()
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.5, "wd": 0.1})
    with autograd.record():
        (w.data() * mx.np.array([4.0, 8.0])).sum().backward()
    trainer.step(batch_size=4)
    # MXNet: w -= lr * (grad / batch_size + wd * w)
    np.testing.assert_allclose(
        w.data().asnumpy(), [1 - 0.5 * (1 + 0.1), 1 - 0.5 * (2 + 0.1)], rtol=1e-6
    )
    np.testing.assert_array_equal(w.grad().asnumpy(), [4.0, 8.0])  # left as backward wrote it
    assert trainer.learning_rate == 0.5
    trainer.set_learning_rate(0.1)
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(0.1)


def test_trainer_skips_null_params_and_validates_arguments():
    net = nn.Dense(1, in_units=2)
    net.initialize(mx.init.One())
    net.weight.grad_req = "null"
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})
    with autograd.record():
        net(mx.np.ones((3, 2))).sum().backward()
    trainer.step(3)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), [[1, 1]])
    assert net.bias.data().item() != 0
    with pytest.raises(ValueError, match=r"unknown optimizer 'lbfgs'; known: \['adadelta'"):
        gluon.Trainer(net.collect_params(), "lbfgs")
    with pytest.raises(ValueError, match=r"unknown sgd options \['betas'\]"):
        gluon.Trainer(net.collect_params(), "sgd", {"betas": (0.9, 0.9)})
    with pytest.raises(TypeError, match="Gluon Parameters"):
        gluon.Trainer([tg.ones(2)], "sgd")


def test_lstm_matches_a_hand_written_cell():
    lstm = gluon.rnn.LSTM(2, input_size=3)
    lstm.initialize(mx.init.Uniform(0.5))
    x = mx.np.array(np.random.default_rng(0).normal(size=(4, 1, 3)).astype("float32"))
    out = lstm(x)
    wi, wh = lstm.l0_i2h_weight.data().asnumpy(), lstm.l0_h2h_weight.data().asnumpy()
    b = lstm.l0_i2h_bias.data().asnumpy() + lstm.l0_h2h_bias.data().asnumpy()
    h, c = np.zeros((1, 2)), np.zeros((1, 2))

    def sig(v):
        return 1 / (1 + np.exp(-v))

    for t in range(4):
        i, f, g, o = np.split(x.asnumpy()[t] @ wi.T + h @ wh.T + b, 4, axis=1)
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
        np.testing.assert_allclose(out.asnumpy()[t], h, rtol=1e-5, atol=1e-6)


def test_custom_block_and_collect_params_select():
    class Net(nn.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.hidden = nn.Dense(4, activation="relu")
                self.out = nn.Dense(1)

        def forward(self, x):
            return self.out(self.hidden(x))

    net = Net(prefix="net_")
    net.initialize(mx.init.Xavier())
    net.hybridize()  # accepted, no effect
    assert net(mx.np.ones((2, 3))).shape == (2, 1)
    # Gluon 1.x names: the parent's prefix, then the class name and a counter
    assert sorted(net.collect_params(".*weight")) == ["net_dense0_weight", "net_dense1_weight"]
    limit = np.sqrt(3 / ((3 + 4) / 2))
    assert np.abs(net.hidden.weight.data().asnumpy()).max() <= limit

    class Broken(nn.Block):
        def __init__(self):
            self.d = nn.Dense(1)

    with pytest.raises(RuntimeError, match="super\\(\\).__init__\\(\\)"):
        Broken()


def test_shared_block_parameters_are_listed_and_updated_once():
    shared = nn.Dense(2, in_units=2, prefix="shared_")
    net = nn.Sequential()
    net.add(shared, shared)
    net.initialize(mx.init.One())
    assert sorted(net.collect_params()) == ["shared_bias", "shared_weight"]
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        net(mx.np.ones((1, 2))).sum().backward()
    # h = W x = [2, 2]; dW = outer(1, h) + outer(W^T 1, x) = 2 + 2 (both uses add up)
    np.testing.assert_allclose(shared.weight.grad().asnumpy(), np.full((2, 2), 4.0))
    trainer.step(1)
    np.testing.assert_allclose(shared.weight.data().asnumpy(), np.full((2, 2), 0.6), rtol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "layout"),
    [
        ({"kernel_size": (1, 3, 2)}, "NCDHW"),
        ({"kernel_size": 3, "strides": 2, "padding": 1, "output_padding": 1}, "NCDHW"),
        ({"kernel_size": (2, 2, 3), "groups": 2, "dilation": (1, 2, 1)}, "NCDHW"),
        ({"kernel_size": 2, "strides": (1, 2, 2)}, "NDHWC"),
    ],
)
def test_conv3d_transpose_matches_torch(kwargs, layout):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 4, 3, 4, 5))
    layer = nn.Conv3DTranspose(6, layout=layout, in_channels=4, **kwargs)
    layer.initialize(mx.init.Xavier())
    layer.cast("float64")
    last = layout == "NDHWC"
    x = mx.nd.array(np.moveaxis(x_np, 1, -1) if last else x_np, dtype="float64")
    x.attach_grad()
    with autograd.record():
        out = layer(x)
        loss = (out**2).sum()
    loss.backward()
    w = layer.weight.data().asnumpy()
    tx = torch.tensor(x_np, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    tb = torch.tensor(layer.bias.data().asnumpy(), requires_grad=True)
    want = torch.nn.functional.conv_transpose3d(
        tx,
        tw,
        tb,
        stride=kwargs.get("strides", 1),
        padding=kwargs.get("padding", 0),
        output_padding=kwargs.get("output_padding", 0),
        groups=kwargs.get("groups", 1),
        dilation=kwargs.get("dilation", 1),
    )
    (want**2).sum().backward()
    got = np.moveaxis(out.asnumpy(), -1, 1) if last else out.asnumpy()
    dx = np.moveaxis(x.grad.asnumpy(), -1, 1) if last else x.grad.asnumpy()
    np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(layer.weight.grad().asnumpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(layer.bias.grad().asnumpy(), tb.grad.numpy(), rtol=1e-10)
    assert w.shape == (4, 6 // kwargs.get("groups", 1)) + layer._kernel
