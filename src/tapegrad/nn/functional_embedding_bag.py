"""tg.nn.functional `embedding_bag`: sums, means or maxima of bags of embedding rows.

Bags are runs of a flat index list cut at `offsets` (or the rows of a 2-D input). The rows
are looked up with one `index_select` and summed per bag with one `scatter_add`; for "max"
the winning row of each bag and column is found in NumPy (the first maximum) and picked with
one `take_along_dim`, so the gradient goes to it alone. Entries equal to `padding_idx` are
left out (a bag of only padding, or an empty bag, gives zeros).

    >>> w = tg.tensor(np.arange(12.0).reshape(4, 3))
    >>> embedding_bag(tg.tensor([0, 1, 2, 3]), w, tg.tensor([0, 1]), mode="sum").numpy()
    array([[ 0.,  1.,  2.],
           [18., 21., 24.]])
"""

from __future__ import annotations

import numpy as np

from ..creation import zeros
from ..ops.gather_scatter import scatter_add, take_along_dim
from ..ops.index import index_select
from ..ops.joins import cat
from ..tensor import Tensor, _wrap

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _ints(x, what):
    a = x._data if isinstance(x, Tensor) else np.asarray(x)
    if a.dtype.kind not in "iu":
        raise RuntimeError(
            f"embedding_bag: {what} must be integers (int64 or int32), got dtype {a.dtype}"
        )
    return a.astype(np.int64, copy=False)


def _bags(input, offsets, include_last_offset):
    """(flat indices, bag id of each, number of bags)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        idx = _ints(input, "input")
        b, length = idx.shape
        return idx.reshape(-1), np.repeat(np.arange(b), length), b
    if input.ndim != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    off = _ints(offsets, "offsets")
    if off.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    idx = _ints(input, "input")
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {int(off[0])}"
        )
    if off.size and off[-1] > idx.size:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {idx.size} but got "
            f"offsets[-1] of {int(off[-1])}"
        )
    if np.any(np.diff(off) < 0):
        raise RuntimeError(f"embedding_bag: offsets must not decrease, got {off.tolist()}")
    n_bags = off.size - 1 if include_last_offset else off.size
    starts = off[: max(n_bags, 0)]
    bag = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    if include_last_offset:
        keep = np.arange(idx.size) < (off[-1] if off.size else 0)
        idx, bag = idx[keep], bag[keep]
    return idx, bag, max(n_bags, 0)


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """Reduce bags of rows of `weight` (num_embeddings, dim) to one vector per bag.

    Args:
        input: 1-D indices cut into bags by `offsets`, or 2-D (B, L): B bags of L indices.
        weight: the (num_embeddings, dim) table.
        offsets: 1-D starts of the bags in `input` (the first is 0).
        mode: "sum", "mean" (default) or "max".
        per_sample_weights: weights of the entries of `input` (its shape); "sum" only.
        include_last_offset: `offsets` has one more entry, the end of the last bag.
        padding_idx: entries with this index are left out of every bag.
        max_norm, scale_grad_by_freq, sparse: not supported (refused).

    Returns:
        (B, dim): one reduced vector per bag; empty bags give zeros.
    """
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported; "
            "renormalise the weight yourself (under tg.no_grad()) or drop the argument"
        )
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(
            "embedding_bag: weight must be a 2-D Tensor (num_embeddings, embedding_dim), got "
            f"{getattr(weight, 'shape', type(weight).__name__)}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is "
                f"not None, then it must have the same shape as the input "
                f"({tuple(input.shape)})"
            )
    n, dim = weight.shape
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{n} through {n - 1}, "
                f"but got {padding_idx}"
            )
        padding_idx %= n
    idx, bag, n_bags = _bags(input, offsets, include_last_offset)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError(
            f"embedding_bag: index out of range: indices span [{int(idx.min())}, "
            f"{int(idx.max())}] but the table has {n} rows"
        )
    keep = np.ones(idx.size, bool) if padding_idx is None else idx != padding_idx
    positions = np.flatnonzero(keep)
    idx, bag = idx[keep], bag[keep]
    if mode == "max":
        return _bag_max(weight, idx, bag, n_bags)
    rows = index_select(weight, 0, _wrap(idx))
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        rows = rows * index_select(psw, 0, _wrap(positions)).unsqueeze(1)
    where = np.ascontiguousarray(np.broadcast_to(bag[:, None], (bag.size, dim)))
    out = scatter_add(zeros((n_bags, dim), dtype=weight.dtype), 0, where, rows)
    if mode == "mean":
        counts = np.bincount(bag, minlength=n_bags).astype(weight.dtype)
        out = out / _wrap(np.maximum(counts, 1)[:, None])
    return out


def _bag_max(weight, idx, bag, n_bags):
    """Per bag and column, the row of the first maximum; empty bags give zeros."""
    dim = weight.shape[1]
    filled = np.unique(bag)
    if filled.size == 0:
        return zeros((n_bags, dim), dtype=weight.dtype)
    starts = np.searchsorted(bag, filled)
    values = weight._data[idx]
    with np.errstate(invalid="ignore"):
        best = np.maximum.reduceat(values, starts, axis=0)
    seg = np.searchsorted(filled, bag)
    pos = np.where(values == best[seg], np.arange(idx.size)[:, None], idx.size)
    first = np.minimum.reduceat(pos, starts, axis=0)
    first = np.where(first == idx.size, starts[:, None], first)  # NaN columns: the first entry
    picked = take_along_dim(weight, idx[first], dim=0)  # (bags with entries, dim)
    if filled.size == n_bags:
        return picked
    slot = np.full(n_bags, filled.size)
    slot[filled] = np.arange(filled.size)
    table = cat([picked, zeros((1, dim), dtype=weight.dtype)], 0)
    return index_select(table, 0, _wrap(slot))
