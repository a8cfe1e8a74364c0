"""In-place writes into views reach the base's graph (ops/view_writes.py), as in PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck


def _x():
    return tg.tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.5, requires_grad=True)


VIEWS = {
    "row": lambda b: b[1],
    "column": lambda b: b[:, 2],
    "strided": lambda b: b[::2, 1::2],
    "transposed": lambda b: b.t(),
    "narrow": lambda b: b.narrow(1, 1, 2),
    "reshaped": lambda b: b.view(2, 6),
    "view of a view": lambda b: b.t()[1:3][0],
    "diagonal": lambda b: b.diagonal(1),
}


@pytest.mark.parametrize("take", VIEWS.values(), ids=VIEWS.keys())
def test_the_base_gradient_sees_an_in_place_change_of_its_view(take):
    # it missed the in-place op: b = x * 1; b[1].mul_(3); b.sum() gave x the gradient 1 in
    # row 1, not 3 (the base's grad_fn still described its old value)
    x = _x()
    b = x * 1.0
    take(b).mul_(3.0)
    b.sum().backward()
    mark = np.zeros((3, 4))
    take(tg.from_numpy(mark))[...] = 1.0  # the view's region
    np.testing.assert_array_equal(x.grad.numpy(), 1.0 + 2.0 * mark)
    assert b.grad_fn.name() == "CopySlices"


def test_against_finite_differences_and_to_second_order():
    def f(x):
        b = x * x
        b[:, 1:3].sin_()
        b.t()[0].mul_(x[:, 0])
        return b.exp()

    x = tg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_a_write_into_an_untracked_base_through_its_view_is_recorded():
    # PyTorch: the base joins the graph (its grad_fn becomes CopySlices)
    x = tg.tensor([2.0, 3.0], requires_grad=True)
    b = tg.zeros(2, 3)
    b[:, 1].copy_(x)
    (b * b).sum().backward()
    assert b.grad_fn is not None and x.grad.tolist() == [4.0, 6.0]


def test_a_reshape_that_copied_is_no_view():
    x = _x()
    b = x * 1.0
    flat = b.t().reshape(-1)  # not viewable: NumPy copies, PyTorch too
    flat.mul_(3.0)
    assert b.grad_fn is not None and b.grad_fn.name() != "CopySlices"
    b.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4)))


def test_a_value_saved_before_the_write_still_fails_the_version_check():
    x = _x()
    b = x * 1.0
    y = b.sin()  # saves b
    b[0].add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_an_in_place_op_outside_autograd_names_itself_in_a_numpy_error():
    # it let NumPy's bare "operands could not be broadcast together" out (the recorded path
    # named the op)
    with pytest.raises(ValueError, match=r"^mul: operands could not be broadcast"):
        tg.ones(3).mul_(tg.ones(4))


def test_diagonal_is_a_view_and_diag_a_copy():
    # diagonal() was a copy: x.diagonal().fill_(0) silently left x unchanged (PyTorch: a view)
    x = tg.tensor(np.arange(9.0).reshape(3, 3))
    x.diagonal().fill_(0.0)
    assert np.trace(x.numpy()) == 0.0
    tg.diag(x).fill_(5.0)
    assert np.trace(x.numpy()) == 0.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        tg.ones(2, 2, requires_grad=True).diagonal().zero_()


def test_a_view_of_a_leaf_taken_under_no_grad_refuses_a_recorded_write():
    # the rebase would have turned the leaf into a non-leaf (PyTorch refuses this case)
    w = tg.ones(3, requires_grad=True)
    with tg.no_grad():
        v = w[:2]
    with pytest.raises(RuntimeError, match="taken under no_grad"):
        v.copy_(tg.ones(2, requires_grad=True) * 2)
    assert w.is_leaf and w.tolist() == [1.0, 1.0, 1.0]
    with tg.no_grad():
        v.fill_(0.0)  # the optimizer's way: fine
    assert w.is_leaf and w.tolist() == [0.0, 0.0, 1.0]


# --- the other views of the storage take their grad_fn anew (regenerate_views) ---------------
# Each case: (what to write, in place) on b = x * 1 with views taken before the write:
# both = b[0:2], tail = both[1:] (a view of a view), first = b[0:1]. The loss reads the
# views only. Before regenerate_views these gave x the gradients of the old values
# (sibling: [10, 1100, 0, 0] where PyTorch gives [30, 1100, 0, 0]).
SIBLING_WRITES = {
    "through a sibling view": (lambda b, both, tail, first, x: first.mul_(3.0), [30, 1100, 0, 0]),
    "into the base": (lambda b, both, tail, first, x: b.mul_(3.0), [30, 3300, 0, 0]),
    "through a view of a view": (lambda b, both, tail, first, x: tail.mul_(5.0), [10, 5500, 0, 0]),
    "by item assignment": (
        lambda b, both, tail, first, x: b.__setitem__(1, x[3] * 7.0),
        [10, 0, 0, 7700],
    ),
}


def _sibling_case(lib, write):
    x = lib.tensor(np.arange(1.0, 5.0), requires_grad=True)
    b = x * 1.0
    both = b[0:2]
    tail = both[1:]
    first = b[0:1]
    write(b, both, tail, first, x)
    ((both * lib.tensor(np.array([10.0, 100.0]))).sum() + (tail * 1000.0).sum()).backward()
    return np.array(x.grad.tolist())


@pytest.mark.parametrize("case", SIBLING_WRITES.values(), ids=SIBLING_WRITES.keys())
def test_views_taken_before_a_write_see_the_new_values_in_backward(case):
    write, expected = case
    np.testing.assert_array_equal(_sibling_case(tg, write), expected)


@pytest.mark.parametrize("case", SIBLING_WRITES.values(), ids=SIBLING_WRITES.keys())
def test_views_taken_before_a_write_match_torch(case):
    torch = pytest.importorskip("torch")
    write, _ = case
    np.testing.assert_array_equal(_sibling_case(tg, write), _sibling_case(torch, write))


def test_a_view_of_an_untracked_base_joins_the_graph_when_the_base_is_written():
    # PyTorch: vz.requires_grad becomes True once z.copy_(x) records
    x = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    z = tg.zeros(4, dtype=tg.float64)
    vz = z[0:2]
    assert not vz.requires_grad
    z.copy_(x)
    assert vz.requires_grad
    (vz * 2.0).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 0.0, 0.0]


def test_sibling_regeneration_against_finite_differences():
    def f(x):
        b = x * x
        rows, col = b[1:], b[:, 2]
        b[0].sin_()
        col.mul_(x[:, 0])  # rows' last two elements of column 2 change too
        return rows.exp() + b[0].unsqueeze(0)

    x = tg.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_the_counter_does_not_keep_every_view_ever_taken():
    # a parameter viewed once per step (a transpose in a linear layer) must not grow its
    # version counter without bound: dead views are dropped as the list doubles
    w = tg.randn(4, 4, requires_grad=True)
    for _ in range(1000):
        w.t()
    assert len(w._vc) < 40
