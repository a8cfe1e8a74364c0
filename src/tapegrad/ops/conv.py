"""Convolution ops, for any number of spatial dimensions (1-D, 2-D, 3-D).

Layout is PyTorch's: input (N, C, *S), conv weight (O, C/groups, *K), transposed-conv
weight (C_in, C_out/groups, *K). Spatial parameters arrive normalised by the public
functions (nn/functional_conv.py): `stride`, `dilation`, `kernel` are tuples with one entry
per spatial dim and `padding` a tuple of (low, high) pairs (asymmetric for 'same' with an
even kernel, or for ceil_mode).

A convolution is a GEMM: the input windows are copied into a (C*K, N*L) matrix (im2col
over a strided view; in blocks of samples that stay in L2, one GEMM per block) and
multiplied by the (O, C*K) weight matrix (a groups-1 forward keeps the rows per sample,
(N, C*K, L), and writes its per-sample GEMMs straight into the result); a 1x1 conv
multiplies x itself (no copy), and a stride-1 depthwise conv (forward, transposed and weight
gradient) multiply-accumulates over the kernel offsets on a flat padded grid
(ops/conv_direct.py); a strided depthwise conv's gradients do it on strided views. The
large temporaries (padded input, window matrix, GEMM result, col2im accumulator) live in
per-thread scratch buffers (ops/scratch.py): on the benchmark VMs a fresh multi-MiB array
costs more in page faults than the GEMM that fills it.

The gradients are ops too, so second order closes: d/dx conv = conv_transpose (a GEMM +
a col2im loop over the kernel offsets; at stride 1 one contiguous add per offset on a flat
grid, `_flat_transpose`), d/dw conv = conv_weight_grad (a GEMM over the same im2col),
and conv_transpose's own gradients are conv and conv_weight_grad again. A rule skips the
input gradient when the input needs none (the first layer of a network). Pooling:
ops/pool.py.
"""

from __future__ import annotations

import itertools
from math import prod

import numpy as np

from . import conv_direct, parallel
from .promotion import check_same_float
from .registry import defop
from .scratch import scratch

__all__: list[str] = []


# ---------------------------------------------------------------- window helpers
def _out_size(size, k, s, lo, hi, d):
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _padded(xp, x, padding, value=0.0, role=None):
    """x (N, C, *S) padded by (lo, hi) pairs, or x itself. The buffer is allocated channel-major
    (C, N, *S) so that im2col later copies along contiguous rows; with a `role` it is a
    scratch buffer (ops/scratch.py), to be read before the op returns."""
    if not any(lo or hi for lo, hi in padding):
        return x
    n, c = x.shape[:2]
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding, strict=False))
    buf = scratch(xp, role, (c, n) + sp, x.dtype) if role is not None else None
    if buf is None:
        buf = (
            xp.full((c, n) + sp, value, dtype=x.dtype) if value else xp.zeros((c, n) + sp, x.dtype)
        )
    inner = buf[
        (slice(None), slice(None))
        + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[2:], padding, strict=False))
    ]
    xc = _channel_major(x)

    def body(lo, hi):
        if role is not None:
            buf[:, lo:hi] = value
        inner[:, lo:hi] = xc[:, lo:hi]

    parallel.for_slices(xp, n, body, elements=buf.size)
    return _channel_major(buf)


def _channel_major(a):
    """(N, C, *S) <-> (C, N, *S), a view."""
    return a.transpose((1, 0) + tuple(range(2, a.ndim)))


def _padded_rows(xp, x, padding):
    """x (N, C, *S) zero-padded by (lo, hi) pairs in x's own (sample-major) layout, or x."""
    if not any(lo or hi for lo, hi in padding):
        return x
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding, strict=False))
    buf = xp.zeros(x.shape[:2] + sp, dtype=x.dtype)
    buf[_crop(padding, x.shape[2:])] = x
    return buf


def _crop(padding, sizes):
    """Index of the unpadded (N, C, *sizes) region of a padded array."""
    return (slice(None), slice(None)) + tuple(
        slice(lo, lo + s) for (lo, _), s in zip(padding, sizes, strict=False)
    )


def _geometry(x_shape, kernel, stride, padding, dilation):
    """Output spatial sizes of a window op on an input of shape x_shape."""
    return tuple(
        _out_size(x_shape[2 + i], kernel[i], stride[i], *padding[i], dilation[i])
        for i in range(len(kernel))
    )


def _windows(xp, xpad, kernel, stride, dilation, out_sizes):
    """Strided view (N, C, *S_out, *K) of the windows of a padded input (no copy)."""
    st = xpad.strides
    shape = xpad.shape[:2] + tuple(out_sizes) + tuple(kernel)
    strides = (
        st[:2]
        + tuple(a * s for a, s in zip(st[2:], stride, strict=False))
        + tuple(a * d for a, d in zip(st[2:], dilation, strict=False))
    )
    return xp.lib.stride_tricks.as_strided(xpad, shape, strides, writeable=False)


def _offset_slices(kernel, stride, dilation, out_sizes):
    """For each kernel offset: the slice of the padded input that meets it, over all outputs."""
    ranges = [
        [slice(k * d, k * d + (o - 1) * s + 1, s) for k in range(kk)]
        for kk, s, d, o in zip(kernel, stride, dilation, out_sizes, strict=False)
    ]
    return [(slice(None), slice(None)) + sl for sl in itertools.product(*ranges)]


def _window_matrix(xp, x, kernel, stride, padding, dilation):
    """The (C, *K, N, *S_out) strided view of x's padded windows (the padded copy is a
    scratch buffer: read it before the op returns), and S_out."""
    nd = x.ndim - 2
    out_sizes = _geometry(x.shape, kernel, stride, padding, dilation)
    win = _windows(
        xp, _padded(xp, x, padding, role="conv.pad"), kernel, stride, dilation, out_sizes
    )
    perm = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    return win.transpose(perm), out_sizes


# The channel-major paths go through the batch in blocks of samples: each block's window
# matrix (and GEMM result, col2im accumulator) stays in L2 between the copy that fills it
# and the GEMM that reads it, instead of a matrix of several MiB making a round trip
# through L3 (conv2 of W3 at one thread: the GEMM (32x144)@(144x12544) 1.29 ms whole vs
# 1.01 on 784-column blocks; bench/NOTES.md "Stop 21").
_BLOCK_BYTES = 1024 * 1024


def _batch_blocks(n, sample_bytes, block_bytes=_BLOCK_BYTES):
    """(lo, hi) blocks of range(n) of about `block_bytes` at `sample_bytes` a sample."""
    # a power of two: blocks then line up with the halves of an even batch split over
    # threads (ops/parallel.py), so that a split conv is bitwise the unsplit one
    step = 1 << max(0, (block_bytes // max(1, sample_bytes)).bit_length() - 1)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def _cols_block(xp, view, lo, hi, groups):
    """Samples lo:hi of a `_window_matrix` view as a (G, C/G * prod(K), (hi - lo) * L_out)
    matrix, copied into a scratch buffer (read it before the op returns)."""
    nd = (view.ndim - 2) // 2
    at = (slice(None),) * (1 + nd) + (slice(lo, hi),)
    block = view[at]
    cols = scratch(xp, "conv.cols", block.shape, view.dtype)
    cols[...] = block
    rows = prod(block.shape[: 1 + nd])
    return cols.reshape(groups, rows // groups, cols.size // rows if rows else 0)


def _channel_block(xp, t, lo, hi, groups, role):
    """Samples lo:hi of t (N, C, *S) as a (G, C/G, (hi - lo) * L) channel-major matrix: a
    strided view when t is channel-major in memory, else a copy into a scratch buffer."""
    view = _channel_major(t)[:, lo:hi]
    c = t.shape[1]
    size = (hi - lo) * prod(t.shape[2:])
    if not _channel_major(t).flags.c_contiguous:
        buf = scratch(xp, role, view.shape, t.dtype)
        buf[...] = view
        view = buf
    return view.reshape(groups, c // groups, size)


# A conv whose window matrix has few rows (a first layer: C_in * prod(K) = 9 for one input
# channel and 3x3) is memory-bound: its GEMM does ~1 multiply-add per byte moved, and the
# channel-major layout costs a transposing copy of the result (and of g for the weight
# gradient) as large as the GEMM's own output. Window rows per sample, (N, C*K, L), and a
# batch of per-sample GEMMs write the result in its final layout and read g as it is:
# conv1 of W3 (64x1x28x28 -> 16) GEMM 0.70 -> 0.27 ms, weight gradient 0.80 -> 0.46 + no
# 0.33 ms copy of g (one BLAS thread; at two, the GEMMs tie). With many rows the one big
# GEMM wins (conv2, 144 rows: 1.2 vs 1.7 ms at two threads), so only below this:
_SAMPLE_MAJOR_ROWS = 32


def _is_sample_major(c, kernel, groups):
    return groups == 1 and c * prod(kernel) <= _SAMPLE_MAJOR_ROWS


def _rows_view(xp, x, kernel, stride, padding, dilation):
    """The (N, C, *K, *S_out) strided view of x's padded windows, sample-major (the padded
    copy is a scratch buffer: read it before the op returns), and S_out."""
    nd = x.ndim - 2
    out_sizes = _geometry(x.shape, kernel, stride, padding, dilation)
    win = _windows(
        xp, _padded(xp, x, padding, role="conv.pad"), kernel, stride, dilation, out_sizes
    )
    view = win.transpose((0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd)))
    return view, out_sizes


def _im2col_rows(xp, x, kernel, stride, padding, dilation):
    """(N, C * prod(K), L_out) window rows per sample (one copy, into a scratch buffer:
    read it before the op returns), and S_out."""
    view, out_sizes = _rows_view(xp, x, kernel, stride, padding, dilation)
    cols = scratch(xp, "conv.cols", view.shape, x.dtype)

    def body(lo, hi):
        cols[lo:hi] = view[lo:hi]

    parallel.for_slices(xp, x.shape[0], body, elements=cols.size)
    n, c = x.shape[:2]
    return cols.reshape(n, c * prod(kernel), prod(out_sizes)), out_sizes


def _sample_major_forward(xp, x, w, b, kernel, stride, padding, dilation, out=None):
    """(N, O, *S_out) conv as a batch of per-sample GEMMs on window rows: no result copy
    (into `out`, C-contiguous, if given)."""
    cols, out_sizes = _im2col_rows(xp, x, kernel, stride, padding, dilation)
    rows = None if out is None else out.reshape(x.shape[0], w.shape[0], cols.shape[2])
    res = xp.matmul(w.reshape(w.shape[0], -1), cols, out=rows)
    return _add_bias(res.reshape((x.shape[0], w.shape[0]) + tuple(out_sizes)), b)


# Larger convs (groups 1) go through the batch in blocks of samples too, window rows per
# sample (N, C*K, L) and a batch of per-sample GEMMs writing each block of the result in
# its final layout: no channel-major GEMM result to copy back with a transpose. Conv2 of
# W3 (64x16x14x14 -> 32, 3x3) at one BLAS thread: 2.64-2.83 -> 2.20-2.26 ms; it also tied
# or won on 5 other shapes (L_out 4 to 3136; bench/NOTES.md "Stop 24").
def _sample_blocks_forward(xp, x, w, b, kernel, stride, padding, dilation, out=None):
    """(N, O, *S_out) conv, groups 1, in blocks of samples: per block one window-row copy
    and a batch of per-sample GEMMs into the result (`out`, C-contiguous, if given)."""
    view, out_sizes = _rows_view(xp, x, kernel, stride, padding, dilation)
    n, c = x.shape[:2]
    o = w.shape[0]
    if out is None:
        # a new row-major array, as PyTorch's result (`conv(x).view(n, -1)` must work)
        out = xp.empty((n, o) + tuple(out_sizes), dtype=xp.result_type(x, w))
    wm = w.reshape(o, -1)
    size = prod(out_sizes)
    sample_bytes = c * prod(kernel) * size * x.dtype.itemsize
    for lo, hi in _batch_blocks(n, sample_bytes):
        cols = scratch(xp, "conv.cols", view[lo:hi].shape, x.dtype)
        cols[...] = view[lo:hi]
        block = out[lo:hi]
        xp.matmul(wm, cols.reshape(hi - lo, -1, size), out=block.reshape(hi - lo, o, size))
        _add_bias(block, b)  # (cache-hot: the block was just written)
    return out


def _sample_major_weight_grad(xp, x, g, kernel, stride, padding, dilation):
    """dw (O, C, *K): the sum over samples of g_n cols_n^T (g read as it is, if contiguous)."""
    n, c = x.shape[:2]
    o = g.shape[1]
    cols, _ = _im2col_rows(xp, x, kernel, stride, padding, dilation)
    gm = g.reshape(n, o, cols.shape[2])  # (an explicit size: the batch may be empty)
    per_sample = xp.matmul(
        gm, cols.swapaxes(-1, -2), out=scratch(xp, "conv.gemm", (n, o, cols.shape[1]), cols.dtype)
    )
    return per_sample.sum(axis=0).reshape((o, c) + tuple(kernel))


def _gemm(xp, a, b, role="conv.gemm"):
    """Batched (or, for one group, plain) a @ b into a scratch buffer."""
    if a.shape[0] == 1:
        a, b = a[0], b[0]
    shape = a.shape[:-1] + b.shape[-1:] if a.ndim == 2 else (a.shape[0], a.shape[1], b.shape[-1])
    return xp.matmul(a, b, out=scratch(xp, role, shape, xp.result_type(a, b)))


def _add_bias(out, b):
    """out (N, C, *S), row-major and new: the bias added in place."""
    if b is not None:
        out += b.reshape((-1,) + (1,) * (out.ndim - 2))
    return out


# ---------------------------------------------------------------- special shapes
# A 1x1 convolution without padding needs no windows at all: x is its own im2col matrix,
# sample by sample, and the batched GEMM writes the result in its final layout. The
# gradients of a depthwise convolution (each input channel alone) would be batches of 1-row
# GEMMs, slow in BLAS; a direct multiply-accumulate over the kernel offsets on strided views
# is a few whole-array passes (the transposed conv 12 -> 6 ms, the weight gradient 4.4 -> 3.1
# for 32x64x14x14 3x3; the forward measured faster as im2col + GEMM and stays so).
_DEPTHWISE_MULTIPLIER = 4  # output channels per input channel up to which the direct path wins


def _is_pointwise(kernel, padding):
    return all(k == 1 for k in kernel) and not any(lo or hi for lo, hi in padding)


def _is_depthwise(in_channels, out_channels, groups):
    return 1 < groups == in_channels and out_channels // groups <= _DEPTHWISE_MULTIPLIER


def _sample_points(x, stride):
    """x at a 1x1 conv's sample points: a view (strided when stride > 1)."""
    return x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)]


def _pointwise_forward(xp, x, w, groups, stride, out=None):
    """(N, O, *S_out) 1x1 convolution: one batched GEMM, no copy of x at stride 1."""
    xs = _sample_points(x, stride)
    n, c = x.shape[:2]
    o = w.shape[0]
    size = prod(xs.shape[2:])
    cols = xs.reshape(n, groups, c // groups, size)
    into = None if out is None else out.reshape(n, groups, o // groups, size)
    res = xp.matmul(w.reshape(groups, o // groups, c // groups), cols, out=into)
    return res.reshape((n, o) + xs.shape[2:])


def _pointwise_transpose(xp, y, w, groups, out=None):
    """1x1 transposed conv at stride 1: out (N, C_out, *S) = w^T y, one batched GEMM."""
    n, cin = y.shape[:2]
    cout = w.shape[1] * groups
    size = prod(y.shape[2:])
    wt = w.reshape(groups, cin // groups, -1).transpose(0, 2, 1)
    into = None if out is None else out.reshape(n, groups, cout // groups, size)
    res = xp.matmul(wt, y.reshape(n, groups, cin // groups, size), out=into)
    return res.reshape((n, cout) + y.shape[2:])


def _pointwise_weight_grad(xp, x, g, groups, stride):
    """dw of a 1x1 conv: sum over samples of g_n x_n^T (a batched GEMM and one sum)."""
    xs = _sample_points(x, stride)
    n, c = x.shape[:2]
    o = g.shape[1]
    size = prod(xs.shape[2:])
    gm = g.reshape(n, groups, o // groups, size)
    dw = xp.matmul(gm, xs.reshape(n, groups, c // groups, size).swapaxes(-1, -2)).sum(axis=0)
    return dw.reshape((o, c // groups) + (1,) * (x.ndim - 2))


def _depthwise_transpose(xp, y, w, *, stride, padding, dilation, out_shape):
    """Depthwise transposed conv (weight (C, m, *K)): scatter y[n, c] * w[c, j, k] per offset."""
    n, c = y.shape[:2]
    kernel = w.shape[2:]
    m = w.shape[1]
    nd = len(kernel)
    acc = xp.zeros(
        (n, c, m) + _full_sizes(y.shape[2:], kernel, stride, padding, dilation, out_shape),
        dtype=y.dtype,
    )
    wk = w.reshape((c, m, -1))
    for i, sl in enumerate(_offset_slices(kernel, stride, dilation, y.shape[2:])):
        acc[(slice(None),) + sl] += y[:, :, None] * wk[:, :, i].reshape((1, c, m) + (1,) * nd)
    out = acc.reshape((n, c * m) + acc.shape[3:])
    return xp.ascontiguousarray(out[_crop(padding, out_shape)])


def _depthwise_weight_grad(xp, x, g, *, kernel, stride, padding, dilation):
    """dw[c*m + j, 0, k] = sum over n and positions of g[n, c*m + j] x_k[n, c]."""
    n, c = x.shape[:2]
    m = g.shape[1] // c
    xpad = _padded_rows(xp, x, padding)
    gm = g.reshape((n, c, m) + g.shape[2:])
    sp = "".join("hwd"[: g.ndim - 2])
    spec = f"ncm{sp},nc{sp}->cm"
    dw = xp.empty((c, m, len(_offset_slices(kernel, stride, dilation, g.shape[2:]))), dtype=g.dtype)
    for i, sl in enumerate(_offset_slices(kernel, stride, dilation, g.shape[2:])):
        dw[:, :, i] = xp.einsum(spec, gm, xpad[sl])
    return dw.reshape((c * m, 1) + tuple(kernel))


# ---------------------------------------------------------------- convolution
def _conv_forward(xp, x, w, b, *, stride, padding, dilation, groups, out=None):
    """The conv's result, a new array (written into `out`, a C-contiguous array of the
    result's shape, if given: a slice of the batch's result when split, see `_conv`)."""
    kernel = w.shape[2:]
    n, c = x.shape[:2]
    o = w.shape[0]
    if _is_pointwise(kernel, padding):
        return _add_bias(_pointwise_forward(xp, x, w, groups, stride, out), b)
    if conv_direct.correlates(c, o, groups, stride):  # depthwise: ops/conv_direct.py
        return conv_direct.conv(
            xp, x, w, b, padding=padding, dilation=dilation, groups=groups, out=out
        )
    # (a strided depthwise conv goes the im2col way: its direct multiply-accumulate on
    # strided views measured slower, 6.5 vs 5.0 ms for 32x64x14x14 3x3)
    if _is_sample_major(c, kernel, groups):
        return _sample_major_forward(xp, x, w, b, kernel, stride, padding, dilation, out)
    if groups == 1:
        return _sample_blocks_forward(xp, x, w, b, kernel, stride, padding, dilation, out)
    view, out_sizes = _window_matrix(xp, x, kernel, stride, padding, dilation)
    if out is None:
        # a new row-major array, as PyTorch's result (`conv(x).view(n, -1)` must work)
        out = xp.empty((n, o) + tuple(out_sizes), dtype=xp.result_type(x, w))
    wm = w.reshape(groups, o // groups, -1)
    sample_bytes = c * prod(kernel) * prod(out_sizes) * x.dtype.itemsize
    for lo, hi in _batch_blocks(n, sample_bytes):
        res = _gemm(xp, wm, _cols_block(xp, view, lo, hi, groups))
        _from_acc(xp, res.reshape((o, hi - lo) + tuple(out_sizes)), b, out[lo:hi])
    return out


def _full_sizes(in_sizes, kernel, stride, padding, dilation, out_shape):
    """Spatial sizes of a transposed conv's accumulator: every window, and the output."""
    return tuple(
        max((s - 1) * st + d * (k - 1) + 1, lo + o)
        for s, st, d, k, (lo, _), o in zip(
            in_sizes, stride, dilation, kernel, padding, out_shape, strict=False
        )
    )


def _conv_transpose_forward(xp, y, w, b, *, stride, padding, dilation, groups, out_shape, out=None):
    """Scatter each input position times the kernel into the output (col2im); a new array
    (written into `out`, C-contiguous, if given)."""
    n, cin = y.shape[:2]
    kernel = w.shape[2:]
    cout = w.shape[1] * groups
    in_sizes = y.shape[2:]
    if (
        _is_pointwise(kernel, padding)
        and all(s == 1 for s in stride)
        and tuple(out_shape) == tuple(in_sizes)
    ):
        return _add_bias(_pointwise_transpose(xp, y, w, groups, out), b)
    # (an infinite weight would meet the direct grid's padding zeros: NaN where PyTorch
    # and the scatter below give +-Inf; w is small, the check costs nothing)
    if conv_direct.correlates(cin, cout, groups, stride) and bool(xp.isfinite(w).all()):
        return conv_direct.conv_transpose(
            xp,
            y,
            w,
            b,
            padding=padding,
            dilation=dilation,
            groups=groups,
            out_shape=out_shape,
            out=out,
        )
    if _is_depthwise(cin, cout, groups):
        res = _depthwise_transpose(
            xp, y, w, stride=stride, padding=padding, dilation=dilation, out_shape=out_shape
        )
        if out is not None:  # (strided depthwise: rare, a copy)
            out[...] = res
            res = out
        return _add_bias(res, b)
    if _flat_fits(in_sizes, kernel, stride, padding, dilation, out_shape) and bool(
        xp.isfinite(w).all()
    ):
        return _flat_transpose(xp, y, w, b, padding, dilation, groups, out_shape, out)
    cin_g, cout_g, nd = cin // groups, w.shape[1], len(kernel)
    # GEMM rows ordered (k_last, k_rest..., c) per group: the col2im below adds one last-axis
    # offset's products at a time, each a block of whole (C, N, *S) slabs
    wk = w.reshape((groups, cin_g, cout_g) + tuple(kernel))
    wk = wk.transpose((0, 2 + nd) + tuple(range(3, 2 + nd)) + (2, 1)).reshape(groups, -1, cin_g)
    full = _full_sizes(in_sizes, kernel, stride, padding, dilation, out_shape)
    inner = list(
        zip(
            itertools.product(*[range(k) for k in kernel[:-1]]),
            [sl + (slice(None),) for sl in _offset_slices(kernel[:-1], stride, dilation, in_sizes)],
            strict=True,
        )
    )
    last = [
        (
            Ellipsis,
            slice(
                j * dilation[-1], j * dilation[-1] + (in_sizes[-1] - 1) * stride[-1] + 1, stride[-1]
            ),
        )
        for j in range(kernel[-1])
    ]
    dtype = xp.result_type(y, w)
    if out is None:
        out = xp.empty((n, cout) + tuple(out_shape), dtype=dtype)
    sample_bytes = wk.shape[0] * wk.shape[1] * prod(in_sizes) * np.dtype(dtype).itemsize
    for lo, hi in _batch_blocks(n, sample_bytes):
        m = hi - lo
        dcols = _gemm(xp, wk, _channel_block(xp, y, lo, hi, groups, "conv.g"))
        dcols = dcols.reshape(
            (groups, kernel[-1]) + tuple(kernel[:-1]) + (cout_g, m) + tuple(in_sizes)
        )
        acc = scratch(xp, "conv.acc", (cout, m) + full, dtype)
        rows = scratch(xp, "conv.acc_rows", (cout, m) + full[:-1] + in_sizes[-1:], dtype)
        # Two stages: per last-axis offset j, the other offsets' products summed on the
        # input's own last-axis positions (runs of S[-2] * S[-1] contiguous floats at stride
        # 1), then that sum added once at offset j (runs of S[-1]): 9 short-run adds -> 3
        # for 3x3 (conv2's col2im 2.0 -> 1.3 ms).
        for g in range(groups):
            ch = slice(g * cout_g, (g + 1) * cout_g)
            total, part = acc[ch], rows[ch]
            total.fill(0)
            for j in range(kernel[-1]):
                part.fill(0)
                for idx, sl in inner:
                    part[sl] += dcols[(g, j) + idx]
                total[last[j]] += part
        _from_acc(xp, acc[_crop(padding, out_shape)], b, out[lo:hi])
    return out


# A stride-1 transposed conv adds each kernel offset's products at the input position
# shifted by the offset. On a flat grid (the input placed in a zeroed plane of the
# output's padded size, as ops/conv_direct.py does) that shift is one constant along the
# flattened plane, so each offset's add is one pass over contiguous rows, and one GEMM
# gives every offset's products: the zeros around the input cost 30 % more GEMM columns
# for 14x14 but the col2im's short-run adds go (conv2 of W3 at one thread: 2.83 -> 2.10 ms
# in blocks of 16 samples; bench/NOTES.md "Stop 21"). The grid's zeros meet the weights:
# an infinite weight would give NaN where PyTorch gives +-Inf, so the caller checks them.
_FLAT_BLOCK_BYTES = 4 * 1024 * 1024  # a block's GEMM result, in L2 for the adds
_ROW_PAD = 16


def _flat_fits(in_sizes, kernel, stride, padding, dilation, out_shape):
    """Whether a transposed conv takes the flat grid: stride 1, and a grid at most twice
    the input's positions. Its GEMM has a column per grid position, so a kernel large
    against the input (MXNet's tests: 16x16 and up on small inputs) would multiply the
    products held per sample (28 GiB for one such case) where col2im's stay per input
    position; W3's conv2 grid is 16x16 for 14x14 (1.3x)."""
    if any(st != 1 for st in stride):
        return False
    plane = _full_sizes(in_sizes, kernel, stride, padding, dilation, out_shape)
    return prod(plane) <= 2 * prod(in_sizes)


def _tight_plane(in_sizes, kernel, padding, dilation, out_shape):
    """The flat grid's plane: per axis the fewest positions P such that the input fits
    (P >= S), the kept outputs fit (P >= lo + out), and a product that runs past the end of
    a row (of a sample's plane, for the first axis) lands before the kept outputs of the
    next one (P >= S + d(K-1) - lo): there it is cropped away. Conv2 of W3: 15x15 instead of
    the full 16x16 (12 % fewer GEMM columns and adds)."""
    return tuple(
        max(s, lo + o, s + d * (k - 1) - lo)
        for s, k, (lo, _), d, o in zip(in_sizes, kernel, padding, dilation, out_shape, strict=True)
    )


def _flat_transpose(xp, y, w, b, padding, dilation, groups, out_shape, out=None):
    """Stride-1 transposed conv on a flat grid, in blocks of samples (a new array, or
    `out`): one GEMM per block and one contiguous add per kernel offset."""
    n, cin = y.shape[:2]
    kernel = w.shape[2:]
    cin_g, cout_g = cin // groups, w.shape[1]
    cout = cout_g * groups
    in_sizes = y.shape[2:]
    plane = _tight_plane(in_sizes, kernel, padding, dilation, out_shape)
    lp = prod(plane)
    shifts = conv_direct.offset_shifts(plane, kernel, dilation)
    slack = shifts[-1]
    nd = len(kernel)
    # GEMM rows (offset, output channel) per group, offsets in row-major order
    wk = w.reshape((groups, cin_g, cout_g, -1)).transpose(0, 3, 2, 1)
    wk = wk.reshape(groups, -1, cin_g)
    dtype = xp.result_type(y, w)
    if out is None:
        out = xp.empty((n, cout) + tuple(out_shape), dtype=dtype)
    into = (slice(None), slice(None)) + tuple(slice(0, s) for s in in_sizes)
    crop = _crop(padding, out_shape)
    sample_bytes = groups * wk.shape[1] * lp * np.dtype(dtype).itemsize
    for lo, hi in _batch_blocks(n, sample_bytes, _FLAT_BLOCK_BYTES):
        m = hi - lo
        # (rows a little longer than m * lp: a power-of-two leading dimension slows the
        # GEMM by 20 % through cache-set conflicts, 1.68 vs 1.38 ms at 16 samples of conv2)
        cols = m * lp
        grid = scratch(xp, "conv.g", (cin, cols + _ROW_PAD), dtype)[:, :cols]
        grid.fill(0)
        grid.reshape((cin, m) + tuple(plane))[into] = _channel_major(y[lo:hi])
        rows = groups * wk.shape[1]
        prods = scratch(xp, "conv.gemm", (rows, cols + _ROW_PAD), dtype)[:, :cols]
        if groups == 1:
            xp.matmul(wk[0], grid, out=prods)
        else:
            xp.matmul(wk, grid.reshape(groups, cin_g, cols), out=prods.reshape(groups, -1, cols))
        prods = prods.reshape(groups, len(shifts), cout_g, cols)
        acc = scratch(xp, "conv.acc", (cout, m * lp + slack), dtype)
        for g in range(groups):
            ch = acc[g * cout_g : (g + 1) * cout_g]
            ch[:, : m * lp] = prods[g, 0]
            ch[:, m * lp :] = 0
            for k in range(1, len(shifts)):
                ch[:, shifts[k] : shifts[k] + m * lp] += prods[g, k]
        grid_acc = acc[:, : m * lp].reshape((cout, m) + tuple(plane))
        _from_acc(xp, grid_acc[crop[: 2 + nd]], b, out[lo:hi])
    return out


def _from_acc(xp, acc, b, out=None):
    """(C, N, *S) channel-major accumulator (a view of a scratch buffer) -> a new row-major
    (N, C, *S) array (or `out`), plus the bias."""
    nd = acc.ndim - 2
    if out is None:
        out = xp.empty(_channel_major(acc).shape, dtype=acc.dtype)
    bias = None if b is None else b.reshape((-1, 1) + (1,) * nd)

    def body(lo, hi):
        part = acc[:, lo:hi]
        if bias is not None:
            part += bias  # on the channel-major (cache-hot) data, then one transposing copy
        out[lo:hi] = _channel_major(part)

    parallel.for_slices(xp, out.shape[0], body, elements=out.size)
    return out


def _conv_weight_grad_forward(xp, x, g, *, kernel, stride, padding, dilation, groups):
    """d(sum(g * conv(x, w)))/dw: the (O, C/G, *K) weight gradient."""
    n, c = x.shape[:2]
    o = g.shape[1]
    if _is_pointwise(kernel, padding):
        return _pointwise_weight_grad(xp, x, g, groups, stride)
    if conv_direct.weight_grad_applies(c, o, groups, stride):
        dw = conv_direct.weight_grad(
            xp, x, g, kernel=kernel, padding=padding, dilation=dilation, groups=groups
        )
        # Its dot products run over the whole grid, where g's zeros meet x: an infinite x
        # gives NaN there. A finite dw (small: a check that costs nothing) had only exact
        # zeros added; otherwise the paths below sum over the real positions, as PyTorch.
        if bool(xp.isfinite(dw).all()):
            return dw
    if _is_depthwise(c, o, groups):
        return _depthwise_weight_grad(
            xp, x, g, kernel=kernel, stride=stride, padding=padding, dilation=dilation
        )
    if _is_sample_major(c, kernel, groups):
        return _sample_major_weight_grad(xp, x, g, kernel, stride, padding, dilation)
    view, out_sizes = _window_matrix(xp, x, kernel, stride, padding, dilation)
    rows = (c // groups) * prod(kernel)
    dtype = xp.result_type(x, g)
    # the transposed gradient (G, C/G * prod(K), O/G), summed over the blocks
    acc = xp.zeros((groups, rows, o // groups), dtype=dtype)
    sample_bytes = c * prod(kernel) * prod(out_sizes) * np.dtype(dtype).itemsize
    for lo, hi in _batch_blocks(n, sample_bytes):
        cols = _cols_block(xp, view, lo, hi, groups)
        gm = _channel_block(xp, g, lo, hi, groups, "conv.g")
        # cols g^T: OpenBLAS runs it faster than g cols^T (1.25 vs 1.69 ms for conv2 of W3)
        part = xp.matmul(
            cols, gm.transpose(0, 2, 1), out=scratch(xp, "conv.gemm", acc.shape, dtype)
        )
        acc += part
    dw = xp.ascontiguousarray(acc.transpose(0, 2, 1))
    return dw.reshape((o, c // groups) + tuple(kernel))


# ---------------------------------------------------------------- whole ops over the batch
# With intra-op threads on (ops/parallel.py), a conv, a transposed conv and a weight
# gradient each run whole on slices of the batch, one per thread, with OpenBLAS held at one
# thread: the window copies, GEMMs and layout copies of a slice run on one core, and no BLAS
# worker spins on the other (bench/NOTES.md, "Stop 20"). Forward and transposed conv write
# their slices of one result (bitwise the unsplit result: no reduction is split); the weight
# gradient sums over the batch, so each slice gives a partial, added in slice order
# (reproducible, but not bitwise the one-thread sum).
def _depthwise_direct(c, w_or_o, groups, p, transposed=False):
    """Whether the op takes a depthwise multiply-accumulate path (ops/conv_direct.py or the
    strided-view gradients): those measured slower split whole (32x64x14x14 3x3 fwd+bwd,
    wall minimum at two threads: 12.8-12.9 ms vs 5.0-9.9 unsplit, 7.8-10.2 per pass;
    bench/NOTES.md, "Stop 20"), so they keep their per-pass splits."""
    if isinstance(w_or_o, int):  # the weight gradient: output channels
        o = w_or_o
    else:
        o = w_or_o.shape[1] * groups if transposed else w_or_o.shape[0]
    return conv_direct.correlates(c, o, groups, p["stride"]) or _is_depthwise(c, o, groups)


def _split_result(xp, n, shape, dtype, work, run):
    """run(lo, hi, out_slice) over the batch into a new array, or None: not split."""
    if not parallel.batch_split(xp, n, work):
        return None
    out = xp.empty(shape, dtype=dtype)
    parallel.for_batch(n, lambda lo, hi: run(lo, hi, out[lo:hi]))
    return out


def _split_sum(xp, n, work, run):
    """The sum over batch slices of run(lo, hi) (each a new array), in slice order, or None."""
    if not parallel.batch_split(xp, n, work):
        return None
    parts: dict[int, object] = {}

    def body(lo, hi):
        parts[lo] = run(lo, hi)

    parallel.for_batch(n, body)
    bounds = parallel.batch_bounds(n)
    total = parts[bounds[0]]
    for lo in bounds[1:-1]:
        total += parts[lo]
    return total


def _bias_grad(xp, g):
    """The bias gradient, g summed over the batch and the positions. On contiguous float
    NumPy arrays as a batch of matrix-vector products with ones and a sum over samples:
    BLAS gemv runs it 2.9-3.4x faster than `sum(axis=(0, 2, 3))` (W3's conv1 g 0.144 ->
    0.050 ms, conv2's 0.105 -> 0.031; bench/NOTES.md "Stop 24"); equal to rounding."""
    if (
        getattr(xp, "module", None) is np
        and g.dtype in (np.float32, np.float64)
        and g.ndim > 2
        and g.flags.c_contiguous
        and g.size
    ):
        rows = g.reshape(g.shape[0], g.shape[1], -1)
        return xp.matmul(rows, xp.ones(rows.shape[2], dtype=g.dtype)).sum(axis=0)
    return xp.sum(g, axis=(0,) + tuple(range(2, g.ndim)))


@defop(saves=("x", "w"), name="conv", array_twin=True)
def _conv(xp, x, w, b, *, stride, padding, dilation, groups):
    check_same_float("conv", x, w, b)
    p = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        if parallel.intra_op_threads() > 1 and not _depthwise_direct(x.shape[1], w, groups, p):
            kernel = w.shape[2:]
            spatial = _geometry(x.shape, kernel, stride, padding, dilation)
            shape = (x.shape[0], w.shape[0]) + spatial
            out = _split_result(
                xp,
                x.shape[0],
                shape,
                x.dtype,
                prod(shape) * (x.shape[1] // groups) * prod(kernel),
                lambda lo, hi, part: _conv_forward(xp, x[lo:hi], w, b, out=part, **p),
            )
            if out is not None:
                return out
        return _conv_forward(xp, x, w, b, **p)


@_conv.vjp
def _(xp, g, x, w, needs, **p):
    gx = xp.conv_transpose(g, w, None, out_shape=tuple(x.shape[2:]), **p) if needs[0] else None
    gw = xp.conv_weight_grad(x, g, kernel=tuple(w.shape[2:]), **p) if needs[1] else None
    gb = _bias_grad(xp, g) if needs[2] else None
    return gx, gw, gb


@defop(saves=("y", "w"), name="conv_transpose", array_twin=True)
def _conv_transpose(xp, y, w, b, *, stride, padding, dilation, groups, out_shape):
    p = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    p["out_shape"] = out_shape
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        if parallel.intra_op_threads() > 1 and not _depthwise_direct(
            y.shape[1], w, groups, p, transposed=True
        ):
            out = _split_result(
                xp,
                y.shape[0],
                (y.shape[0], w.shape[1] * groups) + tuple(out_shape),
                xp.result_type(y, w),
                y.size * w.shape[1] * prod(w.shape[2:]),
                lambda lo, hi, part: _conv_transpose_forward(xp, y[lo:hi], w, b, out=part, **p),
            )
            if out is not None:
                return out
        return _conv_transpose_forward(xp, y, w, b, **p)


def _reach_of_y(xp, g, y_sizes, kernel, *, stride, padding, dilation, **_):
    """g (the transposed conv's output gradient) and the padding with which conv(g) has
    exactly y's sizes: with output_padding >= stride (allowed up to the dilation) the conv of
    the whole g would reach one more position. The high padding shrinks by the excess, and
    where it would go negative, g is cropped instead (the conv never reads that part)."""
    pads, crop = [], []
    for size, s, k, d, (lo, _hi), n in zip(
        g.shape[2:], stride, kernel, dilation, padding, y_sizes, strict=True
    ):
        needed = (n - 1) * s + d * (k - 1) + 1 - lo  # g positions the last window ends at
        pads.append((lo, max(0, needed - size)))
        crop.append(slice(0, min(size, needed)))
    if any(c.stop < size for c, size in zip(crop, g.shape[2:], strict=True)):
        g = g[(slice(None), slice(None)) + tuple(crop)]
    return g, tuple(pads)


@_conv_transpose.vjp
def _(xp, g, y, w, needs, out_shape, **p):
    gr, padding = _reach_of_y(xp, g, y.shape[2:], w.shape[2:], **p)
    pr = {**p, "padding": padding}
    gy = xp.conv(gr, w, None, **pr) if needs[0] else None
    gw = xp.conv_weight_grad(gr, y, kernel=tuple(w.shape[2:]), **pr) if needs[1] else None
    gb = _bias_grad(xp, g) if needs[2] else None
    return gy, gw, gb


@defop(saves=("x", "g"), name="conv_weight_grad", array_twin=True)
def _conv_weight_grad(xp, x, g, *, kernel, stride, padding, dilation, groups):
    p = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, groups=groups)
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        if parallel.intra_op_threads() > 1 and not _depthwise_direct(
            x.shape[1], g.shape[1], groups, p
        ):
            dw = _split_sum(
                xp,
                x.shape[0],
                g.size * (x.shape[1] // groups) * prod(kernel),
                lambda lo, hi: _conv_weight_grad_forward(xp, x[lo:hi], g[lo:hi], **p),
            )
            if dw is not None:
                return dw
        return _conv_weight_grad_forward(xp, x, g, **p)


@_conv_weight_grad.vjp
def _(xp, h, x, g, needs, kernel, **p):
    gx = xp.conv_transpose(g, h, None, out_shape=tuple(x.shape[2:]), **p) if needs[0] else None
    gg = xp.conv(x, h, None, **p) if needs[1] else None
    return gx, gg


# ---------------------------------------------------------------- samples and references
def _conv_cases():
    """(x shape, w shape, params): stride, padding (asymmetric too), dilation, groups, 1-D."""
    z = ((0, 0), (0, 0))
    return [
        (
            (2, 2, 5, 4),
            (3, 2, 3, 3),
            dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1),
        ),
        (
            (1, 4, 6, 5),
            (4, 2, 2, 3),
            dict(stride=(2, 1), padding=((1, 0), (0, 1)), dilation=(1, 1), groups=2),
        ),
        ((1, 2, 6, 6), (2, 1, 2, 2), dict(stride=(1, 2), padding=z, dilation=(2, 1), groups=2)),
        ((2, 3, 7), (2, 3, 3), dict(stride=(2,), padding=((1, 1),), dilation=(1,), groups=1)),
        # the special paths: 1x1 (plain and strided, grouped), depthwise (with a channel
        # multiplier, strided and dilated; 3-D), and a depthwise transposed conv (w[0] == G)
        ((2, 4, 3, 3), (3, 4, 1, 1), dict(stride=(1, 1), padding=z, dilation=(1, 1), groups=1)),
        ((2, 4, 5, 4), (6, 2, 1, 1), dict(stride=(2, 2), padding=z, dilation=(1, 1), groups=2)),
        (
            (2, 3, 5, 4),
            (3, 1, 3, 3),
            dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=3),
        ),
        (
            (1, 2, 7, 6),
            (4, 1, 2, 3),
            dict(stride=(2, 1), padding=((1, 0), (1, 1)), dilation=(2, 1), groups=2),
        ),
        (
            (1, 2, 3, 4, 3),
            (2, 1, 2, 2, 2),
            dict(stride=(1, 1, 1), padding=z + ((0, 0),), dilation=(1, 1, 1), groups=2),
        ),
        (
            (1, 4, 5, 5),
            (2, 2, 3, 3),
            dict(stride=(2, 2), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=2),
        ),
        # 36 window rows: the channel-major im2col (the cases above have at most 32)
        (
            (2, 4, 5, 4),
            (3, 4, 3, 3),
            dict(stride=(1, 1), padding=((1, 1), (0, 1)), dilation=(1, 1), groups=1),
        ),
        # stride 1, ops/conv_direct.py: multiplier 2 (its transposed conv sums two inputs per
        # group) dilated with asymmetric padding, two inputs per group, 1-D, and padding
        # wider than the kernel's reach (the transposed conv crops its input)
        (
            (1, 2, 7, 6),
            (4, 1, 2, 3),
            dict(stride=(1, 1), padding=((1, 0), (2, 1)), dilation=(2, 1), groups=2),
        ),
        (
            (2, 4, 5, 4),
            (2, 2, 3, 3),
            dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=2),
        ),
        ((2, 3, 7), (3, 1, 3), dict(stride=(1,), padding=((2, 1),), dilation=(2,), groups=3)),
        (
            (1, 2, 4, 4),
            (2, 1, 2, 2),
            dict(stride=(1, 1), padding=((2, 2), (0, 1)), dilation=(1, 1), groups=2),
        ),
    ]


def _conv_out_shape(xs, ws, p):
    return (xs[0], ws[0]) + tuple(
        _out_size(xs[2 + i], ws[2 + i], p["stride"][i], *p["padding"][i], p["dilation"][i])
        for i in range(len(xs) - 2)
    )


@_conv.sample
def _(rng):
    return [
        ((rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])), p)
        for xs, ws, p in _conv_cases()
    ]


@_conv_weight_grad.sample
def _(rng):
    return [
        (
            (rng.standard_normal(xs), rng.standard_normal(_conv_out_shape(xs, ws, p))),
            dict(p, kernel=tuple(ws[2:])),
        )
        for xs, ws, p in _conv_cases()
    ]


@_conv_transpose.sample
def _(rng):
    out = []
    for xs, ws, p in _conv_cases():
        ys = _conv_out_shape(xs, ws, p)
        # the transposed conv maps ys back to xs: weight (C_in=O, C_out/G, *K) is w's layout
        out.append(
            (
                (rng.standard_normal(ys), rng.standard_normal(ws), rng.standard_normal(xs[1])),
                dict(p, out_shape=tuple(xs[2:])),
            )
        )
    # output_padding past the stride (allowed below the dilation): conv(g) in the rule would
    # reach one more position than y has; a GEMM case and a direct (one output per group) one
    for cin, w_shape, groups, stride, out_shape in [
        (2, (2, 3, 3, 2), 1, (1, 2), (6, 7)),
        (4, (4, 1, 3, 2), 2, (1, 1), (6, 4)),
    ]:
        y = rng.standard_normal((2, cin, 3, 3))
        p = dict(stride=stride, padding=((1, 1), (0, 0)), dilation=(2, 1), groups=groups)
        bias = rng.standard_normal(w_shape[1] * groups)
        out.append(((y, rng.standard_normal(w_shape), bias), dict(p, out_shape=out_shape)))
    # the stride-1 flat grid (_flat_transpose): grouped, dilated, asymmetric padding, an
    # output past the last window (output_padding 1 < dilation), and 1-D
    p = dict(stride=(1, 1), padding=((1, 0), (0, 2)), dilation=(2, 1), groups=2)
    y = rng.standard_normal((2, 4, 4, 5))
    out.append(((y, rng.standard_normal((4, 3, 2, 3)), None), dict(p, out_shape=(6, 5))))
    p = dict(stride=(1,), padding=((2, 1),), dilation=(1,), groups=1)
    y = rng.standard_normal((3, 3, 6))
    out.append(
        ((y, rng.standard_normal((3, 2, 4)), rng.standard_normal(2)), dict(p, out_shape=(6,)))
    )
    return out


def _torch_conv(torch, x, w, b, stride, padding, dilation, groups):
    f = torch.nn.functional
    nd = x.ndim - 2
    flat = [v for lo_hi in reversed(padding) for v in lo_hi]  # F.pad wants the last dim first
    if any(flat):
        x = f.pad(x, flat)
    return (f.conv1d, f.conv2d, f.conv3d)[nd - 1](
        x, w, b, stride=stride, dilation=dilation, groups=groups
    )


def _torch_conv_transpose(torch, y, w, b, stride, padding, dilation, groups, out_shape):
    f = torch.nn.functional
    nd = y.ndim - 2
    base = [
        (y.shape[2 + i] - 1) * stride[i] + dilation[i] * (w.shape[2 + i] - 1) + 1 for i in range(nd)
    ]
    out = (f.conv_transpose1d, f.conv_transpose2d, f.conv_transpose3d)[nd - 1](
        y, w, None, stride=stride, dilation=dilation, groups=groups
    )
    # crop the padding, and zero-extend where out_shape reaches past the last window
    pads = []
    for i in reversed(range(nd)):
        lo = padding[i][0]
        pads += [-lo, out_shape[i] + lo - base[i]]
    out = f.pad(out, pads)
    return out if b is None else out + b.reshape((-1,) + (1,) * nd)


_conv.reference(_torch_conv)
_conv_transpose.reference(_torch_conv_transpose)


@_conv_weight_grad.reference
def _(torch, x, g, kernel, stride, padding, dilation, groups):
    w = torch.zeros(
        (g.shape[1], x.shape[1] // groups) + tuple(kernel), dtype=x.dtype, requires_grad=True
    )
    out = _torch_conv(torch, x, w, None, stride, padding, dilation, groups)
    return torch.autograd.grad(out, w, g, create_graph=True)[0]
