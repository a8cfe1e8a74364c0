"""Indexing: basic/advanced/boolean getitem, setitem, gather/scatter family, errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck


def _leaf(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (0, 2),
        (slice(None), 1),
        (slice(1, None), None, Ellipsis),
        (Ellipsis, slice(None, None, -1)),
        (slice(None, None, 2),),
        None,
        ([0, 2, 2],),
        (np.array([[0, 1], [2, 0]]), slice(1, 3)),
        ([0, 1], [3, 2]),
        (slice(None), [3, 0, 3]),
        (Ellipsis, 1, None),
    ],
)
def test_getitem_values_match_numpy(rng, key):
    a = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(tg.tensor(a)[key].numpy(), a[key])


def test_getitem_with_tensor_indices_and_masks(rng):
    a = rng.standard_normal((3, 4))
    x = tg.tensor(a)
    np.testing.assert_array_equal(x[tg.tensor([2, 0])].numpy(), a[[2, 0]])
    np.testing.assert_array_equal(x[tg.tensor(1)].numpy(), a[1])  # 0-d index acts like an int
    mask = a > 0
    np.testing.assert_array_equal(x[tg.tensor(mask)].numpy(), a[mask])
    np.testing.assert_array_equal(x[x > 0].numpy(), a[mask])
    np.testing.assert_array_equal(x[:, tg.tensor(mask[0])].numpy(), a[:, mask[0]])
    np.testing.assert_array_equal(x[np.int64(2)].numpy(), a[2])


def test_repeated_indices_accumulate_gradients():
    x = _leaf([1.0, 2.0, 3.0])
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0])
    y = _leaf(np.ones((3, 2)))
    (y[tg.tensor([[1, 1], [2, 1]])] * 2).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0, 0], [6, 6], [2, 2]])


def test_boolean_mask_gradient(rng):
    a = rng.standard_normal((3, 4))
    x = _leaf(a)
    (x[x > 0] ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(a > 0, 2 * a, 0))


def test_getitem_gradients_pass_gradcheck_and_gradgradcheck(rng):
    x = _leaf(rng.standard_normal((4, 3)))
    for fn in (
        lambda t: t[1:, ::2] ** 2,
        lambda t: t[[0, 0, 3], 1] ** 2,
        lambda t: t[..., tg.tensor([2, 2])] ** 2,
        lambda t: t[t > 0] ** 2,
    ):
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


def test_basic_index_is_a_view_advanced_is_a_copy():
    x = tg.zeros(3, 2)
    v = x[1]
    v.add_(1.0)
    assert x.tolist() == [[0, 0], [1, 1], [0, 0]]
    assert x._version == 1
    c = x[[1]]
    c.add_(5.0)
    assert x.tolist() == [[0, 0], [1, 1], [0, 0]]
    x[2, 1].add_(3.0)  # a single element is a (0-d) view too
    assert x.tolist() == [[0, 0], [1, 1], [0, 3]]


def test_index_errors():
    x = tg.zeros(3, 4)
    with pytest.raises(IndexError, match=r"index 5 is out of bounds.*shape \(3, 4\)"):
        x[5]
    with pytest.raises(IndexError, match=r"out of bounds.*shape \(3, 4\)"):
        x[[0, 7]]
    with pytest.raises(IndexError, match="must be integer or boolean"):
        x[tg.tensor([0.5])]
    with pytest.raises(IndexError, match="valid indices"):
        x["a"]
    with pytest.raises(IndexError, match=r"out of bounds.*shape \(3, 4\)"):
        x[3] = 1.0


# ------------------------------------------------------------------ setitem
def test_setitem_values(rng):
    a = rng.standard_normal((3, 4))
    x = tg.tensor(a.copy())
    x[0] = 1.0
    x[:, 1] = tg.tensor([7.0, 8.0, 9.0])
    x[x > 5] = 0.0
    x[[2, 2], [3, 0]] = tg.tensor([4.0, 5.0])
    a[0] = 1.0
    a[:, 1] = [7.0, 8.0, 9.0]
    a[a > 5] = 0.0
    a[[2, 2], [3, 0]] = [4.0, 5.0]
    np.testing.assert_array_equal(x.numpy(), a)
    assert x._version == 4


def test_setitem_on_a_non_leaf_that_requires_grad():
    x = _leaf([1.0, 2.0, 3.0, 4.0])
    v = _leaf([10.0, 20.0])
    y = x * 2
    y[1:3] = v * 3
    assert y.grad_fn is not None and y.grad_fn.name() == "CopySlices"
    w = np.array([1.0, 2.0, 3.0, 4.0])
    (y * tg.tensor(w)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [2.0, 30.0, 60.0, 8.0])
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 0.0, 8.0])
    np.testing.assert_array_equal(v.grad.numpy(), [6.0, 9.0])


def test_setitem_broadcast_value_gradient_sums():
    x = _leaf(np.zeros((3, 4)))
    v = _leaf(2.0)
    y = x + 0
    y[:2] = v
    (y * 2).sum().backward()
    assert v.grad.item() == 16.0
    np.testing.assert_array_equal(x.grad.numpy(), [[0] * 4, [0] * 4, [2] * 4])


def test_setitem_on_an_untracked_tensor_with_a_tracked_value():
    t = tg.zeros(3)
    v = _leaf(5.0)
    t[1] = v
    assert t.requires_grad and not t.is_leaf
    (t * tg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert v.grad.item() == 2.0


def test_setitem_on_a_leaf_that_requires_grad_raises():
    x = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x[0] = 5.0
    assert x.tolist() == [1.0, 2.0]  # nothing half-done
    with tg.no_grad():
        x[0] = 5.0
    assert x.tolist() == [5.0, 2.0]


def test_setitem_through_a_view_of_a_leaf_that_requires_grad_raises():
    x = _leaf(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0][1] = 5.0
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        x.reshape(4).masked_fill_(tg.tensor([True, False, False, False]), 0.0)
    assert x.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    y = x * 1
    y[0][1] = 5.0  # a view of a non-leaf is fine
    assert y.tolist() == [[1.0, 5.0], [1.0, 1.0]]


def test_setitem_after_the_value_was_saved_is_detected():
    x = _leaf([1.0, 2.0])
    y = x * 1
    z = y * y
    y[0] = 0.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_setitem_second_order():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 1
    y[0] = x[1] ** 2
    (g,) = tg.autograd.grad(y.sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [0.0, 5.0, 1.0])
    (gg,) = tg.autograd.grad(g.sum(), [x])
    np.testing.assert_array_equal(gg.numpy(), [0.0, 2.0, 0.0])


# ------------------------------------------------------------------ gather family vs torch
def test_gather_scatter_index_select_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 4))
    idx = np.array([[0, 0, 2], [1, 3, 3]])
    src = rng.standard_normal((2, 5))
    x, xt = _leaf(a), torch.tensor(a, requires_grad=True)
    s, st = _leaf(src), torch.tensor(src, requires_grad=True)
    it = torch.tensor(idx)
    pairs = [
        (x.gather(1, tg.tensor(idx)), xt.gather(1, it)),
        (tg.gather(x, 0, tg.tensor(idx[:, :3] % 3)), torch.gather(xt, 0, it % 3)),
        (x.index_select(1, tg.tensor([3, 3, 0])), xt.index_select(1, torch.tensor([3, 3, 0]))),
        (
            x.take_along_dim(tg.tensor([[0], [3], [3]]), 1),
            xt.take_along_dim(torch.tensor([[0], [3], [3]]), 1),
        ),
        (tg.scatter_add(x, 1, tg.tensor(idx), s), torch.scatter_add(xt, 1, it, st[:, :3])),
        (
            x.scatter(1, tg.tensor([[1], [2], [0]]), s[:1].T),
            xt.scatter(1, torch.tensor([[1], [2], [0]]), st[:1, :3].T),
        ),
        (x.scatter(1, tg.tensor(idx[:, :1]), value=2.0), xt.scatter(1, it[:, :1], 2.0)),
        (
            x.index_add(0, tg.tensor([2, 2]), s[:, :4]),
            xt.index_add(0, torch.tensor([2, 2]), st[:, :4]),
        ),
        (x.masked_fill(tg.tensor(a[:1] > 0), -1.0), xt.masked_fill(torch.tensor(a[:1] > 0), -1.0)),
        (x.narrow(1, 1, 2), xt.narrow(1, 1, 2)),
        (x.select(0, -1), xt.select(0, -1)),
        (x.masked_select(tg.tensor(a > 0)), xt.masked_select(torch.tensor(a > 0))),
    ]
    for ours, ref in pairs:
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy())
        v = np.random.default_rng(3).standard_normal(ours.shape)
        inputs = [x, s] if ref.grad_fn is not None and st in _leaves(ref) else [x]
        g_ours = tg.autograd.grad((ours * tg.tensor(v)).sum(), inputs, allow_unused=True)
        g_ref = torch.autograd.grad(
            (ref * torch.tensor(v)).sum(), [xt, st][: len(inputs)], allow_unused=True
        )
        for a_, b_ in zip(g_ours, g_ref, strict=True):
            np.testing.assert_allclose(a_.numpy(), b_.numpy())


def _leaves(t):
    out, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None:
            continue
        if hasattr(fn, "variable"):
            out.add(fn.variable)
        stack.extend(f for f, _ in fn.next_functions)
    return out


def test_in_place_index_methods(rng):
    x = tg.zeros(2, 3)
    x.masked_fill_(tg.tensor([True, False, True]), 1.0)
    assert x.tolist() == [[1, 0, 1], [1, 0, 1]]
    x.index_add_(0, tg.tensor([1, 1]), tg.ones(2, 3))
    assert x.tolist() == [[1, 0, 1], [3, 2, 3]]
    x.scatter_(1, tg.tensor([[0], [2]]), 9.0)
    assert x.tolist() == [[9, 0, 1], [3, 2, 9]]
    x.scatter_add_(0, tg.tensor([[0, 0, 0]]), tg.ones(1, 3))
    assert x.tolist() == [[10, 1, 2], [3, 2, 9]]
    x.index_put_((tg.tensor([0]), tg.tensor([1])), tg.tensor(5.0), accumulate=True)
    assert x.tolist() == [[10, 6, 2], [3, 2, 9]]


def test_masked_fill_in_place_on_non_leaf_gradient():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 3
    y.masked_fill_(tg.tensor([False, True, False]), 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 3.0])


def test_nonzero_and_argwhere():
    x = tg.tensor([[0, 1], [2, 0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]]
    assert [t.tolist() for t in tg.nonzero(x, as_tuple=True)] == [[0, 1], [1, 0]]
    assert tg.argwhere(x).shape == (2, 2)
    assert not x.nonzero().requires_grad


def test_gather_errors():
    x = tg.zeros(3, 4)
    with pytest.raises(RuntimeError, match="as many dimensions"):
        x.gather(1, tg.tensor([0, 1]))
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.gather(1, tg.tensor([[4]]))
    with pytest.raises(RuntimeError, match="integer index"):
        x.gather(1, tg.tensor([[0.0]]))
    with pytest.raises(RuntimeError, match=r"mask of shape \(2,\) doesn't broadcast"):
        x.masked_fill(tg.tensor([True, False]), 0.0)
    with pytest.raises(RuntimeError, match="boolean mask"):
        x.masked_fill(tg.tensor([1, 0, 1, 0]), 0.0)


def test_iteration_unbinds_the_first_dimension():
    x = _leaf([[1.0, 2.0], [3.0, 4.0]])
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    (rows[0] * rows[1]).sum().backward()
    assert x.grad.tolist() == [[3.0, 4.0], [1.0, 2.0]]
    a, b = tg.tensor([5, 6])
    assert (int(a), int(b)) == (5, 6)
    with pytest.raises(TypeError, match="0-d"):
        iter(tg.tensor(1.0))


def test_nonzero_of_a_0d_tensor():
    # NumPy refuses a 0-d array ("Calling nonzero on 0d arrays is not allowed"), which leaked
    assert tg.nonzero(tg.tensor(3)).shape == (1, 0) and tg.nonzero(tg.tensor(0)).shape == (0, 0)
    assert [t.tolist() for t in tg.nonzero(tg.tensor(2.5), as_tuple=True)] == [[0]]
    assert tg.argwhere(tg.tensor(False)).shape == (0, 0)
