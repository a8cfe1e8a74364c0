"""sort, argsort, topk, kthvalue: values and indices against NumPy/PyTorch, gradients by
finite differences (values are differentiable through gather)."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck


def _leaf(rng, shape):
    return tg.tensor(rng.standard_normal(shape), dtype=tg.float64, requires_grad=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_values_indices_and_gradient(rng, dim, descending):
    x = _leaf(rng, (3, 4))
    a = x.detach().numpy()
    values, indices = tg.sort(x, dim=dim, descending=descending)
    expected = np.sort(a, axis=dim)
    if descending:
        expected = np.flip(expected, axis=dim)
    np.testing.assert_allclose(values.detach().numpy(), expected)
    np.testing.assert_allclose(np.take_along_axis(a, indices.numpy(), dim), expected)
    assert indices.dtype == np.int64
    assert gradcheck(lambda t: tg.sort(t, dim, descending).values, [x])
    assert gradgradcheck(lambda t: tg.sort(t, dim, descending).values ** 2, [x])


def test_sort_is_stable_both_ways_and_puts_nan_like_pytorch():
    x = tg.tensor([1.0, 0.0, 1.0, float("nan"), 0.0])
    assert tg.sort(x).indices.tolist() == [1, 4, 0, 2, 3]
    assert tg.sort(x, descending=True).indices.tolist() == [3, 0, 2, 1, 4]
    assert tg.argsort(tg.tensor([2, 1, 2], dtype=tg.uint8), descending=True).tolist() == [0, 2, 1]


def test_sort_0d_and_method_and_axis_keyword():
    v, i = tg.sort(tg.tensor(3.0))
    assert v.item() == 3.0 and i.item() == 0 and i.shape == ()
    x = tg.tensor([[2.0, 1.0], [0.0, 5.0]])
    assert x.sort(axis=0).indices.tolist() == [[1, 0], [0, 1]]
    assert x.argsort().tolist() == [[1, 0], [0, 1]]


def test_sort_and_topk_against_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((4, 5))
    x, tx = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = rng.standard_normal((4, 3))
    (tg.topk(x, 3, dim=1).values * tg.tensor(w)).sum().backward()
    (torch.topk(tx, 3, dim=1).values * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    for largest in (True, False):
        got, want = tg.topk(x, 2, 0, largest), torch.topk(tx, 2, 0, largest)
        np.testing.assert_allclose(got.values.detach().numpy(), want.values.detach().numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(
        tg.argsort(x, 0, descending=True).numpy(), torch.argsort(tx, 0, descending=True).numpy()
    )
    got, want = tg.kthvalue(x, 2, 1, keepdim=True), torch.kthvalue(tx, 2, 1, keepdim=True)
    np.testing.assert_allclose(got.values.detach().numpy(), want.values.detach().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


def test_topk_gradient_and_errors(rng):
    x = _leaf(rng, (2, 5))
    assert gradcheck(lambda t: tg.topk(t, 3).values, [x])
    assert tg.topk(x, 0).values.shape == (2, 0)
    with pytest.raises(RuntimeError, match=r"k \(6\) is out of range for dimension -1 of size 5"):
        tg.topk(x, 6)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tg.topk(x, 1, dim=2)
    with pytest.raises(TypeError, match="expected a Tensor, got list"):
        tg.sort([1, 2])


def test_kthvalue_values_shapes_gradient_and_errors(rng):
    x = _leaf(rng, (3, 4))
    got = tg.kthvalue(x, 2, dim=0)
    np.testing.assert_allclose(got.values.detach().numpy(), np.sort(x.detach().numpy(), 0)[1])
    assert got.indices.shape == (4,) and x.kthvalue(1, keepdim=True).values.shape == (3, 1)
    assert tg.kthvalue(tg.tensor(2.0), 1).values.item() == 2.0
    assert gradcheck(lambda t: tg.kthvalue(t, 3, dim=1).values, [x])
    with pytest.raises(RuntimeError, match=r"k \(5\) is out of range .* pass 1 <= k <= 4"):
        tg.kthvalue(x, 5)


def test_integer_sort_does_not_record():
    v, i = tg.sort(tg.tensor([3, 1, 2]))
    assert v.tolist() == [1, 2, 3] and v.grad_fn is None
