"""Tensor hooks: register_hook (observe, replace, remove), retain_grad, post-accumulate hooks."""

import numpy as np
import pytest

import tapegrad as tg


def test_hook_on_non_leaf_sees_and_replaces_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    seen = []

    def hook(g):
        seen.append(g.tolist())
        return g * 10

    h.register_hook(hook)
    (h * 2).backward(tg.ones(2))
    assert seen == [[2.0, 2.0]]
    assert x.grad.tolist() == [60.0, 60.0]  # the replaced gradient flowed on


def test_hook_returning_none_keeps_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    calls = []
    h.register_hook(lambda g: calls.append(1))
    h.backward(tg.ones(2))
    assert calls == [1] and x.grad.tolist() == [3.0, 3.0]


def test_handle_remove():
    x = tg.tensor(1.0, requires_grad=True)
    calls = []
    h = x * 2
    handle = h.register_hook(lambda g: calls.append(g.item()))
    handle.remove()
    handle.remove()  # twice is harmless
    h.backward()
    assert calls == []


def test_hook_on_leaf_replaces_what_is_accumulated():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 0.5)
    (x * 4).backward(tg.ones(2))
    assert x.grad.tolist() == [2.0, 2.0]
    handle.remove()
    (x * 4).backward(tg.ones(2))
    assert x.grad.tolist() == [6.0, 6.0]


def test_hooks_run_in_registration_order():
    x = tg.tensor(1.0, requires_grad=True)
    h = x * 1
    h.register_hook(lambda g: g + 1)
    h.register_hook(lambda g: g * 10)
    h.backward()
    assert x.grad.item() == 20.0


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tg.ones(2).register_hook(lambda g: g)


def test_retain_grad_keeps_non_leaf_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    (h * 3).backward(tg.ones(2))
    assert h.grad.tolist() == [3.0, 3.0]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_retain_grad_accumulates_over_calls():
    x = tg.tensor(1.0, requires_grad=True)
    h = x * 2
    h.retain_grad()
    y = h * 5
    y.backward(retain_graph=True)
    y.backward()
    assert h.grad.item() == 10.0


def test_post_accumulate_grad_hook():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(t):
        assert t is x
        seen.append(t.grad.tolist())

    handle = x.register_post_accumulate_grad_hook(hook)
    (x * 2).backward(tg.ones(2))
    (x * 2).backward(tg.ones(2))
    assert seen == [[2.0, 2.0], [4.0, 4.0]]
    handle.remove()
    (x * 2).backward(tg.ones(2))
    assert len(seen) == 2


def test_post_accumulate_hook_only_on_leaves():
    x = tg.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hook_can_do_an_optimizer_step_in_backward():
    """The classic use of post-accumulate hooks: update the parameter as soon as its grad is in."""
    w = tg.tensor([1.0, 1.0], requires_grad=True)

    def step(t):
        with tg.no_grad():
            t.sub_(t.grad * 0.1)
        t.grad = None

    w.register_post_accumulate_grad_hook(step)
    (w * 3).backward(tg.ones(2))
    np.testing.assert_allclose(w.detach().numpy(), [0.7, 0.7], rtol=1e-6)
    assert w.grad is None
