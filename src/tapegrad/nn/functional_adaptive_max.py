"""tg.nn.functional `adaptive_max_pool1d/2d/3d` (+ `return_indices`, the `_with_indices` forms).

Windows as PyTorch's: output cell i spans [floor(i*in/out), ceil((i+1)*in/out)). The winner
of each window is found in NumPy (the first maximum in row-major scan order; a NaN wins, the
last one seen); the output is then one differentiable `take_along_dim` of those positions,
so the gradient goes to the winner alone, as in PyTorch.

    >>> out, idx = adaptive_max_pool1d(tg.tensor([[1.0, 5.0, 2.0, 7.0, 3.0]]), 3, True)
    >>> idx.numpy()
    array([[1, 3, 3]])
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..ops.gather_scatter import take_along_dim
from ..tensor import Tensor, _wrap

__all__ = [
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
]


def _windows(in_n, out_n):
    """(out_n, K) source indices per window, short windows padded with their first index,
    and the (out_n, K) mask of real entries."""
    lo = (np.arange(out_n) * in_n) // out_n
    hi = -((-(np.arange(out_n) + 1) * in_n) // out_n)
    k = int((hi - lo).max()) if out_n else 1
    idx = lo[:, None] + np.arange(k)[None, :]
    real = idx < hi[:, None]
    return np.where(real, idx, lo[:, None]), real


def _pool(fn, x, sizes, return_indices):
    lead, spatial = x.shape[: x.ndim - len(sizes)], x.shape[x.ndim - len(sizes) :]
    first = 1 if x.ndim == len(sizes) + 2 else 0  # the batch dim may be empty
    empty = [i for i in range(first, x.ndim) if x.shape[i] == 0]
    if empty:
        raise RuntimeError(
            f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
            f"has sizes {list(x.shape)} with dimension {empty[0]} being empty"
        )
    xs = x.reshape(*lead, math.prod(spatial))
    if 0 in sizes:  # an empty output (still attached to the graph)
        out = xs[..., :0].reshape(*lead, *sizes)
        return (out, _wrap(np.zeros(out.shape, np.int64))) if return_indices else out
    # the flat positions (out_0, .., out_n, K_0, .., K_n) of every window, row-major inside it
    nd = len(sizes)
    flat = np.zeros((1,) * (2 * nd), np.int64)
    mask = np.ones((1,) * (2 * nd), bool)
    for i in range(nd):
        idx, real_i = _windows(spatial[i], sizes[i])
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = idx.shape
        flat = flat + idx.reshape(shape) * math.prod(spatial[i + 1 :])
        mask = mask & real_i.reshape(shape)
    cells = math.prod(sizes)
    flat_idx, real = flat.reshape(cells, -1), np.broadcast_to(mask, flat.shape).reshape(cells, -1)
    values = xs._data[..., flat_idx]  # (*lead, cells, K)
    with np.errstate(invalid="ignore"):
        pos = np.argmax(values, axis=-1)
    nan = np.isnan(values) & real
    if nan.any():  # PyTorch keeps the last NaN it meets
        last = nan.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
        pos = np.where(nan.any(-1), last, pos)
    chosen = np.take_along_axis(np.broadcast_to(flat_idx, values.shape), pos[..., None], -1)
    out = take_along_dim(xs, chosen[..., 0], dim=-1).reshape(*lead, *sizes)
    if return_indices:
        return out, _wrap(chosen[..., 0].reshape(*lead, *sizes).astype(np.int64))
    return out


def _check(fn, input, nd):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for "
                "argument #1 'self' (while checking arguments for adaptive_max_pool1d)"
            )
        raise RuntimeError(
            f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) or (C, L) to a fixed output length.

    Returns the pooled tensor, and with `return_indices` also the int64 positions (along L)
    of each maximum (what `max_unpool1d` takes).
    """
    _check("adaptive_max_pool1d", input, 1)
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(
                "adaptive_max_pool1d() argument 'output_size' should contain one int "
                f"(got {len(output_size)})"
            )
        output_size = output_size[0]
    if not isinstance(output_size, numbers.Integral) or output_size < 0:
        raise RuntimeError(
            f"adaptive_max_pool1d: output_size must be a non-negative int, got {output_size!r}"
        )
    return _pool("adaptive_max_pool1d", input, (int(output_size),), return_indices)


def _sizes(fn, input, output_size, nd):
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            what = "a pair (H_out, W_out)" if nd == 2 else "a triple (D_out, H_out, W_out)"
            raise ValueError(f"{fn}: output_size must be an int or {what}, got {output_size!r}")
        sizes = tuple(input.shape[-nd + i] if s is None else s for i, s in enumerate(output_size))
    else:
        sizes = (output_size,) * nd
    if not all(isinstance(s, numbers.Integral) and s >= 0 for s in sizes):
        raise RuntimeError(f"{fn}: output_size must hold non-negative ints, got {output_size!r}")
    return tuple(int(s) for s in sizes)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) to a fixed (H_out, W_out); None keeps a size.

    Returns the pooled tensor, and with `return_indices` also the int64 flat positions
    (h * W + w) of each maximum.

    >>> adaptive_max_pool2d(tg.ones(1, 2, 5, 7), (2, None)).shape
    (1, 2, 2, 7)
    """
    _check("adaptive_max_pool2d", input, 2)
    sizes = _sizes("adaptive_max_pool2d", input, output_size, 2)
    return _pool("adaptive_max_pool2d", input, sizes, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed (D_out, H_out, W_out).

    None keeps a size; with `return_indices` also the int64 flat positions
    (d * H * W + h * W + w) of each maximum, as PyTorch's.

    >>> out, idx = adaptive_max_pool3d(tg.arange(8.0).reshape(1, 2, 2, 2), 1, True)
    >>> out.numpy(), idx.numpy()
    (array([[[[7.]]]], dtype=float32), array([[[[7]]]]))
    """
    _check("adaptive_max_pool3d", input, 3)
    sizes = _sizes("adaptive_max_pool3d", input, output_size, 3)
    return _pool("adaptive_max_pool3d", input, sizes, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool1d` that always returns (output, indices), as PyTorch's.

    >>> adaptive_max_pool1d_with_indices(tg.tensor([[1.0, 5.0, 2.0]]), 1)[1].numpy()
    array([[1]])
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool2d` that always returns (output, indices), as PyTorch's.

    >>> adaptive_max_pool2d_with_indices(tg.arange(4.0).reshape(1, 2, 2), 1)[1].numpy()
    array([[[3]]])
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool3d` that always returns (output, indices), as PyTorch's.

    >>> adaptive_max_pool3d_with_indices(tg.arange(8.0).reshape(1, 2, 2, 2), 1)[1].numpy()
    array([[[[7]]]])
    """
    return adaptive_max_pool3d(input, output_size, True)
