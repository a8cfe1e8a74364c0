"""Direct (no GEMM) stride-1 convolution for groups of very few channels: depthwise convs,
their transposed convs and the weight gradients of both (multiplier up to 4).

Why not im2col + GEMM: with one input channel per group the GEMM is a batch of 1-row
products, slow in BLAS, after a window copy prod(K) times the input. Instead each kernel
offset is one multiply-accumulate over the whole input, on a *flat padded grid*: the input
is copied once into a zeroed (N, C, *padded) buffer, and the output is computed at every
position of that padded plane (the first `out_sizes` positions of each axis are the real
ones, the rest is cropped). At stride 1 the input a kernel offset meets is then the flat
buffer shifted by a constant, so each multiply and add runs over one contiguous array
(NumPy coalesces it into a single loop); the weights are spread into full planes for the
same reason (a (1, C, 1) broadcast operand is 2x slower: NumPy's loop restarts per row).
The batch goes in blocks of ~512 KiB so that the accumulator and the product stay in L2.
(bench/NOTES.md "Stop 19": 32x64x14x14 3x3, forward 3.0 -> 1.5 ms, transposed conv 5.7 ->
2.2, weight gradient 2.9 -> 1.1 as dot products along the flat grid.)

The cropped-away positions read past a plane's end into the next one or into the slack;
they never reach a kept output. In the transposed conv and the weight gradient the padding
zeros meet the weights and x: with an infinite weight or input this gives NaN (at every
output an infinite weight reaches near the border) where PyTorch's sum over the real
positions alone gives +-Inf. So ops/conv.py takes the other paths for a transposed conv
whose weights are not all finite, and recomputes a weight gradient that came out non-finite.

Shapes: `groups` G, `a` input and `b` output channels per group (channel g*a + i is input
i of group g, as in PyTorch's grouped layout).
"""

from __future__ import annotations

import itertools
from math import prod
from typing import Any

from . import parallel
from .scratch import scratch

__all__: list[str] = []

_MAX_PAIRS = 4  # a * b (channel pairs per group) up to which the weight gradient is direct
_MAX_SUMMED = 2  # inputs per group (with one output) up to which the correlation is direct
_BLOCK_BYTES = 512 * 1024  # batch block: accumulator + product stay in L2


def correlates(in_channels: int, out_channels: int, groups: int, stride) -> bool:
    """Whether a conv or transposed conv of these channels and stride is computed here: one
    output channel per group from at most two inputs. With more outputs per group im2col +
    GEMM wins, its cost hardly grows with them (32x64x14x14 3x3, multiplier 2: 6.2 ms
    direct vs 3.5; a transposed conv summing 2 inputs per group 5.1 vs 6.9, 4 inputs 10.6
    vs 7.5)."""
    a, b = in_channels // groups, out_channels // groups
    return groups > 1 and b == 1 and a <= _MAX_SUMMED and all(s == 1 for s in stride)


def weight_grad_applies(in_channels: int, out_channels: int, groups: int, stride) -> bool:
    """Whether the weight gradient of a conv of these channels and stride is computed here
    (multiplier 1 / 2 / 4: 1.4 / 2.3 / 3.9 ms vs 2.2 / 3.3 / 4.7 for the old direct path)."""
    a, b = in_channels // groups, out_channels // groups
    return groups > 1 and a * b <= _MAX_PAIRS and all(s == 1 for s in stride)


def offset_shifts(plane, kernel, dilation):
    """Each kernel offset's shift along the flattened plane, row-major offset order."""
    strides = [prod(plane[i + 1 :]) for i in range(len(plane))]
    return [
        sum(k * d * s for k, d, s in zip(ks, dilation, strides, strict=True))
        for ks in itertools.product(*(range(k) for k in kernel))
    ]


def _on_grid(xp, role, a, plane, at, slack):
    """a (N, C, *S) in a zeroed flat (N, C, *plane) scratch grid followed by `slack` zeros,
    a's origin at `at` on each axis (cropped where it falls outside the plane)."""
    n, c = a.shape[:2]
    size = n * c * prod(plane)
    flat = scratch(xp, role, (size + slack,), a.dtype)
    grid = flat[:size].reshape((n, c) + tuple(plane))
    src, dst = [], []
    for s, p, t in zip(a.shape[2:], plane, at, strict=True):
        lo, hi = max(0, -t), max(max(0, -t), min(s, p - t))
        src.append(slice(lo, hi))
        dst.append(slice(lo + t, hi + t))
    for i, d in enumerate(dst):  # zero only what `a` does not cover: the slabs around it
        head = (slice(None),) * (2 + i)
        grid[head + (slice(0, d.start),)] = 0
        grid[head + (slice(d.stop, None),)] = 0
    flat[size:] = 0
    every = (slice(None), slice(None))
    grid[every + tuple(dst)] = a[every + tuple(src)]
    return flat


def _correlate(xp, flat, n, groups, a, b, plane, shifts, wk):
    """acc (N, G, b, L), L = prod(plane): acc[n, g, j, p] = sum over i < a and offsets k of
    grid[n, g*a + i, p + shifts[k]] * wk[k, i, j, g], `flat` the (N, G*a, *plane) grid with
    slack. A scratch buffer: read it before the op returns."""
    lp = prod(plane)
    dtype = flat.dtype
    acc = scratch(xp, "conv.direct_acc", (n, groups, b, lp), dtype)
    planes = scratch(xp, "conv.direct_w", (len(shifts), a, b, groups, lp), dtype)
    planes[...] = wk[..., None]
    views = [flat[s : s + n * groups * a * lp].reshape(n, groups, a, lp) for s in shifts]
    step = max(1, _BLOCK_BYTES // (groups * max(a, b) * lp * dtype.itemsize))

    def body(lo, hi):
        tmp = scratch(xp, "conv.direct_tmp", (min(step, hi - lo), groups, lp), dtype)
        for s in range(lo, hi, step):
            e = min(hi, s + step)
            t = tmp[: e - s]
            for j in range(b):
                out = acc[s:e, :, j]
                first = True
                for k, v in enumerate(views):
                    for i in range(a):
                        if first:
                            xp.multiply(v[s:e, :, i], planes[k, i, j], out=out)
                            first = False
                        else:
                            xp.multiply(v[s:e, :, i], planes[k, i, j], out=t)
                            out += t

    parallel.for_slices(xp, n, body, elements=acc.size * len(shifts) * a)
    return acc


def _cropped(xp, acc, n, channels, plane, sizes, bias, out=None):
    """A new (N, channels, *sizes) array (or `out`): the first `sizes` of the grid
    accumulator, + bias."""
    if out is None:
        out = xp.empty((n, channels) + tuple(sizes), dtype=acc.dtype)
    grid = acc.reshape((n, channels) + tuple(plane))
    out[...] = grid[(slice(None), slice(None)) + tuple(slice(0, s) for s in sizes)]
    if bias is not None:
        out += bias.reshape((-1,) + (1,) * len(sizes))
    return out


def conv(xp: Any, x, w, bias, *, padding, dilation, groups, out=None):
    """Stride-1 grouped conv: x (N, G*a, *S), w (G*b, a, *K) -> (N, G*b, *S_out)."""
    n, c = x.shape[:2]
    o, kernel = w.shape[0], w.shape[2:]
    a, b = c // groups, o // groups
    plane = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    sizes = tuple(p - d * (k - 1) for p, d, k in zip(plane, dilation, kernel, strict=True))
    shifts = offset_shifts(plane, kernel, dilation)
    flat = _on_grid(xp, "conv.direct_in", x, plane, [lo for lo, _ in padding], shifts[-1])
    wk = w.reshape(groups, b, a, -1).transpose(3, 2, 1, 0)  # (K, a, b, G)
    acc = _correlate(xp, flat, n, groups, a, b, plane, shifts, wk)
    return _cropped(xp, acc, n, o, plane, sizes, bias, out)


def conv_transpose(xp: Any, y, w, bias, *, padding, dilation, groups, out_shape, out=None):
    """Stride-1 grouped transposed conv: y (N, G*a, *S), w (G*a, b, *K) -> (N, G*b,
    *out_shape), as the correlation of y (offset by d(K-1) - pad_lo) with the flipped kernel."""
    n, c = y.shape[:2]
    a, b, kernel = c // groups, w.shape[1], w.shape[2:]
    reach = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
    plane = tuple(o + r for o, r in zip(out_shape, reach, strict=True))
    shifts = offset_shifts(plane, kernel, dilation)
    at = [r - lo for r, (lo, _) in zip(reach, padding, strict=True)]
    flat = _on_grid(xp, "conv.direct_in", y, plane, at, shifts[-1])
    # the flattened kernel reversed is the kernel flipped on every axis
    wk = w.reshape(groups, a, b, -1)[..., ::-1].transpose(3, 1, 2, 0)  # (K, a, b, G)
    acc = _correlate(xp, flat, n, groups, a, b, plane, shifts, wk)
    return _cropped(xp, acc, n, groups * b, plane, out_shape, bias, out)


def weight_grad(xp: Any, x, g, *, kernel, padding, dilation, groups):
    """dw (G*b, a, *K) of the stride-1 grouped conv of x (N, G*a, *S) with output gradient
    g (N, G*b, *S_out): per offset, dot products of g and the shifted x along the grid."""
    n, c = x.shape[:2]
    a, b = c // groups, g.shape[1] // groups
    plane = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding, strict=True))
    shifts = offset_shifts(plane, kernel, dilation)
    lp = prod(plane)
    flat = _on_grid(xp, "conv.direct_in", x, plane, [lo for lo, _ in padding], shifts[-1])
    gflat = _on_grid(xp, "conv.direct_g", g, plane, [0] * len(plane), 0)
    gg = gflat.reshape(n, groups, b, 1, lp)
    vecdot = getattr(xp, "vecdot", None)  # NumPy >= 2
    dw = xp.empty((len(shifts), groups, b, a), dtype=g.dtype)
    for k, s in enumerate(shifts):
        xs = flat[s : s + n * c * lp].reshape(n, groups, 1, a, lp)
        if vecdot is not None:
            xp.sum(vecdot(gg, xs), axis=0, out=dw[k])
        else:
            dw[k] = xp.einsum("ngjzp,ngzip->gji", gg, xs)
    out = xp.ascontiguousarray(dw.transpose(1, 2, 3, 0))
    return out.reshape((groups * b, a) + tuple(kernel))
