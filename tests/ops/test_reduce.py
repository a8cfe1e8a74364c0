"""Reductions: dim/axis handling, keepdim, dtypes, max/min forms, ties, var/std correction,
norms, prod with zeros, cumsum, all/any, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.ops.registry import OPS


def _f64(a, requires_grad=False):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


@pytest.mark.parametrize(
    "name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std", "norm", "all", "any"]
)
def test_dim_axis_and_keepdim_aliases(name, rng):
    x = _f64(rng.standard_normal((2, 3, 4)))
    fn = getattr(tg, name)
    ref = fn(x, dim=1)
    positional = [fn(x, 1)] if name != "norm" else []  # norm's second argument is p
    for out in [fn(x, axis=1), fn(x, dim=-2), getattr(x, name)(dim=1), *positional]:
        np.testing.assert_allclose(out._data, ref._data)
    kept = fn(x, dim=(0, 2), keepdim=True)
    assert kept.shape == (1, 3, 1)
    np.testing.assert_allclose(fn(x, axis=(-1, 0), keepdims=True)._data, kept._data)
    assert fn(x, dim=(0, 2)).shape == (3,)
    with pytest.raises(TypeError, match="both dim=1 and axis=1"):
        fn(x, dim=1, axis=1)


@pytest.mark.parametrize(
    "name", ["sum", "mean", "amax", "argmax", "var", "logsumexp", "cumsum", "all", "norm"]
)
def test_bad_dims_raise_index_errors_naming_the_range(name):
    x = tg.ones(2, 3)
    with pytest.raises(
        IndexError,
        match=rf"{name}\(\): Dimension out of range \(expected to be in "
        r"range of \[-2, 1\], but got 2\)",
    ):
        getattr(tg, name)(x, dim=2)
    with pytest.raises(IndexError, match=r"but got -3"):
        getattr(tg, name)(x, dim=-3)


def test_dim_type_and_duplicate_errors():
    x = tg.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"sum\(\): dim \(1, -1\) names a dimension more than"):
        tg.sum(x, dim=(1, -1))
    with pytest.raises(TypeError, match=r"dim must be an int or a tuple of ints, got 1.5"):
        tg.mean(x, dim=1.5)
    with pytest.raises(TypeError, match="for several use amax"):
        tg.max(x, dim=(0, 1))


def test_empty_dims_and_zero_dim_tensors_follow_pytorch():
    x = tg.ones(2, 3)
    assert tg.sum(x, dim=()).shape == () and tg.sum(x, dim=()).item() == 6.0
    assert tg.mean(x, dim=[]).item() == 1.0
    s = tg.tensor(4.0, requires_grad=True)
    for out in (s.sum(0), s.sum(-1), s.mean(dim=0, keepdim=True), s.amax(0), s.logsumexp(0)):
        assert out.shape == () and out.item() == pytest.approx(4.0)
    assert s.max(dim=0).indices.item() == 0 and s.cumsum(0).item() == 4.0
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        s.sum(1)


def test_sum_mean_dtypes():
    i = tg.tensor([[1, 2], [3, 4]])
    assert i.sum().dtype == np.int64 and i.sum().item() == 10
    assert tg.tensor([True, True, False]).sum().item() == 2
    assert i.int().sum(dim=0).dtype == np.int64  # integers accumulate in int64, as in PyTorch
    m = i.mean(dtype=tg.float64)
    assert m.dtype == np.float64 and m.item() == 2.5
    with pytest.raises(
        RuntimeError,
        match=r"mean\(\): could not infer the output dtype: the input "
        r"is int64; pass a floating dtype",
    ):
        i.mean()
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    s = tg.sum(x, dtype="float64")
    assert s.dtype == np.float64
    s.backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [1.0, 1.0]
    for out in (
        x.sum(),
        x.mean(),
        x.var(),
        x.std(),
        x.prod(),
        x.norm(),
        x.logsumexp(0),
        x.amax(),
        x.cumsum(0),
    ):
        assert out.dtype == np.float32


def test_sum_and_mean_gradients_broadcast_back(rng):
    x = _f64(rng.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: tg.sum(t, dim=(0, 2)), (x,))
    assert gradcheck(lambda t: tg.mean(t, dim=-1, keepdim=True), (x,))
    assert gradgradcheck(lambda t: tg.mean(t * t, dim=1), (x,))
    y = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y.mean(dim=0).sum().backward()
    assert y.grad.tolist() == [[0.5, 0.5], [0.5, 0.5]]


def test_max_min_forms():
    x = tg.tensor([[1.0, 7.0, 7.0], [4.0, 2.0, 4.0]], requires_grad=True)
    assert x.max().item() == 7.0 and tg.min(x).item() == 1.0
    values, indices = tg.max(x, dim=1)
    assert values.tolist() == [7.0, 4.0] and indices.tolist() == [1, 0]  # first of the ties
    r = x.min(1, keepdim=True)
    assert r.values.shape == (2, 1) and r.indices.tolist() == [[0], [1]]
    assert type(r).__name__ == "min" and r._fields == ("values", "indices")
    assert tg.max(x, axis=0).values.tolist() == [4.0, 7.0, 7.0]
    other = tg.tensor([5.0, 0.0, 9.0])
    assert tg.max(x, other).tolist() == [[5.0, 7.0, 9.0], [5.0, 2.0, 9.0]]
    assert tg.min(x, other).tolist() == [[1.0, 0.0, 7.0], [4.0, 0.0, 4.0]]
    assert tg.argmax(x).item() == 1 and tg.argmin(x, dim=1).tolist() == [0, 1]
    assert tg.argmax(x, dim=0, keepdim=True).tolist() == [[1, 0, 0]]
    assert not tg.argmax(x).requires_grad


def test_ties_share_the_gradient_equally():
    x = tg.tensor([[1.0, 7.0, 7.0], [4.0, 2.0, 4.0]], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]
    x.grad = None
    tg.max(x, dim=1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]
    x.grad = None
    tg.amin(x, dim=0).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    y = tg.tensor([3.0, 3.0, 3.0, 1.0], requires_grad=True)
    (tg.amax(y) * 3).backward()
    assert y.grad.tolist() == [1.0, 1.0, 1.0, 0.0]
    z = tg.tensor([2.0, -2.0, 1.0], requires_grad=True)
    tg.norm(z, p=float("inf")).backward()
    assert z.grad.tolist() == [0.5, -0.5, 0.0]


def test_var_std_correction_matches_torch(rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 5))
    x, t = _f64(a), torch.tensor(a)
    cases = [
        ((), {}, (), {}),
        ((1,), {}, (1,), {}),
        ((), {"correction": 0}, (), {"correction": 0}),
        ((0,), {"unbiased": False, "keepdim": True}, (0,), {"unbiased": False, "keepdim": True}),
        ((False,), {}, (False,), {}),
        ((), {"dim": (0, 1), "correction": 2}, (), {"dim": (0, 1), "correction": 2}),
    ]
    for args, kw, targs, tkw in cases:
        for name in ("var", "std"):
            ours = getattr(tg, name)(x, *args, **kw)
            theirs = getattr(torch, name)(t, *targs, **tkw)
            np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match="either correction= or unbiased="):
        tg.var(x, unbiased=True, correction=1)


def test_var_of_one_element_is_nan_without_warnings():
    out = tg.var(tg.tensor([2.0]))
    assert np.isnan(out.item())
    assert tg.var(tg.tensor([2.0]), correction=0).item() == 0.0
    x = tg.tensor([2.0], requires_grad=True)
    tg.var(x).backward()  # NaN, as in PyTorch, and no NumPy warning
    assert np.isnan(x.grad.item())


def test_std_of_constant_has_a_zero_gradient():
    x = tg.tensor([2.0, 2.0, 2.0], requires_grad=True)
    x.std().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("p", ["fro", 2, 1, 3, 0.5, float("inf"), -float("inf"), 0])
def test_norm_matches_torch(p, rng):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((3, 4))
    x = _f64(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    for kwargs in ({}, {"dim": 1}, {"dim": (0,), "keepdim": True}):
        tp = 2 if p == "fro" else p
        ours = tg.norm(x, p=p, **kwargs)
        theirs = torch.linalg.vector_norm(t, tp, **kwargs)
        np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-12)
        w = rng.standard_normal(ours.shape)
        (g,) = tg.autograd.grad((ours * _f64(w)).sum(), [x], allow_unused=True)
        (tgrad,) = torch.autograd.grad((theirs * torch.tensor(w)).sum(), [t], allow_unused=True)
        if tgrad is None or p == 0:
            assert g is None or not np.any(g._data)
        else:
            np.testing.assert_allclose(g._data, tgrad.numpy(), rtol=1e-10, atol=1e-12)


def test_norm_of_zero_vector_has_zero_gradient_and_bad_p_raises():
    x = tg.zeros(3, requires_grad=True)
    tg.norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert tg.norm(tg.tensor([3.0, 4.0])).item() == 5.0
    with pytest.raises(RuntimeError, match="p='nuc' needs a 2-D input"):
        tg.norm(x, p="nuc")  # the nuclear norm is a matrix norm (PyTorch refuses a vector too)
    with pytest.raises(ValueError):
        tg.norm(x, p="fro2")


def test_logsumexp_is_stable():
    x = tg.tensor([[1000.0, 1000.0], [-np.inf, -np.inf]], dtype="float64", requires_grad=True)
    out = tg.logsumexp(x, dim=1)
    np.testing.assert_allclose(out._data, [1000.0 + np.log(2.0), -np.inf])
    y = _f64([[-800.0, 0.0, 3.0]], requires_grad=True)
    tg.logsumexp(y, 1).sum().backward()
    e = np.exp(y._data - y._data.max())
    np.testing.assert_allclose(y.grad._data, e / e.sum())


def test_prod_gradients_with_zeros_match_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 4.0]])
    for kwargs, tkw in (({"dim": 1}, {"dim": 1}), ({}, {})):
        x = _f64(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        tg.prod(x, **kwargs).sum().backward()
        torch.prod(t, **tkw).sum().backward()
        np.testing.assert_allclose(x.grad._data, t.grad.numpy())
    assert tg.prod(tg.tensor([[1, 2], [3, 4]]), dim=0).tolist() == [3, 8]


def test_cumsum():
    torch = pytest.importorskip("torch")
    a = np.arange(12.0).reshape(3, 4) / 7
    for dim in (0, 1, -1):
        x = _f64(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        out = tg.cumsum(x, dim=dim)
        ref = torch.cumsum(t, dim=dim)
        np.testing.assert_allclose(out._data, ref.detach().numpy())
        w = np.cos(a)
        (out * _f64(w)).sum().backward()
        (ref * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad._data, t.grad.numpy(), atol=1e-12)
    assert tg.cumsum(tg.tensor([1, 2, 3]), axis=0, dtype="float32").dtype == np.float32
    with pytest.raises(TypeError, match="missing the dimension; pass dim="):
        tg.cumsum(tg.ones(3))


def test_cumprod_gradients_with_zeros_match_torch(rng):
    torch = pytest.importorskip("torch")
    a = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 0.0, 5.0, 1.0], [1.5, -2.0, 4.0, 0.0]])
    w = rng.standard_normal(a.shape)
    for dim in (1, 0):
        x = _f64(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        out = tg.cumprod(x, dim=dim)
        ref = torch.cumprod(t, dim=dim)
        np.testing.assert_allclose(out._data, ref.detach().numpy())
        (out * _f64(w)).sum().backward()
        (ref * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(x.grad._data, t.grad.numpy(), atol=1e-12)
    assert tg.tensor([1, 2, 3]).cumprod(0).tolist() == [1, 2, 6]
    with pytest.raises(TypeError, match="missing the dimension"):
        tg.cumprod(tg.ones(2))


def test_all_any():
    b = tg.tensor([[True, False], [True, True]])
    assert tg.all(b).item() is False and tg.any(b).item() is True
    assert b.all(dim=1).tolist() == [False, True]
    assert b.any(0, keepdim=True).tolist() == [[True, True]]
    assert tg.all(tg.tensor([1.0, 2.0])).item() is True


def test_methods_exist_for_every_reduction():
    x = tg.ones(2, 3)
    for name in (
        "sum",
        "mean",
        "prod",
        "amax",
        "amin",
        "max",
        "min",
        "argmax",
        "argmin",
        "var",
        "std",
        "logsumexp",
        "norm",
        "cumsum",
        "cumprod",
        "all",
        "any",
    ):
        assert callable(getattr(x, name))


def test_higher_order_through_reductions(rng):
    x = _f64(rng.standard_normal((3, 4)), requires_grad=True)
    for fn in (
        lambda t: tg.var(t, dim=1),
        lambda t: tg.std(t, dim=0),
        tg.logsumexp,
        lambda t: tg.norm(t, dim=1),
        lambda t: tg.prod(t, dim=1),
        tg.amax,
        lambda t: tg.cumsum(t * t, dim=0),
    ):
        assert gradgradcheck(fn, (x,))


def test_mean_of_nothing_is_nan():
    assert np.isnan(tg.zeros(0).mean().item())
    assert np.isnan(tg.zeros(2, 0).mean(dim=1)._data).all()
    assert tg.zeros(0).sum().item() == 0.0


@st.composite
def _tensor_and_dims(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    data = draw(
        st.lists(st.floats(-10, 10), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
    )
    ndim = len(shape)
    dims = draw(
        st.one_of(
            st.none(),
            st.integers(-max(ndim, 1), max(ndim, 1) - 1),
            st.sets(st.integers(0, max(ndim, 1) - 1), max_size=ndim).map(tuple),
        )
    )
    return np.array(data, dtype=np.float64).reshape(shape), dims, draw(st.booleans())


def _np_axis(dims, ndim):
    if dims is None or dims == () or ndim == 0:
        return None
    return tuple(d % ndim for d in dims) if isinstance(dims, tuple) else dims % ndim


@settings(max_examples=60, deadline=None)
@given(_tensor_and_dims())
def test_reductions_agree_with_numpy(case):
    a, dims, keep = case
    axis = _np_axis(dims, a.ndim)
    x = _f64(a, requires_grad=True)
    for name, ref in (("sum", np.sum), ("mean", np.mean), ("amax", np.max), ("prod", np.prod)):
        out = getattr(tg, name)(x, dim=dims, keepdim=keep)
        expected = ref(a, axis=axis, keepdims=keep)
        np.testing.assert_allclose(out._data, expected, rtol=1e-12, atol=1e-12)
    out = tg.sum(x * x, dim=dims, keepdim=keep)
    out.backward(tg.ones(*out.shape, dtype="float64"))
    np.testing.assert_allclose(x.grad._data, 2 * a)


# ------------------------------------------------ the op table's reductions on a 0-d input
def _zero_d_pair(torch, value=1.7):
    return (
        tg.tensor(np.float64(value), requires_grad=True),
        torch.tensor(value, dtype=torch.float64, requires_grad=True),
    )


@pytest.mark.parametrize(
    "name, params",
    [
        ("sum", {}),
        ("mean", {}),
        ("prod", {}),
        ("amax", {}),
        ("logsumexp", {}),
        ("var", {"ddof": 0}),
        ("var", {"ddof": 1}),  # one element, correction 1: NaN, as PyTorch
        ("std", {"ddof": 0}),
        ("std", {"ddof": 1}),
    ],
)
@pytest.mark.parametrize("axis", [0, -1, (0,), (-1,)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # PyTorch's, for ddof=1
def test_table_reductions_take_dim_0_and_minus_1_of_a_0d_input(name, params, axis, keepdims):
    """PyTorch lends a 0-d tensor one dimension (dim 0 or -1): the internal ops, which take
    axes unmapped when rules or the fuzz call them, accept it too (issue 12)."""
    torch = pytest.importorskip("torch")
    op = OPS[name]
    x, t = _zero_d_pair(torch)
    out = op(x, axis=axis, keepdims=keepdims, **params)
    ref = op.torch_ref(torch, t, axis=axis, keepdims=keepdims, **params)
    assert out.shape == tuple(ref.shape) == ()
    np.testing.assert_allclose(out._data, ref.detach().numpy())
    (g,) = tg.autograd.grad(out, [x])
    (h,) = torch.autograd.grad(ref, [t])
    np.testing.assert_allclose(g._data, h.numpy())


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "var", "std", "cumsum", "cumprod"])
def test_table_ops_refuse_other_dims_of_a_0d_input(name):
    op = OPS[name]
    x = tg.tensor(np.float64(1.5))
    with pytest.raises(IndexError, match=rf"{name}.*range of \[-1, 0\].*got 1.*0-d"):
        op(x, axis=1)
    if name not in ("cumsum", "cumprod"):  # those take one int
        with pytest.raises(RuntimeError, match="appears multiple times"):
            op(x, axis=(0, -1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [0, -1])
def test_table_scans_keep_a_0d_input_0d(name, axis):
    torch = pytest.importorskip("torch")
    x, t = _zero_d_pair(torch, -0.6)
    out = OPS[name](x, axis=axis)
    ref = getattr(torch, name)(t, dim=axis)
    assert out.shape == () and np.isclose(out.item(), ref.item())
    (g,) = tg.autograd.grad(out, [x])
    assert g.item() == torch.autograd.grad(ref, [t])[0].item() == 1.0


def _patterns_agree(ours, theirs):
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isposinf(ours), np.isposinf(theirs))
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    fin = np.isfinite(theirs)
    np.testing.assert_allclose(ours[fin], theirs[fin], rtol=1e-12, atol=1e-12)


def test_cumprod_gradient_spreads_inf_and_nan_as_torch(rng):
    """Rows holding zeros beside infs or NaNs: the gradient is PyTorch's term by term (its
    O(n) formula masks what lies past the first zero), not NaN all along the row."""
    torch = pytest.importorskip("torch")
    values = [0.0, 0.0, np.inf, -np.inf, np.nan, 0.5, -2.0, 1.3]
    x = rng.choice(values, (400, 5))
    x[:, 0] = rng.choice([0.0, 0.7], 400)  # plenty of rows with a zero
    g = rng.choice([1.0, -0.5, 2.0, 0.0], x.shape)
    ours = tg.tensor(x, requires_grad=True)
    (gx,) = tg.autograd.grad(tg.cumprod(ours, 1), [ours], tg.tensor(g))
    t = torch.tensor(x, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.cumprod(t, 1), [t], torch.tensor(g))
    _patterns_agree(gx._data, gt.numpy())
    # one-element slices pass g through, inf and NaN included (x / x would be NaN)
    one = tg.tensor(np.array([[np.inf], [np.nan]]), requires_grad=True)
    (g1,) = tg.autograd.grad(tg.cumprod(one, 1), [one], tg.ones(2, 1, dtype="float64"))
    np.testing.assert_array_equal(g1._data, [[1.0], [1.0]])


def test_cumprod_with_zeros_stays_twice_differentiable():
    x = _f64([[0.7, 0.0, 1.3, -0.8], [1.1, 0.9, 0.0, 1.2], [0.0, 0.0, 2.0, 1.5]], True)
    assert gradcheck(lambda t: tg.cumprod(t, 1), (x,))
    assert gradgradcheck(lambda t: tg.cumprod(t, 1), (x,))


def test_extremes_of_an_empty_tensor_raise_pytorchs_errors():
    # NumPy's "zero-size array to reduction operation maximum which has no identity" leaked
    # as a ValueError; PyTorch: RuntimeError without a dim, IndexError for an empty dim
    x = tg.zeros(0, 4)
    for fn in (tg.max, tg.min, tg.amax, tg.amin):
        with pytest.raises(RuntimeError, match=rf"{fn.__name__}\(\): expected a reduction dim"):
            fn(x)
    for fn in (tg.max, tg.min, tg.amax, tg.amin, tg.argmax, tg.argmin):
        with pytest.raises(IndexError, match=rf"{fn.__name__}\(\): expected reduction dim 0"):
            fn(x, 0)
    assert tg.amax(x, 1).shape == (0,) and tg.max(x, dim=1).indices.shape == (0,)
