"""`t.grad_req = ...` on a record-scope variable behaves as `attach_grad(grad_req)`."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import autograd as ag


def test_null_setter_stops_recording_and_backward_raises():
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    x.grad_req = "null"
    assert x.grad is None and x.grad_req == "null"
    with ag.record():
        y = x * x
    assert y.grad_fn is None
    with pytest.raises(RuntimeError, match="not in a computational graph"):
        y.backward()
    assert x.grad is None


def test_null_setter_next_to_a_write_variable():
    x, w = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    x.attach_grad()
    w.attach_grad()
    x.grad_req = "null"
    with ag.record():
        y = (x * w).sum()
    y.backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("req", ["write", "add"])
def test_setting_write_or_add_again_restores_tracking(req):
    x = tg.tensor([1.0, 2.0])
    x.attach_grad()
    x.grad_req = "null"
    x.grad_req = req
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    for _ in range(2):
        with ag.record():
            y = (x * x).sum()
        y.backward()
    expected = [2.0, 4.0] if req == "write" else [4.0, 8.0]
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_attach_grad_null_then_setter_write_restores_tracking():
    x = tg.tensor([3.0])
    x.attach_grad("null")
    x.grad_req = "write"
    with ag.record():
        y = x * x
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_setter_on_a_plain_tensor_does_not_attach_it():
    x = tg.tensor([1.0, 2.0])
    x.grad_req = "null"
    x.grad_req = "write"
    assert x.grad is None
    with ag.record():
        y = x * x
    assert y.grad_fn is None


def test_null_setter_leaves_the_ambient_tape_alone():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    x.grad_req = "null"
    assert x.requires_grad
    (x * x).sum().backward()
    assert x.grad is None  # the engine skips the write for a "null" leaf


def test_setter_rejects_an_unknown_req():
    x = tg.tensor([1.0])
    with pytest.raises(ValueError, match="grad_req must be one of"):
        x.grad_req = "sum"
