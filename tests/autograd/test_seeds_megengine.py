"""The MegEngine GradManager document's examples (seed 003), written with the core API."""

from __future__ import annotations

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.autodiff import GradManager


def get_x():
    return tg.tensor([0.5, 1.0, 2.0])


def f(x):
    return x * x * x


def test_with_grad_manager_as_gm():
    with GradManager() as gm:
        x = get_x()
        gm.attach(x)  # must be placed before any computation on x that needs differentiation
        y = f(x)
        dy = tg.ones_like(y)
        gm.backward(y, dy)  # doesn't need x, already known via attach()
        dx = x.grad  # backward() saves result to .grad attribute
    np.testing.assert_allclose(dx.numpy(), 3 * get_x().numpy() ** 2)


class _Model:
    """y = w * x + b, the smallest model with parameters()."""

    def __init__(self):
        self.w = tg.tensor([0.0])
        self.b = tg.tensor([0.0])

    def parameters(self):
        return [self.w, self.b]

    def __call__(self, data):
        x, t = data
        d = self.w * x + self.b - t
        return d * d


def _dataset():
    return [(tg.tensor([float(i)]), tg.tensor([2.0 * i + 1.0])) for i in range(1, 4)]


def _expected_grads(model, dataset):
    w, b = model.w.item(), model.b.item()
    gw = sum(2 * (w * x.item() + b - t.item()) * x.item() for x, t in dataset)
    gb = sum(2 * (w * x.item() + b - t.item()) for x, t in dataset)
    return gw, gb


def test_training_loop_with_gm_accumulates_into_grad():
    model = _Model()
    gm = GradManager()
    gm.attach(model.parameters())
    dataset = _dataset()
    gw, gb = _expected_grads(model, dataset)
    for data in dataset:
        with gm:
            loss = model(data)
            gm.backward(loss)
    # gradients w.r.t. parameters are accumulated into their .grad attributes
    np.testing.assert_allclose(model.w.grad.numpy(), [gw])
    np.testing.assert_allclose(model.b.grad.numpy(), [gb])


def test_training_loop_with_record_and_release_learns():
    model = _Model()
    gm = GradManager()
    gm.attach(model.parameters())
    dataset = _dataset()
    first = None
    for _ in range(200):
        total = 0.0
        for data in dataset:
            gm.record()
            loss = model(data)
            gm.backward(loss)  # backward() clears the recorded history and frees resources
            total += loss.item()
        first = total if first is None else first
        with tg.no_grad():
            for p in model.parameters():
                p -= 0.02 * p.grad
                p.grad = None
    assert total < 1e-3 < first
    np.testing.assert_allclose([model.w.item(), model.b.item()], [2.0, 1.0], atol=0.05)


def test_release_without_backward():
    model = _Model()
    gm = GradManager()
    gm.attach(model.parameters())
    for data in _dataset():
        gm.record()
        model(data)
        gm.release()  # call release() if backward() is not called
    assert model.w.grad is None and model.b.grad is None
    assert not gm.is_recording


def test_allreduce_callback_in_one_process_keeps_gradients():
    model = _Model()
    gm = GradManager()
    gm.attach(model.parameters(), callback=dist.make_allreduce_cb("MEAN"))
    dataset = _dataset()
    gw, gb = _expected_grads(model, dataset)
    for data in dataset:
        with gm:
            gm.backward(model(data))
    np.testing.assert_allclose(model.w.grad.numpy(), [gw])
    np.testing.assert_allclose(model.b.grad.numpy(), [gb])


def test_one_history_per_manager_use_several_for_higher_order():
    # MegEngine's own test: x.grad ends up holding the first plus the second derivative
    x_np = np.random.default_rng(0).random(10).astype("float32")
    x = tg.tensor(x_np)
    gm = GradManager().attach([x])
    gm2 = GradManager().attach([x])
    with gm:
        with gm2:
            y = tg.cos(x)
            gm2.backward(y)
        np.testing.assert_almost_equal(x.grad.numpy(), -np.sin(x_np), decimal=5)
        gm.backward(x.grad)
    np.testing.assert_almost_equal(x.grad.numpy(), -np.sin(x_np) - np.cos(x_np), decimal=5)
