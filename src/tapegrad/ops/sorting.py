"""Sorting: sort, argsort, topk, kthvalue (PyTorch names and semantics).

The order is found on the raw array (an integer result never joins a graph) and the values
are then picked with `gather`, whose rule (take_along_axis) routes each gradient back to the
element it came from: these functions are composites and need no rule of their own. Sorts
are stable; descending ones keep equal elements in their original order and put NaN first,
as PyTorch does.

    >>> x = tg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> values, indices = tg.sort(x)
    >>> values.sum().backward(); indices
    tensor([1, 2, 0])
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import backend
from ..tensor import Tensor, _axis, _wrap
from .gather_scatter import _take_along_axis
from .registry import dispatch, note_values_read
from .views import reshape


def _gather(input, d: int, idx):
    """input's entries at `idx` along `d` (indices known valid: no checks, straight to the op)."""
    return dispatch(_take_along_axis, input, indices=idx, axis=d, in_shape=input.shape)


# named as PyTorch's torch.return_types are, so the repr reads `sort(values=..., indices=...)`;
# mypy wants a namedtuple named after its variable, hence the ignore
SortResult = namedtuple("sort", ["values", "indices"])  # type: ignore[name-match]
TopkResult = namedtuple("topk", ["values", "indices"])  # type: ignore[name-match]
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])  # type: ignore[name-match]


def _order(data, d: int, descending: bool):
    """Stable argsort of `data` along axis `d` (int64)."""
    xp = backend.array_module(data)
    if not descending:
        return xp.argsort(data, axis=d, kind="stable").astype(np.int64, copy=False)
    # reversing, sorting ascending and reversing back is a stable descending sort that puts
    # NaN first (negating would break ties the wrong way round and fail on unsigned ints)
    n = data.shape[d]
    idx = xp.argsort(xp.flip(data, axis=d), axis=d, kind="stable")
    return (n - 1 - xp.flip(idx, axis=d)).astype(np.int64, copy=False)


def _check(input, what: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}(): expected a Tensor, got {type(input).__name__}")


def sort(input, dim=-1, descending=False, stable=False, *, axis=None):
    """Sort along `dim`; returns (values, indices). Values are differentiable.

    Args:
        dim: the dimension to sort (default the last; `axis=` also accepted).
        descending: largest first.
        stable: accepted for PyTorch compatibility; the sort is always stable.

    >>> tg.sort(tg.tensor([2, 0, 1])).indices
    tensor([1, 2, 0])
    """
    _check(input, "sort")
    if axis is not None:
        dim = axis
    if input.ndim == 0:
        _axis(dim, 0)
        values, indices = sort(reshape(input, (1,)), 0, descending)
        return SortResult(reshape(values, ()), reshape(indices, ()))
    d = _axis(dim, input.ndim)
    note_values_read("the sort order", input)
    idx = _order(input._data, d, descending)
    return SortResult(_gather(input, d, idx), _wrap(idx))


def argsort(input, dim=-1, descending=False, stable=False, *, axis=None):
    """The indices that sort `input` along `dim` (int64; the sort is stable).

    >>> tg.argsort(tg.tensor([2.0, 0.5, 1.0]), descending=True)
    tensor([0, 2, 1])
    """
    _check(input, "argsort")
    if axis is not None:
        dim = axis
    if input.ndim == 0:
        _axis(dim, 0)
        return _wrap(backend.array_module(input._data).zeros((), dtype=np.int64))
    d = _axis(dim, input.ndim)
    note_values_read("the sort order", input)
    return _wrap(_order(input._data, d, descending))


def _take_first(input, idx, d: int, k: int):
    key = (slice(None),) * d + (slice(0, k),)
    idx = idx[key]
    return _gather(input, d, idx), _wrap(idx)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    """The `k` largest (or smallest, `largest=False`) entries along `dim`: (values, indices),
    in sorted order. Values are differentiable.

    >>> tg.topk(tg.tensor([1.0, 5.0, 3.0]), 2)
    topk(values=tensor([5., 3.]), indices=tensor([1, 2]))
    """
    _check(input, "topk")
    if input.ndim == 0:
        if int(k) not in (0, 1):
            raise RuntimeError(
                f"topk(): k ({k}) is out of range for a 0-d tensor (k must be 0 or 1)"
            )
        _axis(dim, 0)
        xp = backend.array_module(input._data)
        if int(k) == 0:
            return TopkResult(reshape(input, (1,))[0:0], _wrap(xp.zeros((0,), np.int64)))
        return TopkResult(input.clone(), _wrap(xp.zeros((), np.int64)))
    d = _axis(dim, input.ndim)
    n = input.shape[d]
    k = int(k)
    if not 0 <= k <= n:
        raise RuntimeError(
            f"topk(): k ({k}) is out of range for dimension {dim} of size {n} "
            f"(shape {tuple(input.shape)}); pass 0 <= k <= {n}"
        )
    note_values_read("the sort order", input)
    values, indices = _take_first(input, _order(input._data, d, largest), d, k)
    return TopkResult(values, indices)


def kthvalue(input, k, dim=-1, keepdim=False, *, axis=None, keepdims=None):
    """The k-th smallest entry (k counts from 1) along `dim`: (values, indices).

    >>> tg.kthvalue(tg.tensor([4.0, 1.0, 3.0]), 2).values
    tensor(3.)
    """
    _check(input, "kthvalue")
    if axis is not None:
        dim = axis
    keep = bool(keepdims) if keepdims is not None else bool(keepdim)
    flat = input.ndim == 0
    x = reshape(input, (1,)) if flat else input
    d = _axis(dim, x.ndim)
    n = x.shape[d]
    k = int(k)
    if not 1 <= k <= n:
        raise RuntimeError(
            f"kthvalue(): k ({k}) is out of range for dimension {dim} of size "
            f"{n} (shape {tuple(input.shape)}); pass 1 <= k <= {n}"
        )
    note_values_read("the sort order", x)
    idx = _order(x._data, d, False)[(slice(None),) * d + (slice(k - 1, k),)]
    values, indices = _gather(x, d, idx), _wrap(idx)
    if flat or not keep:
        shape = () if flat else tuple(s for i, s in enumerate(idx.shape) if i != d)
        values, indices = reshape(values, shape), reshape(indices, shape)
    return KthvalueResult(values, indices)


__all__ = ["sort", "argsort", "topk", "kthvalue"]
