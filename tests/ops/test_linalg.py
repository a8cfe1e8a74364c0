"""Linear algebra: matmul and friends, einsum, tensordot, tg.linalg; values, gradients
against PyTorch, the one-GEMM-per-gradient rule, error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck


def _leaf(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 2)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_matmul_matches_torch(rng, sa, sb):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    x, y = _leaf(a), _leaf(b)
    xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, ref = x @ y, xt @ yt
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    v = rng.standard_normal(out.shape)
    gx, gy = tg.autograd.grad((out * tg.tensor(v)).sum(), [x, y])
    gxt, gyt = torch.autograd.grad((ref * torch.tensor(v)).sum(), [xt, yt])
    np.testing.assert_allclose(gx.numpy(), gxt.numpy())
    np.testing.assert_allclose(gy.numpy(), gyt.numpy())


def test_matmul_second_order(rng):
    x, y = _leaf(rng.standard_normal((3, 4))), _leaf(rng.standard_normal((4, 2)))
    assert gradgradcheck(lambda a, b: (a @ b) ** 2, (x, y))


def test_matmul_rule_skips_the_unneeded_gemm(monkeypatch, rng):
    w = _leaf(rng.standard_normal((4, 3)))
    x = tg.tensor(rng.standard_normal((5, 4)))  # input: no gradient wanted
    out = x @ w
    calls = []
    real = np.matmul

    def counting(*args, **kw):
        calls.append(tuple(np.shape(a) for a in args[:2]))
        return real(*args, **kw)

    from tapegrad.ops import xp as xp_module

    ns = xp_module.array_ns(np)
    monkeypatch.setattr(ns, "matmul", counting)
    out.sum().backward()
    assert calls == [((4, 5), (5, 3))]  # x.T @ g only: no g @ w.T
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ np.ones((5, 3)))


def test_operators_methods_and_aliases(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    x, y = tg.tensor(a), tg.tensor(b)
    np.testing.assert_allclose((x @ b).numpy(), a @ b)  # ndarray on the right
    np.testing.assert_allclose((a @ y).numpy(), a @ b)  # and on the left (__rmatmul__)
    f32 = tg.ones(2, 3)
    assert (f32 @ b).dtype == tg.float32 and (a.T @ f32).dtype == tg.float32  # no promotion
    np.testing.assert_allclose(x.matmul(y).numpy(), a @ b)
    np.testing.assert_allclose(x.mm(y).numpy(), a @ b)
    np.testing.assert_allclose(tg.bmm(x.unsqueeze(0), y.unsqueeze(0)).numpy(), (a @ b)[None])
    np.testing.assert_allclose(tg.mv(x, y[:, 0]).numpy(), a @ b[:, 0])
    np.testing.assert_allclose(x[0].dot(y[:, 1]).numpy(), a[0] @ b[:, 1])
    np.testing.assert_allclose(tg.outer(x[0], y[0]).numpy(), np.outer(a[0], b[0]))
    np.testing.assert_allclose(tg.inner(x, x).numpy(), np.inner(a, a))


def test_matmul_error_names_both_shapes():
    with pytest.raises(
        ValueError,
        match=r"matmul: shapes \(2, 3\) and \(4, 5\) don't align "
        r"\(dimension 3 != 4\)",
    ):
        tg.ones(2, 3) @ tg.ones(4, 5)
    with pytest.raises(ValueError, match="at least 1 dimension"):
        tg.ones(2, 3) @ tg.tensor(2.0)
    with pytest.raises(ValueError, match="batch dimensions"):
        tg.ones(2, 2, 3) @ tg.ones(3, 3, 4)
    with pytest.raises(RuntimeError, match="two 1-D tensors"):
        tg.dot(tg.ones(2, 2), tg.ones(2))
    with pytest.raises(RuntimeError, match="2-D matrices"):
        tg.mm(tg.ones(2), tg.ones(2, 2))


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("ij->j", [(2, 3)]),
        ("i,j->ij", [(2,), (3,)]),
        ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
        ("ij,ij->", [(2, 3), (2, 3)]),
        ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        ("ji", [(2, 3)]),
    ],
)
def test_einsum_matches_torch(rng, eq, shapes):
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [_leaf(a) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = tg.einsum(eq, *ours), torch.einsum(eq, *theirs)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    v = rng.standard_normal(out.shape)
    g1 = tg.autograd.grad((out * tg.tensor(v)).sum(), ours)
    g2 = torch.autograd.grad((ref * torch.tensor(v)).sum(), theirs)
    for a, b in zip(g1, g2, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    assert gradgradcheck(lambda *t: tg.einsum(eq, *t), tuple(ours))


def test_einsum_accepts_a_list_and_reports_bad_shapes():
    assert tg.einsum("ij,jk", [tg.ones(2, 3), tg.ones(3, 4)]).shape == (2, 4)
    with pytest.raises(ValueError, match=r"einsum 'ij,jk' with operand shapes \(2, 3\), \(4, 4\)"):
        tg.einsum("ij,jk", tg.ones(2, 3), tg.ones(4, 4))


@pytest.mark.parametrize(
    "sa,sb,dims",
    [
        ((3, 4), (3, 4), 2),
        ((3, 4), (4, 2), 1),
        ((3, 4), (4, 3), ([1, 0], [0, 1])),
        ((3, 4, 2), (2, 5), ([2], [0])),
        ((2, 3), (4,), 0),
        ((2, 3, 4), (3, 4, 2), 2),
    ],
)
def test_tensordot_matches_numpy_and_gradcheck(rng, sa, sb, dims):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np_dims = dims if isinstance(dims, int) else tuple(dims)
    out = tg.tensordot(_leaf(a), _leaf(b), dims)
    np.testing.assert_allclose(out.detach().numpy(), np.tensordot(a, b, np_dims))
    assert gradcheck(lambda x, y: tg.tensordot(x, y, dims), (_leaf(a), _leaf(b)))


# ------------------------------------------------------------------ tg.linalg
def _spd(rng, n=3, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a + 3 * np.eye(n)


def test_linalg_functions_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = _spd(rng, 3, (2,))
    b = rng.standard_normal((2, 3, 2))
    vec = rng.standard_normal(3)
    cases = [
        (lambda m, t: tg.linalg.inv(m), lambda m, t: torch.linalg.inv(m)),
        (lambda m, t: tg.linalg.det(m), lambda m, t: torch.linalg.det(m)),
        (lambda m, t: tg.linalg.slogdet(m)[1], lambda m, t: torch.linalg.slogdet(m)[1]),
        (lambda m, t: tg.linalg.solve(m, t), lambda m, t: torch.linalg.solve(m, t)),
    ]
    for ours_fn, ref_fn in cases:
        m, t = _leaf(a), _leaf(b)
        mt, tt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        out, ref = ours_fn(m, t), ref_fn(mt, tt)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
        v = rng.standard_normal(out.shape)
        g1 = tg.autograd.grad((out * tg.tensor(v)).sum(), [m, t], allow_unused=True)
        g2 = torch.autograd.grad((ref * torch.tensor(v)).sum(), [mt, tt], allow_unused=True)
        for x, y in zip(g1, g2, strict=True):
            if y is None:
                assert x is None
            else:
                np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-9)
    # a vector right-hand side, batched or not
    np.testing.assert_allclose(
        tg.linalg.solve(tg.tensor(a[0]), tg.tensor(vec)).numpy(), np.linalg.solve(a[0], vec)
    )
    np.testing.assert_allclose(
        tg.linalg.solve(tg.tensor(a), tg.tensor(b[..., 0])).numpy(),
        torch.linalg.solve(torch.tensor(a), torch.tensor(b[..., 0])).numpy(),
    )
    sign, logabs = tg.linalg.slogdet(tg.tensor(-a[0]))
    ref_sign, ref_logabs = torch.linalg.slogdet(torch.tensor(-a[0]))
    assert sign.item() == ref_sign.item() and not sign.requires_grad
    assert tg.linalg.slogdet(tg.eye(2)).logabsdet.item() == 0.0
    np.testing.assert_allclose(logabs.numpy(), ref_logabs.numpy())


def test_linalg_second_order(rng):
    a = _leaf(_spd(rng))
    assert gradgradcheck(tg.linalg.inv, (a,))
    assert gradgradcheck(tg.linalg.det, (a,))
    assert gradgradcheck(lambda m: tg.linalg.slogdet(m)[1], (a,))
    assert gradgradcheck(lambda m, b: tg.linalg.solve(m, b), (a, _leaf(rng.standard_normal(3))))


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"ord": 1},
        {"ord": float("inf")},
        {"ord": -1},
        {"ord": "fro"},
        {"dim": 1},
        {"dim": (0, 1)},
        {"ord": 3, "dim": 0, "keepdim": True},
    ],
)
def test_linalg_norm_matches_torch(rng, kw):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 4))
    x, xt = _leaf(a), torch.tensor(a, requires_grad=True)
    out, ref = tg.linalg.norm(x, **kw), torch.linalg.norm(xt, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10)


def test_linalg_errors():
    with pytest.raises(RuntimeError, match=r"inv: the matrix \(shape \(2, 2\)\) is singular"):
        tg.linalg.inv(tg.zeros(2, 2))
    with pytest.raises(RuntimeError, match=r"square matrix.*got shape \(2, 3\)"):
        tg.linalg.det(tg.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"B must have shape"):
        tg.linalg.solve(tg.eye(3), tg.ones(2, 2))
    with pytest.raises(RuntimeError, match="ord=3 is not supported; use 'fro', 'nuc'"):
        tg.linalg.norm(tg.ones(2, 2), 3)  # (PyTorch: "Order 3 not supported")


def _nonfinite_matrices(rng, count):
    """Well-conditioned matrices (and batches of them) with some entries inf, -inf or NaN."""
    out = []
    while len(out) < count:
        n = int(rng.integers(1, 5))
        a = rng.standard_normal((2, n, n)) + 3 * np.eye(n)
        hit = rng.random(a.shape) < 0.3
        a[hit] = rng.choice([np.nan, np.inf, -np.inf], hit.sum())
        if hit.any():
            out.append(a)
    return out


def _same_pattern(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    fin = np.isfinite(theirs)
    np.testing.assert_allclose(ours[fin], theirs[fin], rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("ignore")  # PyTorch's own, on some of these
def test_linalg_spreads_inf_and_nan_as_torch(rng):
    """Matrices holding inf or NaN: inv, det, slogdet and solve (values and first-order
    gradients) put NaN, +-inf and finite values where PyTorch's LU does (issue 12)."""
    torch = pytest.importorskip("torch")
    cases = [
        (lambda m, b: tg.linalg.inv(m), lambda m, b: torch.linalg.inv(m)),
        (lambda m, b: tg.linalg.det(m), lambda m, b: torch.linalg.det(m)),
        (lambda m, b: tg.linalg.slogdet(m)[1], lambda m, b: torch.linalg.slogdet(m)[1]),
        (lambda m, b: tg.linalg.solve(m, b), lambda m, b: torch.linalg.solve(m, b)),
    ]
    for a in _nonfinite_matrices(rng, 150):
        b = rng.standard_normal(a.shape[:-1] + (2,))
        sign = tg.linalg.slogdet(tg.tensor(a)).sign
        _same_pattern(sign.numpy(), torch.linalg.slogdet(torch.tensor(a)).sign.numpy())
        for ours_fn, ref_fn in cases:
            m, t = _leaf(a), _leaf(b)
            mt, tt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
            try:
                ref = ref_fn(mt, tt)
            except RuntimeError:  # a zero pivot: singular for PyTorch, and for tapegrad
                with pytest.raises(RuntimeError, match="singular"):
                    ours_fn(m, t)
                continue
            out = ours_fn(m, t)
            _same_pattern(out.detach().numpy(), ref.detach().numpy())
            g1 = tg.autograd.grad(out, [m, t], tg.ones_like(out), allow_unused=True)
            g2 = torch.autograd.grad(ref, [mt, tt], torch.ones_like(ref), allow_unused=True)
            for x, y in zip(g1, g2, strict=True):
                if y is not None:
                    _same_pattern(x.numpy(), y.numpy())


def test_lu_pattern_matches_numpy_on_finite_matrices(rng):
    """The NumPy LU that the non-finite path runs agrees with LAPACK where all is finite."""
    from tapegrad.ops import lu_pattern

    a = rng.standard_normal((3, 4, 4)) + 2 * np.eye(4)
    b = rng.standard_normal((3, 4, 2))
    never = lambda: AssertionError("not singular")  # noqa: E731
    np.testing.assert_allclose(lu_pattern.inv(a, never), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(lu_pattern.solve(a, b, never), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(lu_pattern.det(a), np.linalg.det(a), rtol=1e-10)
    sign, logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(lu_pattern.logabsdet(a), logabs, rtol=1e-10)
    np.testing.assert_array_equal(lu_pattern.sign_of_det(a), sign)
    at_inv = np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(lu_pattern.adjoint_solve(a, b), at_inv @ b, rtol=1e-10)
    scaled = lu_pattern.transposed_solve_scaled_identity(a, np.array([1.0, 2.0, 3.0]), False)
    np.testing.assert_allclose(scaled, at_inv * np.array([1.0, 2.0, 3.0])[:, None, None])
