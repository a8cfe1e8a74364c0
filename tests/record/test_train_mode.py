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
