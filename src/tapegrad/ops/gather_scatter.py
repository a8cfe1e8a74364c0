"""Gather and scatter along a dimension, and masks: gather, take_along_dim, scatter,
scatter_add, masked_fill, masked_select (with in-place scatter_, scatter_add_, masked_fill_).

The internal ops are NumPy's take_along_axis and its scatter counterparts, which work with an
index array of the input's rank (`_fancy` turns one into a full NumPy key). Repeated indices
add up in scatter_add and in the gradient of take_along_axis.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import backend
from ..tensor import Tensor, _axis
from .arguments import need_dim, pick
from .index import check_index_range, check_not_view_of_leaf, getitem, index_array
from .registry import apply_inplace, defop, dispatch, note_values_read
from .views import reshape

_slice = builtins.slice


def _fancy(indices, axis):
    """The NumPy key that picks `take_along_axis(x, indices, axis)`."""
    xp = backend.array_module(indices)
    nd = indices.ndim
    key = []
    for d in range(nd):
        if d == axis:
            key.append(indices)
        else:
            shape = [1] * nd
            shape[d] = indices.shape[d]
            key.append(xp.arange(indices.shape[d]).reshape(shape))
    return tuple(key)


@defop(params=("indices", "axis"), in_shape=True)
def _take_along_axis(xp, x, *, indices, axis, in_shape=None):
    return xp.take_along_axis(x, indices, axis)


@_take_along_axis.vjp
def _(xp, g, indices, axis, in_shape):
    if g.shape != indices.shape:  # index broadcast against x's other dims
        indices = np.broadcast_to(indices, g.shape)
    return (
        xp.getitem_backward(
            g, shape=in_shape, key=_fancy(indices, axis % indices.ndim), accumulate=True
        ),
    )


@_take_along_axis.sample
def _(rng):
    return [
        (
            (rng.standard_normal((3, 4)),),
            {"indices": np.array([[0, 0, 3], [1, 2, 2], [3, 3, 3]]), "axis": 1},
        ),
        ((rng.standard_normal((3, 4)),), {"indices": np.array([[2, 0, 1, 1]]), "axis": 0}),
        ((rng.standard_normal((2, 3)),), {"indices": np.array([[1], [0]]), "axis": -1}),
    ]


_take_along_axis.reference(
    lambda torch, x, indices, axis: torch.take_along_dim(x, torch.as_tensor(indices), axis)
)


@defop(params=("indices", "axis"), inputs=2)
def _scatter_add(xp, x, src, *, indices, axis):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        out = x.copy()
        xp.add.at(out, _fancy(indices, axis % indices.ndim), src)
        return out


@_scatter_add.vjp
def _(xp, g, indices, axis, needs=None):
    return g, (g[_fancy(indices, axis % indices.ndim)] if needs[1] else None)


@_scatter_add.sample
def _(rng):
    return [
        (
            (rng.standard_normal((3, 4)), rng.standard_normal((2, 4))),
            {"indices": np.array([[0, 1, 2, 0], [0, 1, 0, 2]]), "axis": 0},
        ),
        (
            (rng.standard_normal((3, 4)), rng.standard_normal((3, 2))),
            {"indices": np.array([[3, 3], [0, 1], [2, 2]]), "axis": -1},
        ),
    ]


_scatter_add.reference(
    lambda torch, x, src, indices, axis: torch.scatter_add(x, axis, torch.as_tensor(indices), src)
)


@defop(params=("indices", "axis"), inputs=2, array_twin=True)
def _scatter(xp, x, src, *, indices, axis):
    out = x.copy()
    out[_fancy(indices, axis % indices.ndim)] = src
    return out


@_scatter.vjp
def _(xp, g, indices, axis, needs=None):
    gx = xp.scatter(g, 0.0, indices=indices, axis=axis) if needs[0] else None
    return gx, (g[_fancy(indices, axis % indices.ndim)] if needs[1] else None)


@_scatter.sample
def _(rng):
    return [
        (
            (rng.standard_normal((3, 4)), rng.standard_normal((2, 4))),
            {"indices": np.array([[0, 1, 2, 0], [1, 2, 0, 2]]), "axis": 0},
        ),
        ((rng.standard_normal((3, 4)), 1.5), {"indices": np.array([[3], [0], [2]]), "axis": 1}),
    ]


@_scatter.reference
def _(torch, x, src, indices, axis):
    return torch.scatter(x, axis, torch.as_tensor(indices), src)


@defop(params=("mask",), inputs=2, array_twin=True)
def _masked_fill(xp, x, value, *, mask):
    return xp.where(mask, value, x).astype(x.dtype, copy=False)


@_masked_fill.vjp
def _(xp, g, mask, needs=None):
    gx = xp.masked_fill(g, 0.0, mask=mask) if needs[0] else None
    return gx, (xp.masked_fill(g, 0.0, mask=~mask) if needs[1] else None)


@_masked_fill.sample
def _(rng):
    m = rng.standard_normal((3, 4)) > 0
    return [
        ((rng.standard_normal((3, 4)), 0.5), {"mask": m}),
        ((rng.standard_normal((3, 4)), rng.standard_normal(())), {"mask": m[:1]}),  # broadcast
    ]


_masked_fill.reference(
    lambda torch, x, value, mask: torch.masked_fill(x, torch.as_tensor(mask), value)
)


# ================================================================== public (PyTorch) API
def _gather_args(input, dim, index, what):
    d = _axis(dim, input.ndim)
    idx = index_array(index, what)
    if idx.ndim != input.ndim:
        raise RuntimeError(
            f"{what}: index (shape {idx.shape}) must have as many dimensions as "
            f"the tensor (shape {tuple(input.shape)})"
        )
    for i, (a, b) in enumerate(zip(idx.shape, input.shape, strict=False)):
        if i != d and a > b:
            raise RuntimeError(
                f"{what}: index shape {idx.shape} is larger than the tensor shape "
                f"{tuple(input.shape)} at dimension {i}"
            )
    check_index_range(idx, input.shape[d], dim, what)
    return d, idx


def gather(input, dim=None, index=None, *, axis=None):
    """`out[i][j] = input[index[i][j]][j]` (dim=0): pick along `dim` at `index`, which has the
    tensor's number of dimensions (and may be smaller in the others)."""
    d, idx = _gather_args(input, need_dim(dim, axis, "gather"), index, "gather")
    if any(a < b for i, (a, b) in enumerate(zip(idx.shape, input.shape, strict=False)) if i != d):
        input = getitem(
            input, tuple(_slice(None) if i == d else _slice(0, a) for i, a in enumerate(idx.shape))
        )
    return dispatch(_take_along_axis, input, indices=idx, axis=d, in_shape=input.shape)


def take_along_dim(input, indices, dim=None):
    """NumPy's take_along_axis (indices broadcast); without `dim` the tensor is flattened."""
    idx = index_array(indices, "take_along_dim")
    if dim is None:
        input, idx, dim = reshape(input, (-1,)), idx.reshape(-1), 0
    d = _axis(dim, input.ndim)
    return dispatch(_take_along_axis, input, indices=idx, axis=d, in_shape=input.shape)


def take_along_axis(input, indices, axis=None, *, dim=None):
    """NumPy's name for take_along_dim (`axis` or `dim`; None flattens)."""
    return take_along_dim(input, indices, pick(dim, axis))


def _scatter_src(src, idx, like):
    if isinstance(src, Tensor) and src.shape != idx.shape:
        src = getitem(src, tuple(_slice(0, n) for n in idx.shape))
    elif not isinstance(src, Tensor):
        src = np.asarray(src, dtype=like.dtype) if np.ndim(src) else src
    return src


def scatter_add(input, dim=None, index=None, src=None, *, axis=None):
    """`out` = `input` with `src[i][j]` added at `[index[i][j]][j]` (dim=0); repeats add up."""
    if src is None:
        raise TypeError("scatter_add() missing argument 'src'")
    d, idx = _gather_args(input, need_dim(dim, axis, "scatter_add"), index, "scatter_add")
    return dispatch(_scatter_add, input, _scatter_src(src, idx, input), indices=idx, axis=d)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """`out` = `input` with `src[i][j]` (or `value`) written at `[index[i][j]][j]` (dim=0)."""
    if reduce == "add":
        return scatter_add(input, dim, index, src if src is not None else value)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} (only 'add' is supported)")
    d, idx = _gather_args(input, dim, index, "scatter")
    src = value if src is None else src
    return dispatch(_scatter, input, _scatter_src(src, idx, input), indices=idx, axis=d)


def _mask_array(mask, shape, what):
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"{what}: expected a boolean mask, got dtype {m.dtype}")
    try:
        np.broadcast_shapes(m.shape, shape)
    except ValueError:
        raise RuntimeError(
            f"{what}: the mask of shape {m.shape} doesn't broadcast to the "
            f"tensor's shape {tuple(shape)}"
        ) from None
    return m


def masked_fill(input, mask, value):
    """`input` with `value` where the boolean `mask` (broadcast to input) is True."""
    m = _mask_array(mask, input.shape, "masked_fill")
    return dispatch(_masked_fill, input, value, mask=m)


def masked_select(input, mask):
    """The entries of `input` where `mask` is True, as a 1-D tensor."""
    note_values_read("masked_select", mask)  # the mask's positions: data-dependent
    m = _mask_array(mask, input.shape, "masked_select")
    shape = np.broadcast_shapes(m.shape, input.shape)
    if shape != input.shape:
        from .shape import broadcast_to

        input = broadcast_to(input, shape)
    return getitem(input, np.broadcast_to(m, shape))


def _masked_fill_(self, mask, value):
    """Write `value` where `mask` (broadcast to the tensor's shape) is True, in place."""
    check_not_view_of_leaf(self)
    m = _mask_array(mask, self.shape, "masked_fill_")
    return apply_inplace(_masked_fill, self, value, mask=m)


def _scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """In place `scatter`: write `src` (or `value`) at `index` along `dim`
    (`reduce="add"` adds instead)."""
    check_not_view_of_leaf(self)
    d, idx = _gather_args(self, dim, index, "scatter_")
    src = value if src is None else src
    op = _scatter_add if reduce == "add" else _scatter
    return apply_inplace(op, self, _scatter_src(src, idx, self), indices=idx, axis=d)


def _scatter_add_(self, dim, index, src):
    """In place `scatter_add`: add `src` at `index` along `dim`; repeats add up."""
    check_not_view_of_leaf(self)
    d, idx = _gather_args(self, dim, index, "scatter_add_")
    return apply_inplace(_scatter_add, self, _scatter_src(src, idx, self), indices=idx, axis=d)


__all__ = [
    "gather",
    "take_along_dim",
    "take_along_axis",
    "scatter_add",
    "scatter",
    "masked_fill",
    "masked_select",
]
