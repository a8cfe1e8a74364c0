"""tg.nn.functional power-average pooling (`lp_pool1d/2d/3d`) and the partial inverse of max
pooling (`max_unpool1d/2d/3d`), as PyTorch's.

lp_pool is composed as PyTorch documents it: the p-th root of the sum of x ** p over each
window (an average pool times the window size, so ceil_mode edges are PyTorch's too).
max_unpool puts each value at the flat position its index names, in an output of zeros (one
differentiable scatter: the gradient of a value is the output gradient at its index). Two
values with one index write one of them; which is unspecified, as in PyTorch.

    >>> x = tg.tensor([[[1.0, 3.0, 2.0, 0.0]]])
    >>> out, idx = tg.nn.functional.max_pool1d(x, 2, return_indices=True)
    >>> max_unpool1d(out, idx, 2).numpy()
    array([[[0., 3., 2., 0.]]], dtype=float32)
"""

from __future__ import annotations

import math

import numpy as np

from ..creation import zeros, zeros_like
from ..ops.elementwise import where
from ..tensor import Tensor
from . import functional_conv as _conv

__all__ = [
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


# ---------------------------------------------------------------- lp pooling
def _lp_poolnd(nd, fn, input, norm_type, kernel_size, stride, ceil_mode):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)):
        raise TypeError(
            f"{fn}: norm_type must be a number (the p of the p-norm), got {norm_type!r}"
        )
    if norm_type == 0:
        raise ValueError(f"{fn}: norm_type must be non-zero (it is the p of x ** p), got 0")
    kernel = _conv._tuple(kernel_size, nd, "kernel_size", fn)
    pooled = _conv._avg_poolnd(nd, fn, input**norm_type, kernel, stride, 0, ceil_mode, True, None)
    # PyTorch's sign(s) * relu(|s|) is s, with a zero gradient where a window sums to 0
    # (not the NaN of 0 * inf from the root's derivative there)
    total = where(pooled != 0, pooled, zeros_like(pooled))
    return (total * math.prod(kernel)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, L): (sum of x ** p over a window) ** (1 / p).

    p = 1 is sum pooling, p = inf would be max pooling (use max_pool1d). stride defaults to
    kernel_size. A window of negative values with an odd p gives NaN, as in PyTorch.

    >>> lp_pool1d(tg.tensor([[3.0, 4.0, 1.0, 0.0]]), 2, 2).numpy()
    array([[5., 1.]], dtype=float32)
    """
    return _lp_poolnd(1, "lp_pool1d", input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, H, W), as torch.nn.functional.lp_pool2d.

    >>> lp_pool2d(tg.ones(1, 1, 4, 4), 2, 2).numpy()
    array([[[[2., 2.],
             [2., 2.]]]], dtype=float32)
    """
    return _lp_poolnd(2, "lp_pool2d", input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, D, H, W), as torch.nn.functional.lp_pool3d.

    >>> lp_pool3d(tg.ones(1, 1, 2, 2, 2), 1, 2).numpy()
    array([[[[[8.]]]]], dtype=float32)
    """
    return _lp_poolnd(3, "lp_pool3d", input, norm_type, kernel_size, stride, ceil_mode)


# ---------------------------------------------------------------- max unpooling
def _unpool_size(fn, spatial, kernel, stride, padding, output_size):
    """PyTorch's rule: the size max pooling came from, or output_size within one stride of it."""
    nd = len(kernel)
    default = [(spatial[d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return tuple(default)
    if isinstance(output_size, int):
        raise TypeError(
            f"{fn}: output_size must be a sequence of {nd} (or {nd + 2}) ints, got {output_size!r}"
        )
    size = list(output_size)
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(
            f"{fn}: output_size should be a sequence containing {nd} or {nd + 2} elements, "
            f"but it has a length of '{len(list(output_size))}'"
        )
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < int(size[d]) < hi:
            raise ValueError(
                f'{fn}: invalid output_size "{tuple(output_size)}" (dim {d} must be between '
                f"{lo} and {hi})"
            )
    return tuple(int(s) for s in size)


def _max_unpoolnd(nd, fn, input, indices, kernel_size, stride, padding, output_size):
    for name, t in (("input", input), ("indices", indices)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fn}: input should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
            f"{input.ndim} dimensions"
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{fn}: expected indices of the input's shape {list(input.shape)}, got "
            f"{list(indices.shape)} (pass the indices max_pool{nd}d(return_indices=True) gave)"
        )
    if indices.dtype != np.int64:
        raise RuntimeError(f"{fn}: indices must be int64 (tg.int64), got {indices.dtype}")
    kernel = _conv._tuple(kernel_size, nd, "kernel_size", fn)
    stride = kernel if stride is None else _conv._tuple(stride, nd, "stride", fn)
    pad = _conv._tuple(padding, nd, "padding", fn)
    _conv._check_positive(kernel, "kernel_size", fn)
    _conv._check_positive(stride, "stride", fn)
    lead, spatial = tuple(input.shape[:-nd]), tuple(input.shape[-nd:])
    size = _unpool_size(fn, spatial, kernel, stride, pad, output_size)
    cells = math.prod(size)
    flat_idx = indices._data.reshape(lead + (-1,))
    bad = (flat_idx < 0) | (flat_idx >= cells)
    if bool(bad.any()):
        volume = "x".join(str(s) for s in (size + (1,) if nd == 1 else size))
        raise RuntimeError(
            f"{fn}: Found an invalid max index: {int(flat_idx[bad][0])} (output volumes are of "
            f"size {volume})"
        )
    base = zeros(*lead, cells, dtype=input.dtype, device=input.device)
    out = base.scatter(-1, indices.reshape(lead + (-1,)), input.reshape(lead + (-1,)))
    return out.reshape(lead + size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: each value at the position its index names, zeros
    elsewhere. Output length (L - 1) * stride - 2 * padding + kernel_size unless `output_size`
    (within one stride of that) is given.

    >>> max_unpool1d(tg.tensor([[[5.0]]]), tg.tensor([[[1]]]), 2).numpy()
    array([[[0., 5.]]], dtype=float32)
    """
    return _max_unpoolnd(
        1, "max_unpool1d", input, indices, kernel_size, stride, padding, output_size
    )


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d, as torch.nn.functional.max_unpool2d; indices are the
    flat positions h * W_out + w that max_pool2d(return_indices=True) gives.

    >>> max_unpool2d(tg.tensor([[[[5.0]]]]), tg.tensor([[[[3]]]]), 2).numpy()
    array([[[[0., 0.],
             [0., 5.]]]], dtype=float32)
    """
    return _max_unpoolnd(
        2, "max_unpool2d", input, indices, kernel_size, stride, padding, output_size
    )


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool3d (flat indices d * H * W + h * W + w).

    >>> max_unpool3d(tg.ones(1, 1, 1, 1, 1), tg.tensor([[[[[7]]]]]), 2).shape
    (1, 1, 2, 2, 2)
    """
    return _max_unpoolnd(
        3, "max_unpool3d", input, indices, kernel_size, stride, padding, output_size
    )
