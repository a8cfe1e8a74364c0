"""Statistical reductions and scans: var, std (PyTorch's `correction`), logsumexp, vector
norms, cumsum, cumprod. Same conventions as reduce.py (NumPy-style internal ops, PyTorch-style
public functions), whose helpers they share.

    >>> tg.var(tg.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor(1.6667)
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .arguments import check_scalar_dims
from .quiet import quiet
from .reduce import (
    _REDUCTION,
    _axes,
    _cast,
    _count,
    _dims,
    _inf,
    _keep,
    _kept,
    _reduce_samples,
    _torch_dim,
)
from .registry import defop
from .xp import T


# ------------------------------------------------------------ var, std, logsumexp, norm
def _centered(xp, x, axis):
    """x minus its mean over `axis` (a sum over a count, not xp.mean: NumPy's mean warns on
    an empty slice, even inside np.errstate)."""
    return x - xp.sum(x, axis=axis, keepdims=True) / builtins.max(_count(x.shape, axis), 1)


def _var_values(xp, x, axis, ddof, keepdims):
    n = _count(x.shape, axis)
    with quiet():  # n <= ddof: inf/nan, inf - inf: nan, as PyTorch
        d = _centered(xp, x, axis)
        return xp.sum(d * d, axis=axis, keepdims=keepdims) / x.dtype.type(builtins.max(n - ddof, 0))


def _dof_scale(in_shape, axis, ddof):
    n = _count(in_shape, axis) - ddof
    return 1.0 / n if n > 0 else math.nan  # PyTorch: inf * 0 = nan; NaN here warns nothing


@defop(saves="x", name="var", **_REDUCTION)
def _var(xp, x, *, axis=None, ddof=0, keepdims=False, in_shape=None):
    return _var_values(xp, x, axis, ddof, keepdims)


@_var.vjp
def _(xp, g, x, axis=None, ddof=0, keepdims=False, in_shape=()):
    d = _centered(xp, x, axis)
    return (_kept(xp, g, in_shape, axis, keepdims) * d * (2.0 * _dof_scale(in_shape, axis, ddof)),)


@defop(saves=("x", "out"), name="std", **_REDUCTION)
def _std(xp, x, *, axis=None, ddof=0, keepdims=False, in_shape=None):
    return xp.sqrt(_var_values(xp, x, axis, ddof, keepdims))


@_std.vjp
def _(xp, g, x, out, axis=None, ddof=0, keepdims=False, in_shape=()):
    out = _kept(xp, out, in_shape, axis, keepdims)
    safe = xp.where(out == 0, _inf, out)  # a zero std has a zero (sub)gradient, as in PyTorch
    d = _centered(xp, x, axis)
    g = _kept(xp, g, in_shape, axis, keepdims)
    return (g / safe * d * _dof_scale(in_shape, axis, ddof),)


def _var_samples(rng):
    return [
        (args, dict(params, ddof=d))
        for (args, params), d in zip(
            _reduce_samples(rng)[:4] + _reduce_samples(rng)[5:], (1, 0, 1, 1, 0), strict=True
        )
    ]


_var.sample(_var_samples)
_std.sample(_var_samples)


def _torch_var(fn):
    def ref(torch, x, axis=None, ddof=0, keepdims=False):
        return getattr(torch, fn)(x, dim=_torch_dim(axis), correction=ddof, keepdim=keepdims)

    return ref


_var.reference(_torch_var("var"))
_std.reference(_torch_var("std"))


@defop(saves=("x", "out"), name="logsumexp", **_REDUCTION)
def _logsumexp(xp, x, *, axis=None, keepdims=False, in_shape=None):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        m = xp.max(x, axis=axis, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
        m = xp.where(xp.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):  # log(0) = -inf for an all -inf slice
            out = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
        if keepdims:
            return out
        axes = _axes(axis, x.ndim)
        return out.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))


@_logsumexp.vjp
def _(xp, g, x, out, axis=None, keepdims=False, in_shape=()):
    out = _kept(xp, out, in_shape, axis, keepdims)
    return (_kept(xp, g, in_shape, axis, keepdims) * xp.exp(x - out),)


_logsumexp.sample(_reduce_samples)
_logsumexp.reference(
    lambda torch, x, axis=None, keepdims=False: torch.logsumexp(
        x, dim=_torch_dim(axis) if axis is not None else list(range(x.ndim)), keepdim=keepdims
    )
)


@defop(saves=("x", "out"), name="vector_norm", **_REDUCTION)
def _vector_norm(xp, x, *, ord=2, axis=None, keepdims=False, in_shape=None):  # noqa: A002
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        a = xp.abs(x)
        if ord == 2:
            return xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdims))
        if ord == 1:
            return xp.sum(a, axis=axis, keepdims=keepdims)
        if ord == _inf:
            return xp.max(a, axis=axis, keepdims=keepdims)
        if ord == -_inf:
            return xp.min(a, axis=axis, keepdims=keepdims)
        if ord == 0:
            return xp.sum(x != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
        return xp.sum(a**ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


@_vector_norm.vjp
def _(xp, g, x, out, ord=2, axis=None, keepdims=False, in_shape=()):  # noqa: A002
    out = _kept(xp, out, in_shape, axis, keepdims)
    g = _kept(xp, g, in_shape, axis, keepdims)
    if ord == 0:
        return (xp.zeros_like(x),)
    if ord == 1:
        return (g * xp.sign(x),)
    if ord in (_inf, -_inf):
        hit = (xp.abs(x) == out).astype(g.dtype)
        return (g * xp.sign(x) * hit / xp.sum(hit, axis=axis, keepdims=True),)
    safe = xp.where(out == 0, _inf, out)  # the zero vector has a zero subgradient (PyTorch)
    if ord == 2:
        return (g * x / safe,)
    return (g * xp.sign(x) * xp.abs(x) ** (ord - 1) / safe ** (ord - 1),)


@_vector_norm.sample
def _(rng):
    s = _reduce_samples(rng)
    return s + [((s[1][0][0],), {"ord": o, "axis": 1}) for o in (1, _inf, -_inf, 3, 0.5)]


_vector_norm.reference(
    lambda torch, x, ord=2, axis=None, keepdims=False: (  # noqa: A002
        torch.linalg.vector_norm(x, ord, dim=_torch_dim(axis), keepdim=keepdims)
    )
)


@defop(name="cumsum")
def _cumsum(xp, x, *, axis):
    if x.ndim == 0:  # dim 0 / -1 of a 0-d input, as PyTorch (NumPy would return shape (1,))
        check_scalar_dims("cumsum", axis)
        return x.copy()
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return xp.cumsum(x, axis=axis)


@_cumsum.vjp
def _(xp, g, axis):
    return (_revcumsum(xp, g, axis),)


_cumsum.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)),), {"axis": 1}),
        ((rng.standard_normal((2, 3, 4)),), {"axis": -3}),
        ((rng.standard_normal((5,)),), {"axis": 0}),
    ]
)
_cumsum.reference(lambda torch, x, axis: torch.cumsum(x, dim=axis))


def _revcumsum(xp, t, axis):
    """Sum over positions j >= i along `axis` (the adjoint of cumsum): a cumulative sum of
    the reversed values, not total - prefix + own (an inf there gives inf - inf = NaN)."""
    if t.ndim == 0:
        return t
    return xp.flip(xp.cumsum(xp.flip(t, axis=axis), axis=axis), axis=axis)


@defop(saves=("x", "out"), name="cumprod")
def _cumprod(xp, x, *, axis):
    if x.ndim == 0:  # as cumsum
        check_scalar_dims("cumprod", axis)
        return x.copy()
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return xp.cumprod(x, axis=axis)


@_cumprod.vjp
def _(xp, g, x, out, axis):
    # d out_j / d x_i = out_j / x_i for j >= i: exact wherever x_i != 0. A slice of one
    # element is its own product (g itself, also where x is inf or NaN, as in PyTorch).
    if x.ndim == 0 or x.shape[axis] == 1:
        return (g,)
    zero = x == 0
    with quiet():  # inf / inf, 0 * inf: NaN where PyTorch has it
        if not zero.any():
            return (_revcumsum(xp, g * out, axis) / x,)
        if xp is T:
            return (_cumprod_zeros_differentiable(xp, g, x, out, axis, zero),)
        return (_cumprod_zeros(xp, g, x, out, axis, zero),)


def _cumprod_zeros(xp, g, x, out, axis, zero):
    """The first-order gradient of a cumprod over slices holding zeros, term by term as
    PyTorch's O(n) formula, so that an inf or NaN spreads to the same places: before the first
    zero z, the reversed sum of g * out over positions before z only (out is 0, or NaN from
    0 * inf, from z on), over x; at z, prod_{k<z} x_k * sum_{z<=j<z2} g_j prod_{z<k<=j} x_k
    (z2 the second zero; the running product goes on, as 1s, past z2, where g counts as 0,
    so an inf in it gives 0 * inf = NaN there, as in PyTorch); after z, 0."""
    n_zeros = xp.cumsum(zero, axis=axis)
    before = n_zeros == 0
    first = zero & (n_zeros == 1)
    between = (n_zeros == 1) & ~first
    early = _revcumsum(xp, xp.where(before, g * out, 0.0), axis) / xp.where(before, x, 1.0)
    prefix = xp.cumprod(xp.where(before, x, 1.0), axis=axis)  # at z: prod_{k<z} x_k
    running = xp.cumprod(xp.where(between, x, 1.0), axis=axis)
    at_zero = prefix * xp.sum(running * xp.where(n_zeros == 1, g, 0.0), axis=axis, keepdims=True)
    return xp.where(first, at_zero, xp.where(before, early, 0.0))


def _cumprod_zeros_differentiable(xp, g, x, out, axis, zero):
    """As _cumprod_zeros, as a function of x that has the right derivative too (a backward
    being recorded: PyTorch switches formula there as well): out_j / x_i is exact wherever
    x_i != 0, and also right (zero) at every position after the first zero. The first zero z
    needs the products on its two sides: prod_{k<z} x_k * sum_{j>=z} g_j prod_{z<k<=j} x_k."""
    regular = _revcumsum(xp, g * out, axis) / xp.where(zero, 1.0, x)
    n_zeros = xp.cumsum(zero, axis=axis)
    first = zero & (n_zeros == 1)
    prefix = xp.cumprod(xp.where(n_zeros == 0, x, 1.0), axis=axis)  # at z: prod_{k<z} x_k
    after = xp.cumprod(xp.where((n_zeros == 0) | first, 1.0, x), axis=axis)
    return xp.where(first, prefix * _revcumsum(xp, g * after, axis), regular)


_cumprod.sample(
    lambda rng: [
        ((rng.uniform(0.5, 1.5, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4)),), {"axis": 1}),
        ((rng.uniform(0.5, 1.5, (2, 3, 2)),), {"axis": -2}),
        ((np.array([[0.7, 0.0, 1.3, -0.8], [1.1, 0.9, 0.0, 1.2]]),), {"axis": 1}),
    ]
)
_cumprod.reference(lambda torch, x, axis: torch.cumprod(x, dim=axis))


def _correction(name, unbiased, correction):
    if correction is not None and unbiased is not None:
        raise TypeError(f"{name}(): pass either correction= or unbiased=, not both")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """Variance over `dim`, dividing by N - correction (correction=1 by default, Bessel's; the
    older unbiased=False means correction=0)."""
    if isinstance(dim, bool):  # var(x, False): the legacy unbiased flag
        dim, unbiased = None, dim
    d = _dims("var", input, dim, axis)
    ddof = _correction("var", unbiased, correction)
    return _var(input, d, ddof=ddof, keepdims=_keep(keepdim, keepdims))


def std(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """Standard deviation over `dim` (see var for `correction`)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    d = _dims("std", input, dim, axis)
    ddof = _correction("std", unbiased, correction)
    return _std(input, d, ddof=ddof, keepdims=_keep(keepdim, keepdims))


def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """log(sum(exp(input))) over `dim`, computed without overflow."""
    d = _dims("logsumexp", input, dim, axis)
    return _logsumexp(input, d, keepdims=_keep(keepdim, keepdims))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    """Vector p-norm over `dim` (all elements when None): p = 'fro' or 2 (default), 1, inf,
    -inf, 0 (count of non-zeros) or any other number; p='nuc' is the nuclear norm (the sum
    of the singular values) of a 2-D input, or over a 2-tuple `dim`.

    >>> tg.norm(tg.tensor([3.0, 4.0]))
    tensor(5.)
    """
    if p == "fro" or p is None:
        p = 2
    elif p == "nuc":
        from ..linalg import matrix_norm  # (tg.linalg imports this module)

        d = dim if dim is not None else axis
        if d is None and input.ndim != 2:
            raise RuntimeError(
                f"norm(): p='nuc' needs a 2-D input or a 2-tuple dim, got shape "
                f"{tuple(input.shape)}"
            )
        return matrix_norm(
            _cast(input, dtype), "nuc", (-2, -1) if d is None else d, _keep(keepdim, keepdims)
        )
    elif isinstance(p, str):
        raise ValueError(
            f"norm(): p={p!r} is not supported; use 'fro', 'nuc', a number, inf or -inf"
        )
    d = _dims("norm", input, dim, axis)
    return _vector_norm(_cast(input, dtype), d, ord=float(p), keepdims=_keep(keepdim, keepdims))


def _cumulative(op, what, input, dim, dtype, axis):
    """cumsum / cumprod: `op` along the one required dimension."""
    if dim is None and axis is None:
        raise TypeError(f"{what}(): missing the dimension; pass dim=")
    d = _dims(what, input, dim, axis)
    if isinstance(d, tuple):
        raise TypeError(f"{what}(): dim must be a single int")
    x = _cast(input, dtype)
    if d is None:  # a 0-d tensor is its own cumulative sum / product
        from .elementwise import clone

        return clone(x)
    return op(x, axis=d)


def cumsum(input, dim=None, *, dtype=None, axis=None):
    """Cumulative sum along `dim` (required).

    >>> tg.cumsum(tg.tensor([1, 2, 3]), dim=0)
    tensor([1, 3, 6])
    """
    return _cumulative(_cumsum, "cumsum", input, dim, dtype, axis)


def cumprod(input, dim=None, *, dtype=None, axis=None):
    """Cumulative product along `dim` (required); the gradient is exact where elements are 0.

    >>> tg.cumprod(tg.tensor([1, 2, 3]), dim=0)
    tensor([1, 2, 6])
    """
    return _cumulative(_cumprod, "cumprod", input, dim, dtype, axis)


__all__ = ["var", "std", "logsumexp", "norm", "cumsum", "cumprod"]
