"""Train/predict mode, and backward() inside record() (also through custom Functions)."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import autograd as ag


def test_is_training_follows_the_scopes():
    assert not ag.is_training()
    with ag.record():
        assert ag.is_training()
        with ag.predict_mode():
            assert not ag.is_training() and ag.is_recording()
        with ag.pause():
            assert not ag.is_training()
        with ag.pause(train_mode=True):
            assert ag.is_training() and not ag.is_recording()
    with ag.train_mode():
        assert ag.is_training() and not ag.is_recording()
    assert not ag.is_training()


def test_ambient_modes_leave_training_alone():
    with ag.train_mode(), tg.no_grad():
        assert ag.is_training()
    with tg.enable_grad():
        assert not ag.is_training()


def test_backward_default_train_mode_is_true_and_restored():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    seen = []
    with ag.record(train_mode=False):
        y = x * x
        y.register_hook(lambda g: seen.append(ag.is_training()))
        z = y * 2
    z.backward()  # MXNet's default: the backward runs in training mode
    with ag.record(train_mode=False):
        y = x * x
        y.register_hook(lambda g: seen.append(ag.is_training()))
        z = y * 2
        z.backward(train_mode=False)
        assert not ag.is_training() and ag.is_recording()
    assert seen == [True, False]


def test_grad_train_mode_argument():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    seen = []
    with ag.record():
        y = x * x
        y.register_hook(lambda g: seen.append(ag.is_training()))
        z = y * 2
    ag.grad(z, [x], retain_graph=True, train_mode=False)
    ag.grad(z, [x], train_mode=True)
    assert seen == [False, True]


# ---------------------------------------------------------------- custom Functions inside record()
class MultiplyAdd(ag.Function):
    @staticmethod
    def forward(ctx, w, x, b):
        ctx.save_for_backward(w, x)
        return w * x + b

    @staticmethod
    def backward(ctx, grad_output):
        w, x = ctx.saved_tensors
        return grad_output * x, grad_output * w, grad_output


class Sigmoid(ag.Function):
    """The MXNet documentation's instance-style custom function."""

    def forward(self, x):
        y = 1 / (1 + tg.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        (y,) = self.saved_tensors
        return dy * y * (1 - y)


class SinCos(ag.Function):
    """Instance style with two outputs."""

    def forward(self, x):
        self.save_for_backward(x)
        return tg.sin(x), tg.cos(x)

    def backward(self, g_sin, g_cos):
        (x,) = self.saved_tensors
        return g_sin * tg.cos(x) - g_cos * tg.sin(x)


def test_backward_inside_record_through_a_static_function():
    w, x, b = tg.tensor([2.0, 3.0]), tg.tensor([5.0, 7.0]), tg.tensor([1.0, 1.0])
    for t in (w, x, b):
        t.attach_grad()
    with ag.record():
        y = MultiplyAdd.apply(w, x, b)
        y.backward()  # inside record(): the reported MXNet crash must not happen here
        after = w * 2
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 7.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 3.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
    for t in (w, x, b):
        assert t.grad.grad_fn is None
    assert after.grad_fn is not None


def test_backward_inside_record_through_an_instance_function():
    x = tg.tensor([-1.0, 0.0, 2.0])
    x.attach_grad()
    with ag.record():
        f = Sigmoid()
        y = f(x)
        y.backward()
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(y.numpy(), s, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s), rtol=1e-6)
    assert x.grad.grad_fn is None


def test_instance_function_with_two_outputs_and_per_head_gradients():
    x = tg.tensor([0.5, 1.5])
    x.attach_grad()
    with ag.record():
        s, c = SinCos()(x)
        ag.backward([s, c], [None, tg.tensor([2.0, 2.0])])
    xv = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) - 2 * np.sin(xv), rtol=1e-6)


def test_function_under_a_grad_manager():
    x = tg.tensor([0.5, 1.5])
    gm = tg.autodiff.GradManager().attach(x)
    with gm:
        s, c = SinCos()(x)
        gm.backward([s, c])
    xv = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) - np.sin(xv), rtol=1e-6)


def test_function_backward_is_differentiable_with_create_graph():
    x = tg.tensor([0.5, 1.5])
    x.attach_grad()
    with ag.record():
        s, _ = SinCos()(x)
        (dx,) = ag.grad(s, [x], create_graph=True, retain_graph=True)
    dx.backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.numpy()), rtol=1e-6)


def test_function_gradient_of_wrong_shape_leaves_grad_untouched():
    class Bad(ag.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return tg.ones(5)

    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = Bad()(x)
    with pytest.raises(RuntimeError, match="Bad"):
        y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


# ---------------------------------------------------------------- Dropout follows the mode
def _mxnet_style_dropout(p=0.5):
    layer = tg.nn.Dropout(p)
    layer.training = None  # like every MXNet Block: follow tg.autograd.is_training()
    return layer


def test_seed_dropout_identity_outside_record_and_scaled_inside():
    tg.manual_seed(0)
    dropout = _mxnet_style_dropout(0.5)
    data = tg.ones((3, 3))
    output = dropout(data)
    assert ag.is_training() is False
    np.testing.assert_array_equal(output.numpy(), np.ones((3, 3)))
    with ag.record():
        output = dropout(data)
        assert ag.is_training() is True
    assert set(np.unique(output.numpy())) <= {0.0, 2.0}  # dropped, the rest scaled by 1/0.5
    with ag.record():
        out = dropout(tg.ones((100, 100))).numpy()
    assert 0.4 < (out == 0).mean() < 0.6
    assert abs(out.mean() - 1.0) < 0.1


@pytest.mark.parametrize(
    "scope, drops",
    [
        (lambda: ag.pause(), False),
        (lambda: ag.predict_mode(), False),
        (lambda: ag.train_mode(), True),
        (lambda: ag.record(train_mode=False), False),
    ],
)
def test_dropout_in_each_scope(scope, drops):
    dropout = _mxnet_style_dropout(0.5)
    data = tg.ones((50, 50))
    with ag.record(), scope():
        out = dropout(data).numpy()
    assert bool((out == 0).any()) is drops
    if not drops:
        np.testing.assert_array_equal(out, np.ones((50, 50)))


def test_core_dropout_follows_train_and_eval_not_the_record_scope():
    layer = tg.nn.Dropout(0.5)  # a core Module starts in training mode (PyTorch)
    data = tg.ones((50, 50))
    assert (layer(data).numpy() == 0).any()  # drops outside record()
    layer.eval()
    with ag.record():
        np.testing.assert_array_equal(layer(data).numpy(), np.ones((50, 50)))


def test_gradient_through_dropout_inside_record():
    x = tg.tensor(np.linspace(1.0, 2.0, 400).reshape(20, 20))
    x.attach_grad()
    dropout = _mxnet_style_dropout(0.25)
    with ag.record():
        y = dropout(x)
    y.backward()
    mask = y.numpy() / x.numpy()
    assert set(np.round(np.unique(mask), 6)) <= {0.0, round(1 / 0.75, 6)}
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-6)
