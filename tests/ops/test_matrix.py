"""diag, diagonal, trace, tril, triu, meshgrid (and lerp, dist): values against NumPy and
PyTorch, gradients by finite differences, errors that say what to do."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck


def _leaf(rng, shape):
    return tg.tensor(rng.standard_normal(shape), dtype=tg.float64, requires_grad=True)


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_builds_and_extracts(rng, k):
    v = _leaf(rng, (3,))
    m = tg.diag(v, k)
    np.testing.assert_allclose(m.detach().numpy(), np.diag(v.detach().numpy(), k))
    a = _leaf(rng, (3, 5))
    np.testing.assert_allclose(tg.diag(a, k).detach().numpy(), np.diag(a.detach().numpy(), k))
    assert gradcheck(lambda t: tg.diag(t, k), [v]) and gradcheck(lambda t: tg.diag(t, k), [a])
    assert gradgradcheck(lambda t: tg.diag(t, k) ** 2, [a])


def test_diagonal_of_a_batch_and_method(rng):
    a = _leaf(rng, (2, 3, 4))
    got = a.diagonal(1, -2, -1)
    np.testing.assert_allclose(got.detach().numpy(), np.diagonal(a.detach().numpy(), 1, 1, 2))
    assert gradcheck(lambda t: tg.diagonal(t, 0, 0, 2), [a])
    with pytest.raises(RuntimeError, match="dim1 and dim2 are the same dimension"):
        tg.diagonal(a, 0, 1, -2)


def test_trace_value_and_gradient(rng):
    a = _leaf(rng, (3, 4))
    assert np.isclose(tg.trace(a).item(), np.trace(a.detach().numpy()))
    a.trace().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3, 4))
    with pytest.raises(RuntimeError, match=r"trace: expected a 2-D tensor .* shape \(3,\)"):
        tg.trace(tg.ones(3))


@pytest.mark.parametrize("k", [0, 1, -1])
def test_tril_triu_values_gradients_and_in_place(rng, k):
    a = _leaf(rng, (2, 3, 4))
    x = a.detach().numpy()
    np.testing.assert_allclose(tg.tril(a, k).detach().numpy(), np.tril(x, k))
    np.testing.assert_allclose(a.triu(k).detach().numpy(), np.triu(x, k))
    assert gradcheck(lambda t: tg.tril(t, k), [a]) and gradcheck(lambda t: tg.triu(t, k), [a])
    b = tg.tensor(x.copy())
    assert b.tril_(k) is b
    np.testing.assert_allclose(b.numpy(), np.tril(x, k))
    y = a * 1.0
    y.triu_(k).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.triu(np.ones_like(x), k))


def test_tril_needs_a_matrix():
    with pytest.raises(RuntimeError, match=r"tril: expected a tensor with at least 2 dim"):
        tg.tril(tg.ones(3))
    with pytest.raises(RuntimeError, match="diag: expected a 1-D or 2-D tensor"):
        tg.diag(tg.ones(2, 2, 2))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_matches_numpy_and_sums_gradients(rng, indexing):
    a, b, c = _leaf(rng, (2,)), _leaf(rng, (3,)), _leaf(rng, (4,))
    got = tg.meshgrid(a, b, c, indexing=indexing)
    want = np.meshgrid(
        a.detach().numpy(), b.detach().numpy(), c.detach().numpy(), indexing=indexing
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w)
    assert gradcheck(lambda *ts: tg.meshgrid(*ts, indexing=indexing), [a, b, c])
    sum(g.sum() for g in tg.meshgrid([a, b])).backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="expected at least one tensor"):
        tg.meshgrid()
    with pytest.raises(ValueError, match="indexing must be 'ij' or 'xy'"):
        tg.meshgrid(a, indexing="yx")
    with pytest.raises(RuntimeError, match=r"0-D or 1-D tensors, argument 0 is \(2, 2\)"):
        tg.meshgrid(tg.ones(2, 2))


def test_against_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((4, 4))
    np.testing.assert_allclose(tg.diag(tg.tensor(x), -1).numpy(), torch.diag(torch.tensor(x), -1))
    np.testing.assert_allclose(tg.trace(tg.tensor(x)).numpy(), torch.trace(torch.tensor(x)))
    v = rng.standard_normal(3)
    np.testing.assert_allclose(tg.diag(tg.tensor(v), 2).numpy(), torch.diag(torch.tensor(v), 2))
    grids = tg.meshgrid(tg.tensor(v), tg.tensor(x[0]), indexing="xy")
    want = torch.meshgrid(torch.tensor(v), torch.tensor(x[0]), indexing="xy")
    for g, w in zip(grids, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy())
    y = rng.standard_normal((4, 4))
    for p in (2, 1, float("inf"), 3):
        np.testing.assert_allclose(
            tg.dist(tg.tensor(x), tg.tensor(y), p).numpy(),
            torch.dist(torch.tensor(x), torch.tensor(y), p).numpy(),
        )


def test_lerp_and_dist(rng):
    a, b, w = (
        _leaf(rng, (3,)),
        _leaf(rng, (3,)),
        tg.tensor([0.1, 0.5, 0.9], dtype=tg.float64, requires_grad=True),
    )
    np.testing.assert_allclose(
        tg.lerp(a, b, w).detach().numpy(),
        a.detach().numpy() + w.detach().numpy() * (b - a).detach().numpy(),
    )
    assert gradcheck(tg.lerp, [a, b, w]) and gradcheck(lambda s, t: tg.dist(s, t, 3), [a, b])
    c = tg.tensor([0.0, 2.0])
    assert c.lerp_(tg.tensor([2.0, 4.0]), 0.5) is c and c.tolist() == [1.0, 3.0]
    with pytest.raises(RuntimeError, match=r"lerp\(\): the shapes .* don't broadcast"):
        tg.lerp(tg.ones(2), tg.ones(3), 0.5)


def test_diagonal_backward_refuses_values_of_another_shape():
    """As torch.diagonal_scatter: one value per diagonal element, no broadcasting (the fuzz's
    0-d values used to fill the whole diagonal)."""
    from tapegrad.ops.registry import OPS

    op = OPS["diagonal_backward"]
    np.testing.assert_array_equal(op(tg.tensor([1.0, 2.0]), shape=(2, 2)).numpy(), np.diag([1, 2]))
    for bad in (tg.tensor(1.0), tg.tensor([1.0, 2.0, 3.0])):
        with pytest.raises(RuntimeError, match=r"diagonal_backward: .*has shape \(2,\)"):
            op(bad, shape=(2, 2))
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.diagonal_scatter(torch.zeros(2, 2), torch.tensor(1.0))
