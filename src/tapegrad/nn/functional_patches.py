"""tg.nn.functional `unfold` (im2col) and `fold` (col2im, its adjoint) over (N, C, H, W).

Both move values between an image and its sliding blocks through one precomputed table of
flat positions: `unfold` gathers with it (`index_select`), `fold` adds back with it
(`scatter_add`, overlapping blocks summing). Gradients come from those two ops.

    >>> unfold(tg.ones(1, 2, 4, 4), kernel_size=2).shape
    (1, 8, 9)
    >>> fold(tg.ones(1, 8, 9), output_size=(4, 4), kernel_size=2)[0, 0].numpy()
    array([[1., 2., 2., 1.],
           [2., 4., 4., 2.],
           [2., 4., 4., 2.],
           [1., 2., 2., 1.]], dtype=float32)
"""

from __future__ import annotations

import numbers

import numpy as np

from ..creation import zeros
from ..ops.gather_scatter import scatter_add
from ..ops.index import index_select
from ..ops.joins import pad
from ..tensor import Tensor

__all__ = ["unfold", "fold"]


def _pair(value, name):
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return tuple(int(v) for v in value)


def _geometry(kernel_size, dilation, padding, stride):
    k, d, p, s = (
        _pair(v, n)
        for v, n in (
            (kernel_size, "kernel_size"),
            (dilation, "dilation"),
            (padding, "padding"),
            (stride, "stride"),
        )
    )
    checks = (
        (k, "kernel size should be greater than zero", "kernel", 1),
        (s, "stride should be greater than zero", "stride", 1),
        (p, "padding should be non-negative", "pad", 0),
        (d, "dilation should be greater than zero", "dilation", 1),
    )
    for value, what, label, least in checks:
        if min(value) < least:
            raise RuntimeError(
                f"{what}, but got {label}_height: {value[0]} {label}_width: {value[1]}"
            )
    return k, d, p, s


def _blocks(size, k, d, p, s):
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


def _positions(padded_w, k, d, s, blocks):
    """Flat positions in the padded image: row (kernel offset), column (block)."""
    ki, kj = np.meshgrid(np.arange(k[0]) * d[0], np.arange(k[1]) * d[1], indexing="ij")
    bi, bj = np.meshgrid(np.arange(blocks[0]) * s[0], np.arange(blocks[1]) * s[1], indexing="ij")
    rows = ki.reshape(-1, 1) + bi.reshape(1, -1)
    cols = kj.reshape(-1, 1) + bj.reshape(1, -1)
    return (rows * padded_w + cols).reshape(-1)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: (N, C, H, W) -> (N, C * kh * kw, L), L = number of blocks.

    Args:
        input: (N, C, H, W) or unbatched (C, H, W).
        kernel_size, dilation, padding, stride: an int or a pair each.

    Returns:
        Columns ordered channel-major, then kernel row, kernel column; blocks row-major.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"unfold: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"unfold: expected 3D or 4D (batch mode) tensor for input, but got: {list(input.shape)}"
        )
    k, d, p, s = _geometry(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    n, c, h, w = x.shape
    blocks = _blocks((h, w), k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, "
            f"padding={p}, calculated shape of the array of sliding blocks as {blocks}, but "
            "its components must be at least one."
        )
    if p != (0, 0):
        x = pad(x, (p[1], p[1], p[0], p[0]))
    flat = x.reshape(n, c, -1)
    idx = _positions(w + 2 * p[1], k, d, s, blocks)
    out = index_select(flat, -1, idx).reshape(n, c * k[0] * k[1], blocks[0] * blocks[1])
    return out.squeeze(0) if input.ndim == 3 else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back into an image: (N, C * kh * kw, L) -> (N, C, *output_size).

    The adjoint of `unfold` with the same arguments; where blocks overlap their values add.

    Args:
        input: (N, C * kh * kw, L) or unbatched (C * kh * kw, L).
        output_size: the image's (H, W) (an int means square).
        kernel_size, dilation, padding, stride: an int or a pair each.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"fold: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    size = _pair(output_size, "output_size")
    k, d, p, s = _geometry(kernel_size, dilation, padding, stride)
    x = input.unsqueeze(0) if input.ndim == 2 else input
    n, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={ck} and kernel_size={k}."
        )
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1 or blocks[0] * blocks[1] != length:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, expected size of input's dimension 2 to match the calculated number "
            f"of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={length}."
        )
    c = ck // kk
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    idx = np.broadcast_to(_positions(wp, k, d, s, blocks), (n, c, kk * length))
    base = zeros((n, c, hp * wp), dtype=x.dtype)
    out = scatter_add(base, -1, np.ascontiguousarray(idx), x.reshape(n, c, kk * length))
    out = out.reshape(n, c, hp, wp)
    if p != (0, 0):
        out = out[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]
    return out.squeeze(0) if input.ndim == 2 else out
