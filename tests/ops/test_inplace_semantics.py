"""In-place ops: what follows a tensor to its new value, and what refuses to be written."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg


def test_retain_grad_follows_the_tensor_to_its_value_after_an_in_place_op():
    # PyTorch: b.grad is d(loss)/d(b's new value). It was the gradient of b's old value
    # ([36, 72], three times too large) because the retained slot stayed on the old node.
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    b = x * 2.0
    b.retain_grad()
    b.mul_(3.0)  # b = 6x
    (b * b).sum().backward()
    assert b.retains_grad
    assert b.grad.tolist() == [12.0, 24.0]  # 2 b
    assert x.grad.tolist() == [72.0, 144.0]  # 2 b * 6


def test_retain_grad_of_a_base_follows_a_write_through_its_view():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1.0
    b.retain_grad()
    b[0:1].mul_(5.0)
    (b * tg.tensor([1.0, 10.0, 100.0], dtype=tg.float64)).sum().backward()
    assert b.grad.tolist() == [1.0, 10.0, 100.0]
    assert x.grad.tolist() == [5.0, 10.0, 100.0]


def test_retain_grad_matches_torch_after_in_place_ops():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        b = x * 2.0  # (exp would save its output: the add_ below would fail its check)
        b.retain_grad()
        b.add_(1.0)
        b[1:].mul_(x[:2])
        b.sin().sum().backward()
        return np.array(b.grad.tolist()), np.array(x.grad.tolist())

    for ours, theirs in zip(run(tg), run(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


WRITES = {
    "add_": lambda t: t.add_(1.0),
    "fill_": lambda t: t.fill_(2.0),
    "item assignment": lambda t: t.__setitem__(0, 5.0),
    "masked_fill_": lambda t: t.masked_fill_(t > 0, 1.0),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_an_expanded_tensor_refuses_in_place_writes_with_a_named_error(write):
    # NumPy's "assignment destination is read-only" ValueError leaked out
    t = tg.ones(3).expand(2, 3)
    with pytest.raises(RuntimeError, match=r"read-only .*t\.clone\(\)"):
        write(t)
    assert t.tolist() == [[1.0] * 3] * 2 and t._version == 0


def test_a_read_only_numpy_array_refuses_in_place_writes():
    a = np.ones(3)
    a.flags.writeable = False
    with pytest.raises(RuntimeError, match=r"^mul_: this tensor's memory is read-only"):
        tg.from_numpy(a).mul_(2.0)
