"""Order statistics and counting, PyTorch's names: median, nanmedian, mode, cummax, cummin,
quantile, nanquantile, the NaN-ignoring reductions (nansum, nanmean), std_mean / var_mean,
logcumsumexp, and the integer-valued unique, unique_consecutive, searchsorted, bucketize,
bincount, isin.

As in sorting.py, the positions are found on the raw arrays (an integer result never joins a
graph) and the values are picked with `gather`, so each gradient goes to the element PyTorch
picks (for a tie, the same index as PyTorch). `logcumsumexp` is one op with its own rule.

    >>> tg.median(tg.tensor([[3.0, 1.0, 2.0]]), dim=1)
    median(values=tensor([2.]), indices=tensor([2]))
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple

import numpy as np

from .. import creation, dtypes
from ..tensor import Tensor, _wrap
from .arguments import check_scalar_dims
from .compare import isnan
from .elementwise import where
from .pairwise import lerp
from .quiet import quiet
from .reduce import _dims, _keep, amax, amin, mean
from .reduce import sum as _sum_fn
from .registry import defop
from .sorting import _gather, _order, sort
from .statistics import _correction, _revcumsum, std, var
from .structure import _need_tensor, check_dim
from .views import reshape

MedianResult = namedtuple("median", ["values", "indices"])  # type: ignore[name-match]
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])  # type: ignore[name-match]
ModeResult = namedtuple("mode", ["values", "indices"])  # type: ignore[name-match]
CummaxResult = namedtuple("cummax", ["values", "indices"])  # type: ignore[name-match]
CumminResult = namedtuple("cummin", ["values", "indices"])  # type: ignore[name-match]


def _picked(x: Tensor, d: int, idx, keepdim: bool, result):
    """(values, indices) of `x` at `idx` (kept size-1 axis `d`), as a named tuple."""
    values, indices = _gather(x, d, idx), _wrap(idx)
    if not keepdim:
        shape = tuple(s for i, s in enumerate(idx.shape) if i != d)
        values, indices = reshape(values, shape), reshape(indices, shape)
    return result(values, indices)


def _nonempty_dim(what, x, dim):
    if x.ndim == 0:
        check_dim(what, dim, 0)
        return reshape(x, (1,)), 0, True
    d = check_dim(what, dim, x.ndim)
    if x.shape[d] == 0 and x.numel() == 0 and any(s for i, s in enumerate(x.shape) if i != d):
        raise IndexError(f"{what}(): Expected reduction dim {dim} to have non-zero size.")
    return x, d, False


def _shared_pick(x: Tensor, value) -> Tensor:
    """`value` (an element of `x`) as a function of x whose gradient is shared equally by
    every element equal to it: amax's tie rule, over x with the others masked out."""
    data = x._data
    v = value.item()
    if math.isnan(v):  # NaN: each NaN gets an equal share, as PyTorch (amax's ties need ==)
        hit = np.isnan(data)
        return _sum_fn(where(_wrap(hit), x, 0.0)) / int(hit.sum())
    hit = data == v
    if v == -math.inf:
        return amin(where(_wrap(hit), x, math.inf))
    return amax(where(_wrap(hit), x, -math.inf))


def _median(what, input, dim, keepdim, ignore_nan, result):
    _need_tensor(what, input)
    data = input._data
    if dim is None:
        flat = data.reshape(-1)
        if flat.size == 0:
            return creation.full((), math.nan, dtype=input.dtype)
        s = np.sort(flat)
        k = int((~np.isnan(s)).sum()) if ignore_nan else s.size
        if not ignore_nan and k and np.isnan(s[-1]):
            return _shared_pick(input, s[-1:])
        pick = s[max(k - 1, 0) // 2 : max(k - 1, 0) // 2 + 1]
        return _shared_pick(input, pick)
    x, d, flat = _nonempty_dim(what, input, dim)
    n = x.shape[d]
    order = _order(x._data, d, False)
    nans = np.isnan(x._data).sum(axis=d, keepdims=True) if x.dtype.kind == "f" else 0
    if ignore_nan:
        pos = np.maximum(n - nans - 1, 0) // 2
    else:  # a slice holding NaN: its first NaN (sorted after every number, stably)
        pos = np.where(nans > 0, n - nans, (n - 1) // 2)
    pos = np.broadcast_to(np.asarray(pos, np.int64), order.shape[:d] + (1,) + order.shape[d + 1 :])
    idx = np.take_along_axis(order, pos, axis=d) if n else pos[(slice(None),) * d + (slice(0, 0),)]
    out = _picked(x, d, idx, keepdim and not flat, result)
    if flat:
        return result(reshape(out.values, ()), reshape(out.indices, ()))
    return out


def median(input, dim=None, keepdim=False):
    """The median; of an even count, the lower of the two middle values (PyTorch's rule).
    With `dim`: (values, indices) along it. NaN in a slice makes its median NaN.

    >>> tg.median(tg.tensor([1.0, 4.0, 2.0, 3.0]))
    tensor(2.)
    """
    return _median("median", input, dim, keepdim, False, MedianResult)


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN only where a slice is all NaN).

    >>> tg.nanmedian(tg.tensor([1.0, float("nan"), 3.0, 2.0]))
    tensor(2.)
    """
    return _median("nanmedian", input, dim, keepdim, True, NanmedianResult)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` (the smallest on a tie) and the last index where
    it occurs: (values, indices).

    >>> tg.mode(tg.tensor([2, 1, 2, 1, 3]))
    mode(values=tensor(1), indices=tensor(3))
    """
    _need_tensor("mode", input)
    x, d, flat = _nonempty_dim("mode", input, dim)
    moved = np.moveaxis(x._data, d, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(-1, moved.shape[-1])
    n = rows.shape[1]
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, axis=1)
    ar = np.broadcast_to(np.arange(n), s.shape)
    starts = np.ones(s.shape, bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]  # NaN != NaN: each NaN its own run, as PyTorch
    ends = np.ones(s.shape, bool)
    ends[:, :-1] = starts[:, 1:]
    start = np.maximum.accumulate(np.where(starts, ar, 0), axis=1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(ends, ar, n), 1), axis=1), 1)
    best = np.argmax(end - start, axis=1) if n else np.zeros(len(rows), np.int64)
    last = end[np.arange(len(rows)), best] if n else best
    idx = order[np.arange(len(rows)), last] if n else best
    idx = np.moveaxis(idx.reshape(moved.shape[:-1] + (1,)), -1, d).astype(np.int64)
    out = _picked(x, d, idx, keepdim and not flat, ModeResult)
    if flat:
        return ModeResult(reshape(out.values, ()), reshape(out.indices, ()))
    return out


def _cumulative_extreme(what, input, dim, accumulate, result):
    _need_tensor(what, input)
    x, d, flat = (reshape(input, (1,)), 0, True) if input.ndim == 0 else (input, None, False)
    d = check_dim(what, dim, input.ndim)
    data = x._data
    if data.size == 0:
        idx = np.zeros(data.shape, np.int64)
    else:
        with quiet():
            v = accumulate(data, axis=d)  # NaN spreads forward, as PyTorch
            hit = data == v
            if data.dtype.kind == "f":
                hit |= np.isnan(data)
        shape = [1] * data.ndim
        shape[d] = data.shape[d]
        ar = np.arange(data.shape[d]).reshape(shape)
        idx = np.maximum.accumulate(np.where(hit, ar, 0), axis=d).astype(np.int64)
    values, indices = _gather(x, d, idx), _wrap(idx)
    if flat:
        return result(reshape(values, ()), reshape(indices, ()))
    return result(values, indices)


def cummax(input, dim):
    """Running maximum along `dim` and the index it came from (the latest on a tie):
    (values, indices).

    >>> tg.cummax(tg.tensor([1.0, 3.0, 2.0]), 0).indices
    tensor([0, 1, 1])
    """
    return _cumulative_extreme("cummax", input, dim, np.maximum.accumulate, CummaxResult)


def cummin(input, dim):
    """Running minimum along `dim` and the index it came from: (values, indices)."""
    return _cumulative_extreme("cummin", input, dim, np.minimum.accumulate, CumminResult)


# ------------------------------------------------------------------ quantiles
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(what, input, q, dim, keepdim, interpolation, ignore_nan):
    _need_tensor(what, input)
    if input.dtype.kind != "f":
        raise RuntimeError(f"{what}(): input tensor must be floating point, got {input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"{what}(): interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
            f"got {interpolation!r}"
        )
    scalar_q = not isinstance(q, Tensor)
    qs = np.atleast_1d(np.asarray(q._data if isinstance(q, Tensor) else q, np.float64))
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError(f"{what}(): q must be a scalar or 1-D tensor, got shape {q.shape}")
    if qs.size and (np.isnan(qs).any() or qs.min() < 0 or qs.max() > 1):
        raise RuntimeError(f"{what}(): q values must be in the range [0, 1]")
    if input.numel() == 0:
        raise RuntimeError(f"{what}(): input tensor must be non-empty")
    if dim is None:
        x, d = reshape(input, (-1,)), 0
    elif input.ndim == 0:
        check_dim(what, dim, 0)
        x, d = reshape(input, (1,)), 0
    else:
        d = check_dim(what, dim, input.ndim)
        x = input
    n = x.shape[d]
    s = sort(x, d).values
    nan = np.isnan(x._data)
    valid = (
        (~nan).sum(axis=d, keepdims=True)
        if ignore_nan
        else np.full(nan.shape[:d] + (1,) + nan.shape[d + 1 :], n)
    )
    qshape = [1] * x.ndim
    qshape[d] = qs.size
    pos = qs.reshape(qshape) * np.maximum(valid - 1, 0)
    if interpolation == "nearest":
        pos = np.round(pos)
    if not ignore_nan:  # a slice holding NaN: its last sorted element (a NaN), as PyTorch
        pos = np.where(nan.any(axis=d, keepdims=True), n - 1.0, pos)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(np.ceil(pos).astype(np.int64), n - 1)
    lo = np.broadcast_to(lo, np.broadcast_shapes(lo.shape, valid.shape))
    hi = np.broadcast_to(hi, lo.shape)
    below, above = _gather(s, d, lo), _gather(s, d, hi)
    if interpolation in ("lower", "nearest"):
        out = below
    elif interpolation == "higher":
        out = above
    else:
        w = 0.5 if interpolation == "midpoint" else pos - lo
        w = np.broadcast_to(np.asarray(w, x.dtype), lo.shape)
        out = lerp(below, above, _wrap(np.ascontiguousarray(w)))
    # the q axis goes first; the reduced axis stays (size 1) only with keepdim
    out = out.movedim(d, 0)
    if keepdim:
        out = (
            out.unsqueeze(d + 1)
            if dim is not None
            else reshape(out, (qs.size,) + (1,) * input.ndim)
        )
    if scalar_q or (isinstance(q, Tensor) and q.ndim == 0):
        out = out[0]
    return out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles along `dim` (all elements when None); `q` is a number or a 1-D
    tensor in [0, 1] (its axis then comes first). Between two elements the value is
    interpolated: 'linear' (default), 'lower', 'higher', 'midpoint' or 'nearest'.

    >>> tg.quantile(tg.tensor([1.0, 2.0, 3.0, 4.0]), 0.5)
    tensor(2.5)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaN (NaN only where a slice is all NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# ------------------------------------------------------------------ NaN-ignoring reductions
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum treating NaN as zero (NaN gets a zero gradient).

    >>> tg.nansum(tg.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    _need_tensor("nansum", input)
    x = where(isnan(input), 0.0, input) if input.dtype.kind == "f" else input
    return _sum_fn(x, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean over the elements that are not NaN (NaN where a slice is all NaN)."""
    _need_tensor("nanmean", input)
    if input.dtype.kind != "f":
        raise RuntimeError(
            f"nanmean(): expected a floating point tensor as input, got {input.dtype}"
        )
    count = _sum_fn(~isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _spread_and_mean(who, spread, input, dim, unbiased, keepdim, correction, axis, keepdims):
    """(spread, mean) over `dim`: std_mean and var_mean (spread = std or var)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    c = _correction(who, unbiased, correction)
    k = _keep(keepdim, keepdims)
    _dims(who, input, dim, axis)
    return (
        spread(input, dim, keepdim=k, correction=c, axis=axis),
        mean(input, dim, keepdim=k, axis=axis),
    )


def std_mean(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """(std, mean) over `dim` in one call (see std for `correction` / `unbiased`)."""
    return _spread_and_mean(
        "std_mean", std, input, dim, unbiased, keepdim, correction, axis, keepdims
    )


def var_mean(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """(var, mean) over `dim` in one call (see var for `correction` / `unbiased`)."""
    return _spread_and_mean(
        "var_mean", var, input, dim, unbiased, keepdim, correction, axis, keepdims
    )


# ------------------------------------------------------------------ logcumsumexp
@defop(saves=("x", "out"), name="logcumsumexp", array_twin=True)
def _logcumsumexp(xp, x, *, axis):
    if x.ndim == 0:  # dim 0 / -1 of a 0-d input: the value itself, as PyTorch
        check_scalar_dims("logcumsumexp", axis)
        return x.copy()
    with quiet():  # -inf - -inf and the like: NaN/inf silently, as PyTorch
        return xp.logaddexp.accumulate(x, axis=axis)


@_logcumsumexp.vjp
def _(xp, g, x, out, axis):
    # d out_j / d x_i = exp(x_i - out_j) for j >= i: a reversed running sum of
    # g_j exp(c - out_j), times exp(x_i - c), with c the slice's last (largest) out, so the
    # first factor is at most 1 wherever the slice spans under ~700 (float64). Linear in g,
    # so the forward-mode rule derived from it is right too.
    if x.ndim == 0:
        return (g,)
    n = x.shape[axis]
    if n == 0:
        return (xp.zeros_like(x),)
    last = (builtins.slice(None),) * (axis % x.ndim) + (builtins.slice(n - 1, n),)
    c = out[last]
    with quiet():
        c = xp.where(xp.isfinite(c), c, 0.0)
        return (_revcumsum(xp, g * xp.exp(c - out), axis) * xp.exp(x - c),)


@_logcumsumexp.jvp
def _(xp, tangents, x, out, *, axis):
    # d out_j = sum_{i<=j} exp(x_i - out_j) dx_i, a softmax-weighted running sum
    t = tangents[0]
    if x.size == 0 or x.ndim == 0:
        return t
    w = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    scale = xp.exp(xp.max(x, axis=axis, keepdims=True) - out)
    return xp.cumsum(w * t, axis=axis) * scale


_logcumsumexp.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)),), {"axis": 1}),
        ((rng.standard_normal((2, 3, 2)) * 3,), {"axis": 0}),
        ((rng.standard_normal((5,)),), {"axis": 0}),
    ]
)
_logcumsumexp.reference(lambda torch, x, axis: torch.logcumsumexp(x, dim=axis))


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along `dim`, without overflow.

    >>> tg.logcumsumexp(tg.tensor([0.0, 0.0]), 0)
    tensor([0.    , 0.6931])
    """
    _need_tensor("logcumsumexp", input)
    if input.ndim == 0:
        check_dim("logcumsumexp", dim, 0)
        return input.clone()
    d = check_dim("logcumsumexp", dim, input.ndim)
    if input.dtype.kind != "f":
        input = input.astype(dtypes.get_default_dtype())
    return _logcumsumexp(input, axis=d)


# ------------------------------------------------------------------ integer-valued results
def _result(values, extras):
    return values if not extras else (values, *extras)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values (sorted), and optionally the inverse (where each element went)
    and the counts; with `dim`, the distinct slices along it.

    >>> tg.unique(tg.tensor([3, 1, 3, 2]))
    tensor([1, 2, 3])
    """
    _need_tensor("unique", input)
    data = input._data
    if dim is None:
        values, inverse, counts = np.unique(
            data.reshape(-1), return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(data.shape)
    else:
        d = check_dim("unique", dim, data.ndim)
        values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    extras = []
    if return_inverse:
        extras.append(_wrap(inverse.astype(np.int64)))
    if return_counts:
        extras.append(_wrap(counts.astype(np.int64)))
    return _result(_wrap(values), extras)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The values (or slices along `dim`) with each run of equal neighbours kept once, and
    optionally the inverse and the run lengths.

    >>> tg.unique_consecutive(tg.tensor([1, 1, 2, 2, 1]))
    tensor([1, 2, 1])
    """
    _need_tensor("unique_consecutive", input)
    data = input._data
    if dim is None:
        x, d = data.reshape(-1), 0
    else:
        d = check_dim("unique_consecutive", dim, data.ndim)
        x = data
    n = x.shape[d] if x.ndim else 1
    moved = np.moveaxis(x, d, 0).reshape(n, -1)
    new = np.ones(n, bool)
    if n > 1:
        new[1:] = (moved[1:] != moved[:-1]).any(axis=1)
    run = np.cumsum(new) - 1
    values = np.take(x, np.flatnonzero(new), axis=d)
    extras = []
    if return_inverse:
        extras.append(_wrap(run.reshape(data.shape if dim is None else (n,)).astype(np.int64)))
    if return_counts:
        extras.append(_wrap(np.diff(np.append(np.flatnonzero(new), n)).astype(np.int64)))
    return _result(_wrap(values), extras)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value of `input` would go in `sorted_sequence` (its last dimension) to keep
    it sorted: the first such index, or the last with right=True / side='right'.

    >>> tg.searchsorted(tg.tensor([1, 3, 5]), tg.tensor([3, 6]))
    tensor([1, 3])
    """
    _need_tensor("searchsorted", sorted_sequence, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise RuntimeError("searchsorted(): side='left' contradicts right=True")
        right = side == "right"
    how = "right" if right else "left"
    seq = sorted_sequence._data
    values = input._data if isinstance(input, Tensor) else np.asarray(input)
    order = (
        None
        if sorter is None
        else (sorter._data if isinstance(sorter, Tensor) else np.asarray(sorter))
    )
    if seq.ndim == 0:
        raise RuntimeError("searchsorted(): sorted_sequence must have at least one dimension")
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=how, sorter=order)
    else:
        if values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(
                "searchsorted(): the leading dimensions of sorted_sequence "
                f"{tuple(seq.shape[:-1])} and input {tuple(values.shape[:-1])} must match"
            )
        rows = seq.reshape(-1, seq.shape[-1])
        vals = values.reshape(-1, values.shape[-1])
        srt = None if order is None else order.reshape(-1, order.shape[-1])
        out = np.stack(
            [
                np.searchsorted(r, v, side=how, sorter=None if srt is None else srt[i])
                for i, (r, v) in enumerate(zip(rows, vals, strict=True))
            ]
        ).reshape(values.shape)
    return _wrap(np.asarray(out).astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value between the 1-D sorted `boundaries`: i such that
    boundaries[i-1] < x <= boundaries[i] (right=True: boundaries[i-1] <= x < boundaries[i]).

    >>> tg.bucketize(tg.tensor([1, 5, 9]), tg.tensor([2, 4, 6, 8]))
    tensor([0, 2, 4])
    """
    _need_tensor("bucketize", boundaries, "boundaries")
    if boundaries.ndim != 1:
        raise RuntimeError(
            f"bucketize(): boundaries must be 1-D, got shape {tuple(boundaries.shape)}"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs in the 1-D `input` (or the sum of its
    `weights`, differentiable); the length is max(input) + 1, at least `minlength`.

    >>> tg.bincount(tg.tensor([0, 2, 2]))
    tensor([1, 0, 2])
    """
    _need_tensor("bincount", input)
    data = input._data
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise RuntimeError(
            f"bincount(): input must be a 1-D integer tensor, got shape {tuple(data.shape)} "
            f"of {data.dtype}"
        )
    if data.size and data.min() < 0:
        raise RuntimeError("bincount(): input must hold non-negative integers only")
    if int(minlength) < 0:
        raise RuntimeError(f"bincount(): minlength must be non-negative, got {minlength}")
    length = max(int(data.max()) + 1 if data.size else 0, int(minlength))
    if weights is None:
        return _wrap(np.bincount(data, minlength=length).astype(np.int64))
    _need_tensor("bincount", weights, "weights")
    if tuple(weights.shape) != tuple(data.shape):
        raise RuntimeError(
            f"bincount(): weights of shape {tuple(weights.shape)} must match input's "
            f"{tuple(data.shape)}"
        )
    w = weights if weights.dtype.kind == "f" else weights.astype(np.float64)
    return creation.zeros(length, dtype=w.dtype).index_add(0, input, w)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of `elements` occurs in `test_elements` (either may be a number).

    >>> tg.isin(tg.tensor([1, 2, 3]), tg.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): elements or test_elements must be a Tensor")
    a = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(np.isin(a, b, assume_unique=assume_unique, invert=invert))


__all__ = [
    "median",
    "nanmedian",
    "mode",
    "cummax",
    "cummin",
    "quantile",
    "nanquantile",
    "nansum",
    "nanmean",
    "std_mean",
    "var_mean",
    "logcumsumexp",
    "unique",
    "unique_consecutive",
    "searchsorted",
    "bucketize",
    "bincount",
    "isin",
]
