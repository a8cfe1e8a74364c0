"""The structure functions (ops/structure.py) and order statistics (ops/order_stats.py):
values, indices (ties, NaN, int64), keepdim and errors against PyTorch where installed,
exact values otherwise; gradients by finite differences in float64 (gradcheck,
gradgradcheck) and against PyTorch's."""

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.compat import torch as facade

nan = math.nan


def _leaf(rng, *shape):
    return tg.tensor(rng.standard_normal(shape), dtype=tg.float64, requires_grad=True)


def _torch():
    return pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _same(got, want):
    """tapegrad result vs torch result: values, dtype, structure (tuples elementwise)."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
        return
    g, w = _np(got), _np(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert str(g.dtype) == str(w.dtype).replace("torch.", ""), (g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-12, equal_nan=True)


def _both(torch, fn_tg, fn_torch, arrays, weights_rng=None, no_torch_grad=False):
    """Compare values and (for float inputs) gradients of fn(*tensors) in both libraries."""
    xs = [tg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ts = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    got, want = fn_tg(*xs), fn_torch(*ts)
    _same(got, want)
    g0 = got[0] if isinstance(got, tuple) else got
    w0 = want[0] if isinstance(want, tuple) else want
    if g0.dtype.kind != "f" or not w0.requires_grad or no_torch_grad:
        return
    rng = weights_rng or np.random.default_rng(0)
    w = rng.standard_normal(tuple(w0.shape))
    (g0 * tg.tensor(w)).sum().backward()
    (w0 * torch.tensor(w)).sum().backward()
    for x, t in zip(xs, ts, strict=True):
        if t.grad is not None:
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-10)


# ------------------------------------------------------------------ against torch
R = np.random.default_rng(7)
A34 = R.standard_normal((3, 4))
A234 = R.standard_normal((2, 3, 4))
TIES = np.array([[3.0, 1.0, 1.0, 3.0, 2.0], [2.0, 2.0, 5.0, 5.0, 5.0], [1.0, nan, 0.0, nan, 4.0]])
INTS = np.array([3, 1, 2, 1, 3, 3, 0])

CASES = {
    "roll": (lambda m, x: m.roll(x, 1, 1), [A34]),
    "roll_multi": (lambda m, x: m.roll(x, (2, -1), (0, 2)), [A234]),
    "roll_flat": (lambda m, x: m.roll(x, 5), [A34]),
    "diff": (lambda m, x: m.diff(x), [A34]),
    "diff_n2_dim0": (lambda m, x: m.diff(x, 2, 0), [A234]),
    "diff_pre_app": (lambda m, x, p, a: m.diff(x, 1, 1, p, a), [A34, A34[:, :2], A34[:, :1]]),
    "diff_bool": (lambda m, x: m.diff(x), [np.array([True, False, False, True])]),
    "addmm": (
        lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0),
        [A34[:, :3].copy(), A34, A34.T.copy()],
    ),
    "addmm_beta0": (
        lambda m, c, a, b: m.addmm(c, a, b, beta=0),
        [A34[:1, :3] * nan, A34, A34.T.copy()],
    ),
    "baddbmm": (
        lambda m, c, a, b: m.baddbmm(c, a, b, alpha=3),
        [A234[:, :, :3], A234, np.swapaxes(A234, 1, 2).copy()],
    ),
    "addmv": (lambda m, c, a, v: m.addmv(c, a, v, beta=2), [A34[:, 0].copy(), A34, A34[0].copy()]),
    "median_all": (lambda m, x: m.median(x), [TIES[:2]]),
    "median_dim": (lambda m, x: m.median(x, 1), [TIES]),
    "median_keepdim": (lambda m, x: m.median(x, 0, keepdim=True), [A34]),
    "median_all_nan": (lambda m, x: m.median(x), [TIES]),
    "nanmedian_all": (lambda m, x: m.nanmedian(x), [TIES]),
    "nanmedian_dim": (lambda m, x: m.nanmedian(x, 1), [TIES]),
    "nanmedian_all_nan_row": (lambda m, x: m.nanmedian(x, 1), [np.array([[nan, nan], [1.0, 2.0]])]),
    "median_0d": (lambda m, x: m.median(x, 0), [np.array(3.0)]),
    "median_empty_rows": (lambda m, x: m.median(x, 1), [np.zeros((0, 3))]),
    "nansum": (lambda m, x: m.nansum(x, 1), [TIES]),
    "nansum_all": (lambda m, x: m.nansum(x), [TIES]),
    "nanmean": (lambda m, x: m.nanmean(x, 0, keepdim=True), [TIES]),
    "std_mean": (lambda m, x: m.std_mean(x, 1), [A34]),
    "var_mean": (lambda m, x: m.var_mean(x, (0, 2), correction=0, keepdim=True), [A234]),
    "var_mean_unbiased": (lambda m, x: m.var_mean(x, 1, unbiased=False), [A34]),
    "cross": (lambda m, a, b: m.cross(a, b, dim=0), [A34[:3], A34[:3, ::-1].copy()]),
    "cross_last": (
        lambda m, a, b: m.cross(a, b, dim=-1),
        [A234[:, :, :3].copy(), A234[::-1, :, 1:].copy()],
    ),
    "cdist2": (lambda m, a, b: m.cdist(a, b), [A34, A234[0]]),
    "cdist1": (lambda m, a, b: m.cdist(a, b, p=1), [A34, A234[1]]),
    "cdist_inf": (lambda m, a, b: m.cdist(a, b, p=float("inf")), [A34, A234[1]]),
    "cdist_zero": (lambda m, a, b: m.cdist(a, b), [A34, A34[::-1].copy()]),
    "cdist_batched": (lambda m, a, b: m.cdist(a, b), [A234, A234[:, :2]]),
    "take": (lambda m, x: m.take(x, m.tensor([0, 5, -1, 5])), [A34]),
    "kron": (lambda m, a, b: m.kron(a, b), [A34[:2, :2].copy(), A34[1:, 1:].copy()]),
    "kron_1d_2d": (lambda m, a, b: m.kron(a, b), [A34[0].copy(), A34[:2, :3].copy()]),
    "block_diag": (
        lambda m, a, b, c: m.block_diag(a, b, c),
        [A34[:2], A34[0, :3].copy(), np.array(2.0)],
    ),
    "cartesian_prod": (lambda m, a, b: m.cartesian_prod(a, b), [A34[0].copy(), A34[1, :2].copy()]),
    "broadcast_tensors": (
        lambda m, a, b: m.broadcast_tensors(a, b),
        [A34[:, :1].copy(), A34[0].copy()],
    ),
    "cosine_similarity": (lambda m, a, b: m.cosine_similarity(a, b), [A34, A34[::-1].copy()]),
    "cosine_similarity_zero": (
        lambda m, a, b: m.cosine_similarity(a, b, 0),
        [np.zeros(3), A34[0, :3].copy()],
    ),
    "cummax": (lambda m, x: m.cummax(x, 1), [TIES]),
    "cummin": (lambda m, x: m.cummin(x, 1), [TIES]),
    "cummax_dim0": (lambda m, x: m.cummax(x, 0), [A34]),
    "mode": (lambda m, x: m.mode(x, 1), [TIES]),
    "mode_ints": (lambda m, x: m.mode(x), [INTS]),
    "mode_keepdim": (lambda m, x: m.mode(x, 0, True), [np.round(A34)]),
    "quantile": (lambda m, x: m.quantile(x, 0.3), [A34]),
    "quantile_dim": (
        lambda m, x: m.quantile(x, m.tensor([0.0, 0.25, 0.9, 1.0], dtype=m.float64), 1),
        [A34],
    ),
    "quantile_keepdim": (
        lambda m, x: m.quantile(x, m.tensor([0.5, 0.7], dtype=m.float64), 0, True),
        [A234],
    ),
    "quantile_all_keepdim": (lambda m, x: m.quantile(x, 0.5, keepdim=True), [A34]),
    "quantile_nan": (lambda m, x: m.quantile(x, 0.5, 1), [TIES]),
    "nanquantile": (lambda m, x: m.nanquantile(x, 0.4, 1), [TIES]),
    "logcumsumexp": (lambda m, x: m.logcumsumexp(x, 1), [A34 * 50]),
    "unique": (lambda m, x: m.unique(x, return_inverse=True, return_counts=True), [INTS]),
    "unique_dim": (
        lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
        [np.array([[1, 2], [1, 2], [0, 1]])],
    ),
    "unique_consecutive": (
        lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True),
        [np.array([1, 1, 2, 2, 3, 1, 1])],
    ),
    "unique_consecutive_dim": (
        lambda m, x: m.unique_consecutive(x, dim=0),
        [np.array([[1, 2], [1, 2], [0, 1]])],
    ),
    "searchsorted": (
        lambda m, s, v: m.searchsorted(s, v),
        [np.array([1, 3, 5, 7]), np.array([[0, 3, 6, 9]])],
    ),
    "searchsorted_right": (
        lambda m, s, v: m.searchsorted(s, v, right=True),
        [np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 5], [4, 0]])],
    ),
    "bucketize": (
        lambda m, x, b: m.bucketize(x, b, right=True),
        [np.array([[1, 5], [6, 9]]), np.array([1, 5, 9])],
    ),
    "bincount": (lambda m, x: m.bincount(x), [INTS]),
    "bincount_weights": (
        lambda m, x, w: m.bincount(x, w, minlength=6),
        [INTS, R.standard_normal(7)],
    ),
    "isin": (lambda m, a, b: m.isin(a, b), [INTS, np.array([1, 3])]),
    "isin_invert": (lambda m, a, b: m.isin(a, b, invert=True), [INTS, np.array([1, 3])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    torch = _torch()
    fn, arrays = CASES[name]
    if name.startswith("cosine"):
        import tapegrad.nn.functional as F

        _both(torch, lambda *x: fn(F, *x), lambda *x: fn(torch.nn.functional, *x), arrays)
    # PyTorch has no derivative for bincount's weights (tapegrad has: checked below)
    no_grad = name == "bincount_weights"
    _both(torch, lambda *x: fn(tg, *x), lambda *x: fn(torch, *x), arrays, None, no_grad)


def test_tril_triu_indices_match_torch():
    torch = _torch()
    for r, c, o in [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 2, 0), (3, 3, 5)]:
        _same(tg.tril_indices(r, c, o), torch.tril_indices(r, c, o))
        _same(tg.triu_indices(r, c, o), torch.triu_indices(r, c, o))


# ------------------------------------------------------------------ exact values
def test_exact_values_without_torch():
    assert tg.roll(tg.tensor([1, 2, 3, 4]), -1).tolist() == [2, 3, 4, 1]
    assert tg.diff(tg.tensor([1, 4, 9, 16]), n=2).tolist() == [2, 2]
    assert tg.median(tg.tensor([1.0, 4.0, 2.0, 3.0])).item() == 2.0
    v, i = tg.median(tg.tensor([[3.0, 1.0, 1.0, 3.0]]), 1)
    assert v.tolist() == [1.0] and i.tolist() == [2] and i.dtype == np.int64
    assert tg.mode(tg.tensor([2, 1, 2, 1, 3])).indices.item() == 3
    assert tg.cummax(tg.tensor([1.0, 3.0, 3.0, 2.0]), 0).indices.tolist() == [0, 1, 2, 2]
    assert tg.quantile(tg.tensor([1.0, 2.0, 3.0, 4.0]), 0.5).item() == 2.5
    assert tg.nansum(tg.tensor([1.0, nan, 2.0])).item() == 3.0
    assert math.isnan(tg.nanmean(tg.tensor([nan])).item())
    assert tg.bincount(tg.tensor([0, 2, 2])).tolist() == [1, 0, 2]
    assert tg.tril_indices(2, 2).tolist() == [[0, 1, 1], [0, 0, 1]]
    assert tg.cross(tg.tensor([1.0, 0, 0]), tg.tensor([0.0, 1, 0]), dim=0).tolist() == [0, 0, 1]
    assert tg.kron(tg.tensor([1, 2]), tg.tensor([1, 10])).tolist() == [1, 10, 2, 20]
    assert tg.unique(tg.tensor([3, 1, 3])).tolist() == [1, 3]
    assert tg.searchsorted(tg.tensor([1, 3, 5]), 3).item() == 1
    assert tg.isin(tg.tensor([1, 2]), 2).tolist() == [False, True]
    assert tg.block_diag(tg.tensor([[1, 2]]), tg.tensor(3)).tolist() == [[1, 2, 0], [0, 0, 3]]
    assert tg.cartesian_prod(tg.tensor([1, 2]), tg.tensor([3])).tolist() == [[1, 3], [2, 3]]
    np.testing.assert_allclose(tg.logcumsumexp(tg.tensor([0.0, 0.0]), 0).numpy(), [0, math.log(2)])


# ------------------------------------------------------------------ gradients
GRADS = {
    "roll": lambda x: tg.roll(x, (1, -2), (0, 1)),
    "diff": lambda x: tg.diff(x, 2, 1, prepend=x[:, :1] * 2),
    "take": lambda x: tg.take(x, tg.tensor([[0, 3], [3, -1]])),
    "cross": lambda x: tg.cross(x[:, :3], x[:, 1:], dim=1),
    "kron": lambda x: tg.kron(x, x[:2, :2]),
    "addmm": lambda x: tg.addmm(x[:, :1], x, x.t(), beta=0.5, alpha=-2),
    "median_dim": lambda x: tg.median(x, 1).values,
    "median_all": lambda x: tg.median(x),
    "nanmedian": lambda x: tg.nanmedian(x, 0, keepdim=True).values,
    "mode": lambda x: tg.mode(x, 1).values,
    "cummax": lambda x: tg.cummax(x, 1).values,
    "cummin": lambda x: tg.cummin(x, 0).values,
    "quantile": lambda x: tg.quantile(x, tg.tensor([0.1, 0.5, 0.8], dtype=tg.float64), 1),
    "nanquantile": lambda x: tg.nanquantile(x, 0.3),
    "nansum": lambda x: tg.nansum(x, 0),
    "nanmean": lambda x: tg.nanmean(x, 1),
    "std_mean": lambda x: tg.std_mean(x, 1)[0] + tg.std_mean(x, 1)[1],
    "cdist2": lambda x: tg.cdist(x, x[:2] + 0.5),
    "cdist1": lambda x: tg.cdist(x, x[:2] + 0.5, p=1),
    "cosine_similarity": lambda x: tg.cosine_similarity(x, x[::-1] if False else x.flip(0)),
    "block_diag": lambda x: tg.block_diag(x, x[0]),
    "cartesian_prod": lambda x: tg.cartesian_prod(x[0], x[1]),
    "bincount": lambda x: tg.bincount(tg.tensor([0, 2, 2, 1]), x[0], minlength=5),
    "logcumsumexp": lambda x: tg.logcumsumexp(x, 1),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_by_finite_differences(rng, name):
    x = _leaf(rng, 3, 4)
    assert gradcheck(GRADS[name], [x])
    assert gradgradcheck(lambda t: GRADS[name](t) ** 2, [x])


def test_median_full_gradient_is_shared_by_ties_as_torch():
    torch = _torch()
    a = np.array([2.0, 1.0, 2.0, 3.0])  # lower median 2, twice
    x, t = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tg.median(x).backward()
    torch.median(t).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_cdist_gradient_at_zero_distance_is_zero_as_torch():
    torch = _torch()
    a = np.array([[0.0, 0.0], [1.0, 1.0]])
    for p in (2.0, 1.0):
        x, t = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        tg.cdist(x, x, p).sum().backward()
        torch.cdist(t, t, p).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


# ------------------------------------------------------------------ methods and metadata
def test_tensor_methods_and_metadata_match_torch():
    torch = _torch()
    a = np.arange(12.0).reshape(3, 4)
    x, t = tg.tensor(a), torch.tensor(a)
    assert x.t().stride() == t.t().stride() and x.stride(1) == t.stride(1)
    assert x[:, ::2].stride() == t[:, ::2].stride()
    assert x.nelement() == 12 and x.ndimension() == 2 and x.is_floating_point()
    assert not tg.tensor([1]).is_floating_point() and tg.is_floating_point(x)
    assert tg.is_tensor(x) and not tg.is_tensor(a) and tg.numel(x) == 12
    assert x.type_as(tg.tensor([1])).dtype == np.int64
    assert x.data_ptr() == a.ctypes.data or x.data_ptr() == x.numpy().ctypes.data
    assert x[1:].data_ptr() == x.data_ptr() + 4 * 8
    for method, args in [
        ("unsqueeze_", (1,)),
        ("squeeze_", ()),
        ("t_", ()),
        ("transpose_", (0, 1)),
    ]:
        b = a if method == "t_" else a[None]
        xi, ti = tg.tensor(b), torch.tensor(b)
        assert getattr(xi, method)(*args) is xi
        getattr(ti, method)(*args)
        assert tuple(xi.shape) == tuple(ti.shape)
        # a size-1 dimension's stride is arbitrary (NumPy and PyTorch choose differently)
        big = [i for i, n in enumerate(xi.shape) if n > 1]
        assert [xi.stride(i) for i in big] == [ti.stride(i) for i in big]
        np.testing.assert_array_equal(xi.numpy(), ti.numpy())
    for name in ["roll", "diff", "median", "nansum", "cummax", "quantile", "take", "kron"]:
        assert hasattr(x, name) and hasattr(facade, name)


def test_inplace_view_methods_record_and_refuse_leaves():
    x = tg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.unsqueeze_(0)
    y = x * 2
    y.unsqueeze_(0).t_() if False else y.unsqueeze_(0)
    assert y.shape == (1, 2, 3)
    (y * tg.arange(3.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile([0.0, 2.0, 4.0], (2, 1)))


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "call",
    [
        lambda: tg.roll(tg.ones(2, 3), 1, 5),
        lambda: tg.diff(tg.ones(2, 3), dim=2),
        lambda: tg.median(tg.ones(2, 3), 2),
        lambda: tg.cummax(tg.ones(2, 3), -3),
        lambda: tg.mode(tg.ones(2), 1),
        lambda: tg.quantile(tg.ones(2, 3), 0.5, 3),
        lambda: tg.logcumsumexp(tg.ones(2), 1),
        lambda: tg.cross(tg.ones(2, 3), tg.ones(2, 3), dim=2),
    ],
)
def test_bad_dim_names_function_dim_and_range(call):
    with pytest.raises(IndexError, match=r"\w+\(\): dim -?\d+ is out of range.*\[-\d, \d\]"):
        call()


def test_misuse_raises_named_errors_without_numpy_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="quantile"):
            tg.quantile(tg.ones(3), 1.5)
        with pytest.raises(RuntimeError, match="quantile"):
            tg.quantile(tg.tensor([]), 0.5)
        with pytest.raises(IndexError, match="take"):
            tg.take(tg.ones(3), tg.tensor([3]))
        with pytest.raises(RuntimeError, match="bincount"):
            tg.bincount(tg.tensor([-1]))
        with pytest.raises(RuntimeError, match="addmm"):
            tg.addmm(tg.ones(3, 3), tg.ones(2, 2), tg.ones(2, 2))
        with pytest.raises(IndexError, match="median"):
            tg.median(tg.zeros(2, 0), 1)
        with pytest.raises(RuntimeError, match="cross"):
            tg.cross(tg.ones(4), tg.ones(4))
        with pytest.raises(RuntimeError, match="broadcast_tensors"):
            tg.broadcast_tensors(tg.ones(2), tg.ones(3))
        assert math.isnan(tg.median(tg.tensor([])).item())
        assert math.isnan(tg.nanmean(tg.tensor([nan, nan])).item())
        assert tg.cummax(tg.zeros(0), 0).indices.dtype == np.int64
