"""Indexing: `t[key]` and `t[key] = v` (basic, integer-array, boolean, None, ...), narrow,
select, index_select, index_put, index_add, nonzero. gather, scatter, scatter_add,
take_along_dim, masked_fill and masked_select live in gather_scatter.py, which builds on
this module (`getitem`, `index_array`, `check_not_view_of_leaf`).

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
from .arguments import need_dim
from .registry import apply_inplace, check_inplace_allowed, defop, dispatch, note_values_read
from .xp import linear_jvp

_slice = builtins.slice
_BASIC = (int, _slice, type(None), type(Ellipsis))


def normalize_key(key, shape=None):
    """(key, advanced, accumulate): a tuple NumPy indexes with, whether it has integer arrays,
    and whether those may repeat (a boolean mask never does). With the indexed tensor's
    `shape`, a boolean mask must match the dimensions it covers (IndexError otherwise, as
    PyTorch: NumPy's nonzero() would quietly read the wrong rows)."""
    if type(key) is not tuple:
        key = (key,)
    advanced = accumulate = False
    out = []
    masks = []  # (position in the key, mask shape), checked against `shape` at the end
    for k in key:
        if type(k) in _BASIC:
            out.append(k)
            continue
        if isinstance(k, Tensor):
            if k._data.ndim == 0 or k._data.dtype.kind == "b":  # an int read, a mask's nonzero
                note_values_read("indexing with a 0-d or boolean tensor", k)
            k = k._data
        elif isinstance(k, range):
            k = np.arange(k.start, k.stop, k.step)
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
                masks.append((len(out), k.shape))
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
    if masks and shape is not None:
        _check_masks(out, masks, shape)
    return tuple(out), advanced, accumulate


def _consumed(k):
    """How many dimensions of the indexed tensor one normalized key entry uses up."""
    if k is None or k is Ellipsis or (hasattr(k, "dtype") and k.dtype.kind == "b"):
        return 0  # None and a 0-d boolean add an axis; Ellipsis is counted apart
    return 1


def _check_masks(key, masks, shape):
    """Each boolean mask (now `mask.ndim` integer arrays at its key position) must have the
    shape of the dimensions it indexes."""
    used = [_consumed(k) for k in key]
    for e, k in enumerate(key):
        if k is Ellipsis:  # (`in` would compare arrays elementwise)
            used[e] = max(len(shape) - sum(used), 0)
    for pos, mshape in masks:
        first = sum(used[:pos])
        covered = tuple(shape[first : first + len(mshape)])
        if covered != mshape:
            raise IndexError(
                f"The shape of the mask {list(mshape)} at index {first} does not match the shape "
                f"of the indexed tensor {list(shape)} at index {first}"
            )


def _pytorch_order(key):
    """For a key mixing integers with index arrays: (basic, rest), two keys applied one after
    the other that give PyTorch's layout, or None when NumPy's layout is PyTorch's.

    PyTorch applies integers first (as `select`), so `x[0, :, [1, 2]]` of a (2, 3, 4) tensor
    is (3, 2); NumPy counts the integer as an index array separated from `[1, 2]` by the
    slice, and moves the indexed dimension to the front: (2, 3)."""
    if not any(type(k) is int for k in key):
        return None
    if any(hasattr(k, "dtype") and k.ndim == 0 for k in key):
        return None  # a 0-d boolean: NumPy's meaning, rare enough to leave alone
    basic = tuple(_slice(None) if hasattr(k, "dtype") else k for k in key)
    rest = tuple(
        k if hasattr(k, "dtype") or k is Ellipsis else _slice(None)
        for k in key
        if type(k) is not int
    )
    return basic, rest


@defop(params=("key",), in_shape=True, view=True)
def _getitem(xp, x, *, key, in_shape=None):
    return x[key]


@_getitem.vjp
def _(xp, g, key, in_shape):
    return (xp.getitem_backward(g, shape=in_shape, key=key),)


_getitem.jvp(linear_jvp(_getitem))  # linear: the tangent goes through the op


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


@defop(params=("key", "accumulate"), in_shape=True)
def _index(xp, x, *, key, accumulate=True, in_shape=None):
    # NumPy lays out `x[..., idx]` with the indexed axis outermost; PyTorch's is row-major
    return xp.ascontiguousarray(x[key])


@_index.vjp
def _(xp, g, key, accumulate=True, in_shape=None):
    return (xp.getitem_backward(g, shape=in_shape, key=key, accumulate=accumulate),)


@_index.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)),), {"key": (np.array([0, 2, 0, 0]),)}),  # repeats add up
        ((rng.standard_normal((4, 3)),), {"key": (np.array([[1, -1]]), _slice(None, 2))}),
        ((rng.standard_normal((4, 3)),), {"key": (np.array([0, 3]), np.array([2, 2]))}),
        (
            (rng.standard_normal((4, 3)),),
            {"key": (np.array([0, 0, 2]), np.array([1, 2, 1])), "accumulate": False},
        ),  # a boolean mask's nonzero()
        ((rng.standard_normal((2, 3, 4)),), {"key": (Ellipsis, np.array([3, 1, 3]))}),
    ]


_index.reference(
    lambda torch, x, key, accumulate=True: x[
        tuple(torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    ]
)


@defop(params=("shape", "key", "accumulate"), array_twin=True)
def _getitem_backward(xp, g, *, shape, key, accumulate=False):
    """Zeros of `shape` with `g` put (or added, when indices may repeat) at `key`."""
    return _put(xp, xp.zeros(shape, dtype=g.dtype), g, key, accumulate)


@_getitem_backward.vjp
def _(xp, g, shape, key, accumulate=False):
    return (g[key],)


@_getitem_backward.sample
def _(rng):
    return [
        (
            (rng.standard_normal((4, 3)),),
            {"shape": (3, 3), "key": (np.array([0, 2, 0, 1]),), "accumulate": True},
        ),
        ((rng.standard_normal((2,)),), {"shape": (3, 2), "key": (1,)}),
    ]


def _torch_put(torch, x, v, key, accumulate):
    """The PyTorch reference of _put (out of place)."""
    idx = tuple(torch.as_tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    if accumulate:
        return x.index_put(idx, v, accumulate=True)
    out = x.clone()
    out[idx] = v
    return out


@_getitem_backward.reference
def _(torch, g, shape, key, accumulate=False):
    return _torch_put(torch, torch.zeros(shape, dtype=g.dtype), g, key, accumulate)


# ------------------------------------------------------------------ writes
def _put(xp, x, v, key, accumulate):
    if accumulate:
        xp.add.at(x, key, v)
    else:
        x[key] = v
    return x


@defop(params=("key", "accumulate"), inputs=2, array_twin=True)
def _index_put(xp, x, v, *, key, accumulate=False):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _put(xp, x.copy(), v, key, accumulate)


@_index_put.vjp
def _index_put_rule(xp, g, key, accumulate=False, needs=None):
    gx = (g if accumulate else xp.index_put(g, 0.0, key=key)) if needs[0] else None
    return gx, (g[key] if needs[1] else None)


@_index_put.sample
def _(rng):
    return [
        ((rng.standard_normal((4, 3)), rng.standard_normal((3,))), {"key": (1,)}),
        (
            (rng.standard_normal((4, 3)), rng.standard_normal((2, 3))),
            {"key": (np.array([0, 0]),), "accumulate": True},
        ),
        ((rng.standard_normal((4, 3)), rng.standard_normal(())), {"key": (_slice(1, 3), 2)}),
        ((rng.standard_normal((4, 3)), 2.5), {"key": (np.array([1, 3]),)}),
    ]


@_index_put.reference
def _(torch, x, v, key, accumulate=False):
    if not isinstance(v, torch.Tensor):
        v = torch.tensor(v, dtype=x.dtype)
    return _torch_put(torch, x, v, key, accumulate)


# `t[key] = v`: the same rule, but the forward writes into x's storage (apply_inplace only)
@defop(params=("key", "accumulate"), inputs=2, backward_name="CopySlices")
def _setitem(xp, x, v, *, key, accumulate=False):
    return _put(xp, x, v, key, accumulate)


_setitem.vjp(_index_put_rule)
_setitem.sample(lambda rng: [])  # an in-place op: tested through `t[key] = v`


# ================================================================== public (PyTorch) API
def _out_of_range(e, shape):
    return IndexError(f"{e} (indexing a tensor of shape {tuple(shape)})")


def getitem(input, key):
    """`input[key]`: basic indexing gives a view, integer arrays and boolean masks a copy
    whose gradient adds up over repeated indices."""
    key, advanced, accumulate = normalize_key(key, input.shape)
    try:
        if advanced:
            split = _pytorch_order(key)
            if split is not None:
                input = dispatch(_getitem, input, key=split[0], in_shape=input.shape)
                key = split[1]
            return dispatch(_index, input, key=key, accumulate=accumulate, in_shape=input.shape)
        if Ellipsis not in key:  # x[3, ...] is a 0-d view where x[3] would be a scalar copy
            key = key + (Ellipsis,)
        return dispatch(_getitem, input, key=key, in_shape=input.shape)
    except IndexError as e:
        raise _out_of_range(e, input.shape) from None


check_not_view_of_leaf = check_inplace_allowed  # one rule for every in-place write


def setitem(input, key, value):
    """`input[key] = value` in place (recorded when input or value is tracked)."""
    key, advanced, _ = normalize_key(key, input.shape)
    if input.grad_fn is not None:
        check_not_view_of_leaf(input)
    if isinstance(value, (list, tuple)):
        value = np.asarray(value, dtype=input.dtype)
    try:
        if advanced:
            value = _value_in_numpy_order(input.shape, key, value)
        apply_inplace(_setitem, input, value, key=key)
    except IndexError as e:
        raise _out_of_range(e, input.shape) from None


def _value_in_numpy_order(shape, key, value):
    """`value` laid out for NumPy's `x[key] = value` when the caller wrote it for PyTorch's
    layout of `x[key]` (they differ for keys mixing integers and index arrays)."""
    split = _pytorch_order(key)
    if split is None or np.ndim(value) == 0:
        return value
    probe = np.broadcast_to(np.zeros((), bool), shape)  # no storage: only shapes are read
    torch_shape = probe[split[0]][split[1]].shape
    numpy_shape = probe[key].shape
    if torch_shape == numpy_shape:
        return value
    from .views import broadcast_to, moveaxis

    rest = split[1]
    n_bcast = len(np.broadcast_shapes(*(k.shape for k in rest if hasattr(k, "dtype"))))
    # the layouts differ only where PyTorch keeps the indexed dimensions in place: they sit
    # after the dimensions of the entries before the first index array
    ellipsis_dims = probe[split[0]].ndim - sum(k is not Ellipsis for k in rest)
    first = 0
    for k in rest:
        if hasattr(k, "dtype"):
            break
        first += ellipsis_dims if k is Ellipsis else 1
    src = list(range(first, first + n_bcast))
    if isinstance(value, Tensor):
        return moveaxis(broadcast_to(value, torch_shape), src, list(range(n_bcast)))
    return np.moveaxis(np.broadcast_to(value, torch_shape), src, list(range(n_bcast)))


def index_array(index, what):
    """`index` (a tensor or array-like) as an integer array; `what` names the caller."""
    if index is None:
        raise TypeError(f"{what}() missing argument 'index'")
    arr = index._data if isinstance(index, Tensor) else np.asarray(index)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{what}: expected an integer index tensor, got dtype {arr.dtype}")
    return arr


def check_index_range(idx, n, dim, what):
    """PyTorch's rule for the gather family and index_select: every index in [0, n); a
    negative index is an error there (NumPy would silently count it from the end)."""
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.max() if idx.max() >= n else idx.min())
        raise IndexError(
            f"{what}: index {bad} is out of bounds for dimension {dim} with size "
            f"{n} (indices must lie in [0, {n}); negative indices are not counted "
            "from the end here)"
        )


def narrow(input, dim, start, length):
    """The view input[..., start:start+length, ...] along `dim`."""
    d = _axis(dim, input.ndim)
    n = input.shape[d]
    start = int(start) + (n if start < 0 else 0)
    if not (start >= 0 and length >= 0 and start + length <= n):
        raise IndexError(
            f"narrow: start ({start}) + length ({length}) exceeds dimension size "
            f"({n}) of dimension {dim} (shape {tuple(input.shape)})"
        )
    return getitem(input, (_slice(None),) * d + (_slice(start, start + length),))


def select(input, dim, index):
    """input[..., index, ...] along `dim` (that dimension disappears)."""
    d = _axis(dim, input.ndim)
    return getitem(input, (_slice(None),) * d + (int(index),))


def index_select(input, dim=None, index=None, *, axis=None):
    """The entries of `input` at the 1-D integer `index` along `dim` (or `axis`)."""
    d = _axis(need_dim(dim, axis, "index_select"), max(input.ndim, 1))
    idx = index_array(index, "index_select").reshape(-1)
    check_index_range(idx, input.shape[d] if input.ndim else 1, dim, "index_select")
    return getitem(input, (_slice(None),) * d + (idx,))


def index_add(input, dim, index, source, *, alpha=1):
    """out = input with alpha * source added at `index` along `dim` (repeats add up)."""
    d = _axis(dim, max(input.ndim, 1))
    idx = index_array(index, "index_add").reshape(-1)
    check_index_range(idx, input.shape[d] if input.ndim else 1, dim, "index_add")
    if alpha != 1:
        source = source * alpha
    return dispatch(_index_put, input, source, key=(_slice(None),) * d + (idx,), accumulate=True)


def index_put(input, indices, values, accumulate=False):
    """out = input with values written (or added, accumulate=True) at the index tuple."""
    key, _, _ = normalize_key(tuple(indices))
    return dispatch(_index_put, input, values, key=key, accumulate=accumulate)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero entries: an (n, ndim) int64 tensor, or a tuple of 1-D ones."""
    from ..tensor import _wrap

    note_values_read("nonzero", input)
    data = input._data
    if data.ndim == 0:  # NumPy refuses a 0-d array; PyTorch treats it as one element
        hit = int(bool(data))
        if as_tuple:
            return (_wrap(backend.array_module(data).zeros(hit, np.int64)),)
        return _wrap(backend.array_module(data).zeros((hit, 0), np.int64))
    idx = data.nonzero()
    if as_tuple:
        return tuple(_wrap(i.astype(np.int64, copy=False)) for i in idx)
    xp = backend.array_module(input._data)
    return _wrap(xp.stack(idx, axis=-1).astype(np.int64) if idx else xp.zeros((0, 0), np.int64))


def argwhere(input):
    """The (n, ndim) indices of the nonzero entries (= nonzero(input))."""
    return nonzero(input)


__all__ = [
    "getitem",
    "narrow",
    "select",
    "index_select",
    "index_add",
    "index_put",
    "nonzero",
    "argwhere",
]


def _index_add_(self, dim, index, source, *, alpha=1):
    """Add `alpha * source` into the rows `index` along `dim`, in place; repeats add up."""
    check_not_view_of_leaf(self)
    d = _axis(dim, max(self.ndim, 1))
    idx = index_array(index, "index_add_").reshape(-1)
    check_index_range(idx, self.shape[d] if self.ndim else 1, dim, "index_add_")
    if alpha != 1:
        source = source * alpha
    return apply_inplace(_setitem, self, source, key=(_slice(None),) * d + (idx,), accumulate=True)


def _index_put_(self, indices, values, accumulate=False):
    """Write `values` at `indices` (a tuple of index tensors), in place; with
    `accumulate=True` repeated indices add up."""
    check_not_view_of_leaf(self)
    key, _, _ = normalize_key(tuple(indices))
    return apply_inplace(_setitem, self, values, key=key, accumulate=accumulate)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    from .shape import unbind

    return iter(unbind(self, 0))
