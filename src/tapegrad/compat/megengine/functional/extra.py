"""MegEngine functions whose signatures differ from the core's: `expand_dims` with a list
of axes, `sort`/`argsort`/`topk` (MegEngine's `descending=`), `topk_accuracy`,
`pixel_shuffle`, `indexing_one_hot`. All are compositions of differentiable core ops.

    >>> import tapegrad.compat.megengine.functional as F
    >>> F.expand_dims(mge.tensor([1.0, 2.0]), [0, 2]).shape
    (1, 2, 1)
    >>> values, indices = F.topk(mge.tensor([3.0, 1.0, 2.0]), 2, descending=True)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([3.0, 2.0], [0, 2])
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "expand_dims",
    "sort",
    "argsort",
    "topk",
    "topk_accuracy",
    "pixel_shuffle",
    "indexing_one_hot",
]


def _tg():
    import tapegrad

    return tapegrad


def expand_dims(inp, axis):
    """Insert axes of length 1 at `axis` (an int or a list, positions in the result)."""
    tg = _tg()
    axes = [axis] if isinstance(axis, int) else list(axis)
    ndim = inp.ndim + len(axes)
    for ax in sorted(a + ndim if a < 0 else a for a in axes):
        inp = tg.unsqueeze(inp, ax)
    return inp


def _indices(indices):
    """The core's index results (made from raw arrays, so plain `tg.Tensor`s) as int32
    `mge.Tensor`s, as MegEngine returns them."""
    from ..._facade import returning
    from .._tensor import Tensor

    return returning(Tensor, lambda: indices.astype("int32"))()


def sort(inp, descending=False):
    """Sort along the last axis: `(values, indices)`."""
    values, indices = _tg().sort(inp, dim=-1, descending=descending)
    return values, _indices(indices)


def argsort(inp, descending=False):
    """The indices that sort `inp` along the last axis (int32)."""
    return _indices(_tg().argsort(inp, dim=-1, descending=descending))


def topk(inp, k, descending=False, kth_only=False, no_sort=False):
    """The `k` smallest (largest with `descending=True`) values along the last axis and
    their indices; `kth_only`: the k-th value and its index only."""
    values, indices = _tg().topk(inp, int(k), dim=-1, largest=descending, sorted=True)
    indices = _indices(indices)
    if kth_only:
        return values[..., -1], indices[..., -1]
    return values, indices


def topk_accuracy(logits, target, topk=1):
    """The share of rows whose `target` is among the `topk` largest logits (a tuple of
    accuracies when `topk` is a tuple)."""
    from .._tensor import tensor

    ks = (topk,) if isinstance(topk, int) else tuple(topk)
    scores = np.asarray(logits.numpy() if hasattr(logits, "numpy") else logits)
    labels = np.asarray(target.numpy() if hasattr(target, "numpy") else target).reshape(-1)
    order = np.argsort(-scores, axis=1, kind="stable")
    accs = [tensor(np.float32((order[:, :k] == labels[:, None]).any(axis=1).mean())) for k in ks]
    return accs[0] if isinstance(topk, int) else tuple(accs)


def pixel_shuffle(inp, upscale_factor: int):
    """(..., C*r*r, H, W) -> (..., C, H*r, W*r), as MegEngine (and PyTorch)."""
    tg = _tg()
    r = int(upscale_factor)
    *lead, c, h, w = inp.shape
    if c % (r * r):
        raise ValueError(
            f"pixel_shuffle: {c} channels are not divisible by upscale_factor**2 = {r * r}"
        )
    n = len(lead)
    x = tg.reshape(inp, (*lead, c // (r * r), r, r, h, w))
    pattern = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
    x = tg.permute(x, pattern)
    return tg.reshape(x, (*lead, c // (r * r), h * r, w * r))


def indexing_one_hot(src, index, axis=1, keepdims=False):
    """`src` picked at `index` along `axis` (one index per position of the other axes)."""
    tg = _tg()
    idx = tg.unsqueeze(
        index.astype("int64")
        if hasattr(index, "astype")
        else tg.tensor(np.asarray(index, dtype=np.int64)),
        axis,
    )
    out = tg.take_along_dim(src, idx, dim=axis)
    return out if keepdims else tg.squeeze(out, axis)
