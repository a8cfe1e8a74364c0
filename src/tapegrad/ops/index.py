"""Indexing: `t[key]` and `t[key] = v` (basic, integer-array, boolean, None, ...), gather,
scatter, scatter_add, index_select, index_add, take_along_dim, masked_fill, nonzero.

Keys are normalized once, in `normalize_key`: tensors and lists become integer arrays,
boolean masks become the integer arrays of their nonzero positions (NumPy's own meaning), so
the ops and their rules only ever see ints, slices, None, Ellipsis and integer arrays.
Gradients of advanced indexing accumulate with `add.at`: a repeated index gets the sum.
"""
from __future__ import annotations

import builtins

import numpy as np

from .. import backend
from ..tensor import Tensor, _axis
from .registry import apply_inplace, check_inplace_allowed
from .shape import _call, numpy_op, reshape
from .xp import array_helper

_slice = builtins.slice
_BASIC = (int, _slice, type(None), type(Ellipsis))


def normalize_key(key):
    """(key, advanced, accumulate): a tuple NumPy indexes with, whether it has integer arrays,
    and whether those may repeat (a boolean mask never does)."""
    if type(key) is not tuple:
        key = (key,)
    advanced = accumulate = False
    out = []
    for k in key:
        if type(k) in _BASIC:
            out.append(k)
            continue
        if isinstance(k, Tensor):
            k = k._data
        elif isinstance(k, (list, tuple, bool, np.integer, np.bool_)):
            k = np.asarray(k)
        elif not hasattr(k, "dtype"):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
                f"tensors are valid indices, got {type(k).__name__} {k!r}"
            )
        kind = k.dtype.kind
        if kind == "b":
            if k.ndim == 0:  # x[True] adds an axis of length 1, x[False] one of length 0
                out.append(k)
            else:
                out.extend(k.nonzero())
            advanced = True
        elif kind in "iu":
            if k.ndim == 0:
                out.append(int(k))
                continue
            out.append(k)
            advanced = accumulate = True
        elif k.size == 0 and kind == "f":  # tg.tensor([]) as an index: an empty int index
            out.append(k.astype(np.intp))
            advanced = True
        else:
            raise IndexError(
                f"tensors used as indices must be integer or boolean tensors, got dtype {k.dtype}"
            )
    return tuple(out), advanced, accumulate


def _scatter_into_zeros(xp, g, shape, key, accumulate):
    out = xp.zeros(shape, dtype=g.dtype)
    if accumulate:
        xp.add.at(out, key, g)
    else:
        out[key] = g
    return out


@array_helper
def getitem_backward(xp, g, shape, key, accumulate=False):
    """Zeros of `shape` with `g` put (or added, when indices may repeat) at `key`."""
    return _scatter_into_zeros(xp, g, shape, key, accumulate)


@numpy_op(params=("key",), in_shape=True, view=True)
def _getitem(xp, x, *, key, in_shape=None):
    return x[key]


@_getitem.vjp
def _(xp, g, key, in_shape):
    return (xp.getitem_backward(g, shape=in_shape, key=key),)


@_getitem.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)),), {"key": (1,)}),
        ((rng.standard_normal((3, 4, 2)),), {"key": (_slice(None, None, -1), None, Ellipsis, 0)}),
        ((rng.standard_normal((5,)),), {"key": (_slice(1, -1, 2),)}),
        ((rng.standard_normal(()),), {"key": (None,)}),
    ]


@_getitem.reference
def _(torch, x, key):
    fixed = []
    flips = []
    for i, k in enumerate(key):
        if k == _slice(None, None, -1):
            fixed.append(_slice(None))
            flips.append(i)
        else:
            fixed.append(k)
    if flips:  # PyTorch rejects negative steps; a full reversed slice is a flip
        x = torch.flip(x, flips)
    return x[tuple(fixed)]


@numpy_op(params=("key", "accumulate"), in_shape=True)
def _index(xp, x, *, key, accumulate=True, in_shape=None):
    return x[key]


@_index.vjp
def _(xp, g, key, accumulate=True, in_shape=None):
    return (xp.getitem_backward(g, shape=in_shape, key=key, accumulate=accumulate),)


@_index.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)),), {"key": (np.array([0, 2, 0, 0]),)}),  # repeats add up
        ((rng.standard_normal((4, 3)),), {"key": (np.array([[1, -1]]), _slice(None, 2))}),
        ((rng.standard_normal((4, 3)),), {"key": (np.array([0, 3]), np.array([2, 2]))}),
        ((rng.standard_normal((4, 3)),), {"key": (np.array([0, 0, 2]), np.array([1, 2, 1])),
                                          "accumulate": False}),  # a boolean mask's nonzero()
        ((rng.standard_normal((2, 3, 4)),), {"key": (Ellipsis, np.array([3, 1, 3]))}),
    ]


_index.reference(lambda torch, x, key, accumulate=True: x[tuple(
    torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key)])


@numpy_op(params=("shape", "key", "accumulate"))
def _getitem_backward(xp, g, *, shape, key, accumulate=False):
    return _scatter_into_zeros(xp, g, shape, key, accumulate)


@_getitem_backward.vjp
def _(xp, g, shape, key, accumulate=False):
    return (g[key],)


@_getitem_backward.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)),), {"shape": (3, 3), "key": (np.array([0, 2, 0, 1]),),
                                          "accumulate": True}),
        ((rng.standard_normal((2,)),), {"shape": (3, 2), "key": (1,)}),
    ]


@_getitem_backward.reference
def _(torch, g, shape, key, accumulate=False):
    out = torch.zeros(shape, dtype=g.dtype)
    idx = tuple(torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    if accumulate:
        return out.index_put(idx, g, accumulate=True)
    out = out.clone()
    out[idx] = g
    return out


# ------------------------------------------------------------------ writes
def _put(xp, x, v, key, accumulate):
    if accumulate:
        xp.add.at(x, key, v)
    else:
        x[key] = v
    return x


def _named(name):
    """Register an array helper under `name` (the public function of that name is another)."""

    def register(fn):
        fn.__name__ = name
        return array_helper(fn)

    return register


@_named("index_put")
def _index_put_arrays(xp, x, v, key, accumulate=False):
    return _put(xp, x.copy(), v, key, accumulate)


@numpy_op(params=("key", "accumulate"), inputs=2)
def _index_put(xp, x, v, *, key, accumulate=False):
    return _put(xp, x.copy(), v, key, accumulate)


@_index_put.vjp
def _(xp, g, key, accumulate=False, needs=None):
    gx = (g if accumulate else xp.index_put(g, 0.0, key=key)) if needs[0] else None
    return gx, (g[key] if needs[1] else None)


@_index_put.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)), rng.standard_normal((3,))), {"key": (1,)}),
        ((rng.standard_normal((4, 3)), rng.standard_normal((2, 3))),
         {"key": (np.array([0, 0]),), "accumulate": True}),
        ((rng.standard_normal((4, 3)), rng.standard_normal(())), {"key": (_slice(1, 3), 2)}),
        ((rng.standard_normal((4, 3)), 2.5), {"key": (np.array([1, 3]),)}),
    ]


@_index_put.reference
def _(torch, x, v, key, accumulate=False):
    idx = tuple(torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    if not isinstance(v, torch.Tensor):
        v = torch.tensor(v, dtype=x.dtype)
    if accumulate:
        return x.index_put(idx, v, accumulate=True)
    out = x.clone()
    out[idx] = v
    return out


# `t[key] = v`: the same rule, but the forward writes into x's storage (apply_inplace only)
@numpy_op(params=("key", "accumulate"), inputs=2, backward_name="CopySlices")
def _setitem(xp, x, v, *, key, accumulate=False):
    return _put(xp, x, v, key, accumulate)


_setitem.vjp(_index_put.rule)
_setitem.sample(lambda rng: [])  # an in-place op: tested through `t[key] = v`


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


@numpy_op(params=("indices", "axis"), in_shape=True)
def _take_along_axis(xp, x, *, indices, axis, in_shape=None):
    return xp.take_along_axis(x, indices, axis)


@_take_along_axis.vjp
def _(xp, g, indices, axis, in_shape):
    if g.shape != indices.shape:  # index broadcast against x's other dims
        indices = np.broadcast_to(indices, g.shape)
    return (xp.getitem_backward(g, shape=in_shape, key=_fancy(indices, axis % indices.ndim),
                                accumulate=True),)


@_take_along_axis.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)),), {"indices": np.array([[0, 0, 3], [1, 2, 2], [3, 3, 3]]),
                                          "axis": 1}),
        ((rng.standard_normal((3, 4)),), {"indices": np.array([[2, 0, 1, 1]]), "axis": 0}),
        ((rng.standard_normal((2, 3)),), {"indices": np.array([[1], [0]]), "axis": -1}),
    ]


_take_along_axis.reference(lambda torch, x, indices, axis: torch.take_along_dim(
    x, torch.as_tensor(indices), axis))


@numpy_op(params=("indices", "axis"), inputs=2)
def _scatter_add(xp, x, src, *, indices, axis):
    out = x.copy()
    xp.add.at(out, _fancy(indices, axis % indices.ndim), src)
    return out


@_scatter_add.vjp
def _(xp, g, indices, axis, needs=None):
    return g, (g[_fancy(indices, axis % indices.ndim)] if needs[1] else None)


@_scatter_add.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)), rng.standard_normal((2, 4))),
         {"indices": np.array([[0, 1, 2, 0], [0, 1, 0, 2]]), "axis": 0}),
        ((rng.standard_normal((3, 4)), rng.standard_normal((3, 2))),
         {"indices": np.array([[3, 3], [0, 1], [2, 2]]), "axis": -1}),
    ]


_scatter_add.reference(lambda torch, x, src, indices, axis: torch.scatter_add(
    x, axis, torch.as_tensor(indices), src))


@_named("scatter")
def _scatter_arrays(xp, x, src, indices, axis):
    out = x.copy()
    out[_fancy(indices, axis % indices.ndim)] = src
    return out


@numpy_op(params=("indices", "axis"), inputs=2)
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
        ((rng.standard_normal((3, 4)), rng.standard_normal((2, 4))),
         {"indices": np.array([[0, 1, 2, 0], [1, 2, 0, 2]]), "axis": 0}),
        ((rng.standard_normal((3, 4)), 1.5), {"indices": np.array([[3], [0], [2]]), "axis": 1}),
    ]


@_scatter.reference
def _(torch, x, src, indices, axis):
    return torch.scatter(x, axis, torch.as_tensor(indices), src)


@_named("masked_fill")
def _masked_fill_arrays(xp, x, value, mask):
    return xp.where(mask, value, x).astype(x.dtype, copy=False)


@numpy_op(params=("mask",), inputs=2)
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


_masked_fill.reference(lambda torch, x, value, mask: torch.masked_fill(
    x, torch.as_tensor(mask), value))


# ================================================================== public (PyTorch) API
def _out_of_range(e, shape):
    return IndexError(f"{e} (indexing a tensor of shape {tuple(shape)})")


def getitem(input, key):
    """`input[key]`: basic indexing gives a view, integer arrays and boolean masks a copy
    whose gradient adds up over repeated indices."""
    key, advanced, accumulate = normalize_key(key)
    try:
        if advanced:
            return _call(_index, input, key=key, accumulate=accumulate, in_shape=input.shape)
        if Ellipsis not in key:  # x[3, ...] is a 0-d view where x[3] would be a scalar copy
            key = key + (Ellipsis,)
        return _call(_getitem, input, key=key, in_shape=input.shape)
    except IndexError as e:
        raise _out_of_range(e, input.shape) from None


check_not_view_of_leaf = check_inplace_allowed  # one rule for every in-place write


def setitem(input, key, value):
    """`input[key] = value` in place (recorded when input or value is tracked)."""
    key, _, _ = normalize_key(key)
    if input.grad_fn is not None:
        check_not_view_of_leaf(input)
    if isinstance(value, (list, tuple)):
        value = np.asarray(value, dtype=input.dtype)
    try:
        apply_inplace(_setitem, input, value, key=key)
    except IndexError as e:
        raise _out_of_range(e, input.shape) from None


def _index_array(index, what):
    arr = index._data if isinstance(index, Tensor) else np.asarray(index)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{what}: expected an integer index tensor, got dtype {arr.dtype}")
    return arr


def narrow(input, dim, start, length):
    """The view input[..., start:start+length, ...] along `dim`."""
    d = _axis(dim, input.ndim)
    n = input.shape[d]
    start = int(start) + (n if start < 0 else 0)
    if not (start >= 0 and length >= 0 and start + length <= n):
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension size "
                         f"({n}) of dimension {dim} (shape {tuple(input.shape)})")
    return getitem(input, (_slice(None),) * d + (_slice(start, start + length),))


def select(input, dim, index):
    """input[..., index, ...] along `dim` (that dimension disappears)."""
    d = _axis(dim, input.ndim)
    return getitem(input, (_slice(None),) * d + (int(index),))


def index_select(input, dim, index):
    """The entries of `input` at the 1-D integer `index` along `dim`."""
    d = _axis(dim, max(input.ndim, 1))
    idx = _index_array(index, "index_select").reshape(-1)
    return getitem(input, (_slice(None),) * d + (idx,))


def _gather_args(input, dim, index, what):
    d = _axis(dim, input.ndim)
    idx = _index_array(index, what)
    if idx.ndim != input.ndim:
        raise RuntimeError(f"{what}: index (shape {idx.shape}) must have as many dimensions as "
                           f"the tensor (shape {tuple(input.shape)})")
    for i, (a, b) in enumerate(zip(idx.shape, input.shape, strict=False)):
        if i != d and a > b:
            raise RuntimeError(f"{what}: index shape {idx.shape} is larger than the tensor shape "
                               f"{tuple(input.shape)} at dimension {i}")
    n = input.shape[d]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"{what}: index {int(idx.max() if idx.max() >= n else idx.min())} is "
                         f"out of bounds for dimension {dim} with size {n}")
    return d, idx


def gather(input, dim, index):
    """out[i][j] = input[index[i][j]][j] (dim=0): pick along `dim` at `index`, which has the
    tensor's number of dimensions (and may be smaller in the others)."""
    d, idx = _gather_args(input, dim, index, "gather")
    if any(a < b for i, (a, b) in enumerate(zip(idx.shape, input.shape, strict=False)) if i != d):
        input = getitem(input, tuple(_slice(None) if i == d else _slice(0, a)
                                     for i, a in enumerate(idx.shape)))
    return _call(_take_along_axis, input, indices=idx, axis=d, in_shape=input.shape)


def take_along_dim(input, indices, dim=None):
    """NumPy's take_along_axis (indices broadcast); without `dim` the tensor is flattened."""
    idx = _index_array(indices, "take_along_dim")
    if dim is None:
        input, idx, dim = reshape(input, (-1,)), idx.reshape(-1), 0
    d = _axis(dim, input.ndim)
    return _call(_take_along_axis, input, indices=idx, axis=d, in_shape=input.shape)


def take_along_axis(input, indices, axis):
    """NumPy's name for take_along_dim."""
    return take_along_dim(input, indices, axis)


def _scatter_src(src, idx, like):
    if isinstance(src, Tensor) and src.shape != idx.shape:
        src = getitem(src, tuple(_slice(0, n) for n in idx.shape))
    elif not isinstance(src, Tensor):
        src = np.asarray(src, dtype=like.dtype) if np.ndim(src) else src
    return src


def scatter_add(input, dim, index, src):
    """out = input with src[i][j] added at [index[i][j]][j] (dim=0); repeats add up."""
    d, idx = _gather_args(input, dim, index, "scatter_add")
    return _call(_scatter_add, input, _scatter_src(src, idx, input), indices=idx, axis=d)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """out = input with src[i][j] (or `value`) written at [index[i][j]][j] (dim=0)."""
    if reduce == "add":
        return scatter_add(input, dim, index, src if src is not None else value)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} (only 'add' is supported)")
    d, idx = _gather_args(input, dim, index, "scatter")
    src = value if src is None else src
    return _call(_scatter, input, _scatter_src(src, idx, input), indices=idx, axis=d)


def _mask_array(mask, shape, what):
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"{what}: expected a boolean mask, got dtype {m.dtype}")
    try:
        np.broadcast_shapes(m.shape, shape)
    except ValueError:
        raise RuntimeError(f"{what}: the mask of shape {m.shape} doesn't broadcast to the "
                           f"tensor's shape {tuple(shape)}") from None
    return m


def masked_fill(input, mask, value):
    """`input` with `value` where the boolean `mask` (broadcast to input) is True."""
    m = _mask_array(mask, input.shape, "masked_fill")
    return _call(_masked_fill, input, value, mask=m)


def index_add(input, dim, index, source, *, alpha=1):
    """out = input with alpha * source added at `index` along `dim` (repeats add up)."""
    d = _axis(dim, max(input.ndim, 1))
    idx = _index_array(index, "index_add").reshape(-1)
    if alpha != 1:
        source = source * alpha
    return _call(_index_put, input, source, key=(_slice(None),) * d + (idx,), accumulate=True)


def index_put(input, indices, values, accumulate=False):
    """out = input with values written (or added, accumulate=True) at the index tuple."""
    key, _, _ = normalize_key(tuple(indices))
    return _call(_index_put, input, values, key=key, accumulate=accumulate)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero entries: an (n, ndim) int64 tensor, or a tuple of 1-D ones."""
    from ..tensor import _wrap

    idx = input._data.nonzero()
    if as_tuple:
        return tuple(_wrap(i.astype(np.int64, copy=False)) for i in idx)
    xp = backend.array_module(input._data)
    return _wrap(xp.stack(idx, axis=-1).astype(np.int64) if idx else xp.zeros((0, 0), np.int64))


def argwhere(input):
    """The (n, ndim) indices of the nonzero entries (= nonzero(input))."""
    return nonzero(input)


def masked_select(input, mask):
    """The entries of `input` where `mask` is True, as a 1-D tensor."""
    m = _mask_array(mask, input.shape, "masked_select")
    shape = np.broadcast_shapes(m.shape, input.shape)
    if shape != input.shape:
        from .shape import broadcast_to

        input = broadcast_to(input, shape)
    return getitem(input, np.broadcast_to(m, shape))


__all__ = [
    "getitem", "narrow", "select", "index_select", "gather", "take_along_dim",
    "take_along_axis", "scatter_add", "scatter", "masked_fill", "index_add", "index_put",
    "nonzero", "argwhere", "masked_select",
]


def _masked_fill_(self, mask, value):
    check_not_view_of_leaf(self)
    m = _mask_array(mask, self.shape, "masked_fill_")
    return apply_inplace(_masked_fill, self, value, mask=m)


def _scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    check_not_view_of_leaf(self)
    d, idx = _gather_args(self, dim, index, "scatter_")
    src = value if src is None else src
    op = _scatter_add if reduce == "add" else _scatter
    return apply_inplace(op, self, _scatter_src(src, idx, self), indices=idx, axis=d)


def _scatter_add_(self, dim, index, src):
    check_not_view_of_leaf(self)
    d, idx = _gather_args(self, dim, index, "scatter_add_")
    return apply_inplace(_scatter_add, self, _scatter_src(src, idx, self), indices=idx, axis=d)


def _index_add_(self, dim, index, source, *, alpha=1):
    check_not_view_of_leaf(self)
    d = _axis(dim, max(self.ndim, 1))
    idx = _index_array(index, "index_add_").reshape(-1)
    if alpha != 1:
        source = source * alpha
    return apply_inplace(_setitem, self, source, key=(_slice(None),) * d + (idx,),
                         accumulate=True)


def _index_put_(self, indices, values, accumulate=False):
    check_not_view_of_leaf(self)
    key, _, _ = normalize_key(tuple(indices))
    return apply_inplace(_setitem, self, values, key=key, accumulate=accumulate)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    from .shape import unbind

    return iter(unbind(self, 0))


def _attach() -> None:
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
    Tensor.__iter__ = _iter
    for name in ("narrow", "select", "index_select", "gather", "take_along_dim", "scatter_add",
                 "scatter", "masked_fill", "index_add", "index_put", "nonzero", "argwhere",
                 "masked_select"):
        setattr(Tensor, name, globals()[name])
    Tensor.masked_fill_ = _masked_fill_
    Tensor.scatter_ = _scatter_
    Tensor.scatter_add_ = _scatter_add_
    Tensor.index_add_ = _index_add_
    Tensor.index_put_ = _index_put_


_attach()
