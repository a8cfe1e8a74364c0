"""Convolution and pooling ops, for any number of spatial dimensions (1-D, 2-D, 3-D).

Layout is PyTorch's: input (N, C, *S), conv weight (O, C/groups, *K), transposed-conv
weight (C_in, C_out/groups, *K). Spatial parameters arrive normalised by the public
functions (nn/functional_conv.py): `stride`, `dilation`, `kernel` are tuples with one entry
per spatial dim and `padding` a tuple of (low, high) pairs (asymmetric for 'same' with an
even kernel, or for ceil_mode).

A convolution is ONE GEMM: the input windows are copied once into a (C*K, N*L) matrix
(im2col over a strided view) and multiplied by the (O, C*K) weight matrix. Its gradients
are ops too, so second order closes: d/dx conv = conv_transpose (one GEMM + a col2im loop
over the kernel offsets), d/dw conv = conv_weight_grad (one GEMM over the same im2col), and
conv_transpose's own gradients are conv and conv_weight_grad again. Pooling loops over the
kernel offsets on strided views (a handful of whole-array ufunc calls, no Python loop over
elements); max_pool's gradient is max_pool_backward (scatter to the first maximum of each
window, as PyTorch), whose gradient is max_pool_gather.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from math import prod

import numpy as np

from .registry import defop
from .xp import array_helper

__all__: list[str] = []


# ---------------------------------------------------------------- window helpers
def _out_size(size, k, s, lo, hi, d):
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _padded(xp, x, padding, value=0.0):
    """x (N, C, *S) padded by (lo, hi) pairs, or x itself. The buffer is allocated channel-major
    (C, N, *S) so that im2col later copies along contiguous rows."""
    if not any(lo or hi for lo, hi in padding):
        return x
    n, c = x.shape[:2]
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding, strict=False))
    buf = (
        xp.full((c, n) + sp, value, dtype=x.dtype)
        if value
        else xp.zeros((c, n) + sp, dtype=x.dtype)
    )
    inner = (slice(None), slice(None)) + tuple(
        slice(lo, lo + s) for s, (lo, _) in zip(x.shape[2:], padding, strict=False)
    )
    buf[inner] = x.transpose((1, 0) + tuple(range(2, x.ndim)))
    return buf.transpose((1, 0) + tuple(range(2, x.ndim)))


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


def _im2col(xp, x, kernel, stride, padding, dilation, groups):
    """(G, C/G * prod(K), N * L_out) matrix of input windows (one copy), and S_out."""
    nd = x.ndim - 2
    out_sizes = tuple(
        _out_size(x.shape[2 + i], kernel[i], stride[i], *padding[i], dilation[i]) for i in range(nd)
    )
    win = _windows(xp, _padded(xp, x, padding), kernel, stride, dilation, out_sizes)
    perm = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    n, c = x.shape[:2]
    cols = win.transpose(perm).reshape(groups, (c // groups) * prod(kernel), n * prod(out_sizes))
    return cols, out_sizes


def _channels_first(xp, t, groups):
    """(N, C, *S) -> (G, C/G, N * L): a free view when t is already channel-major in memory."""
    n, c = t.shape[:2]
    return t.transpose((1, 0) + tuple(range(2, t.ndim))).reshape(groups, c // groups, -1)


def _from_channels_first(m, n, spatial):
    """(C, N * L) GEMM result -> (N, C, *S) view."""
    c = m.shape[0]
    return m.reshape((c, n) + tuple(spatial)).transpose((1, 0) + tuple(range(2, 2 + len(spatial))))


def _gemm(a, b):
    return a[0] @ b[0] if a.shape[0] == 1 else a @ b


# ---------------------------------------------------------------- convolution
def _conv_forward(xp, x, w, b, *, stride, padding, dilation, groups):
    kernel = w.shape[2:]
    cols, out_sizes = _im2col(xp, x, kernel, stride, padding, dilation, groups)
    o = w.shape[0]
    out = _gemm(w.reshape(groups, o // groups, -1), cols).reshape(o, -1)
    if b is not None:
        out += b.reshape(o, 1)
    return _from_channels_first(out, x.shape[0], out_sizes)


def _conv_transpose_forward(xp, y, w, b, *, stride, padding, dilation, groups, out_shape):
    """Scatter each input position times the kernel into the output (col2im)."""
    n, cin = y.shape[:2]
    kernel = w.shape[2:]
    cout = w.shape[1] * groups
    nd = y.ndim - 2
    in_sizes = y.shape[2:]
    wm = w.reshape(groups, cin // groups, -1)
    dcols = _gemm(wm.transpose(0, 2, 1), _channels_first(xp, y, groups))
    dcols = dcols.reshape((cout,) + tuple(kernel) + (n,) + tuple(in_sizes))
    full = tuple(
        max((s - 1) * st + d * (k - 1) + 1, lo + o)
        for s, st, d, k, (lo, _), o in zip(
            in_sizes, stride, dilation, kernel, padding, out_shape, strict=False
        )
    )
    acc = xp.zeros((cout, n) + full, dtype=dcols.dtype)
    for idx, sl in zip(
        itertools.product(*[range(k) for k in kernel]),
        _offset_slices(kernel, stride, dilation, in_sizes),
        strict=False,
    ):
        acc[sl] += dcols[(slice(None),) + idx]
    crop = (slice(None), slice(None)) + tuple(
        slice(lo, lo + o) for (lo, _), o in zip(padding, out_shape, strict=False)
    )
    out = acc[crop]
    if b is not None:
        out += b.reshape((cout,) + (1,) * (nd + 1))
    return out.transpose((1, 0) + tuple(range(2, 2 + nd)))


def _conv_weight_grad_forward(xp, x, g, *, kernel, stride, padding, dilation, groups):
    """d(sum(g * conv(x, w)))/dw: the (O, C/G, *K) weight gradient, one GEMM."""
    cols, _ = _im2col(xp, x, kernel, stride, padding, dilation, groups)
    gm = _channels_first(xp, g, groups)
    dw = _gemm(gm, cols.transpose(0, 2, 1))
    return dw.reshape((g.shape[1], x.shape[1] // groups) + tuple(kernel))


@defop(saves=("x", "w"), name="conv")
def _conv(xp, x, w, b, *, stride, padding, dilation, groups):
    return _conv_forward(
        xp, x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups
    )


@_conv.vjp
def _(xp, g, x, w, needs, **p):
    gx = xp.conv_transpose(g, w, None, out_shape=tuple(x.shape[2:]), **p) if needs[0] else None
    gw = xp.conv_weight_grad(x, g, kernel=tuple(w.shape[2:]), **p) if needs[1] else None
    gb = xp.sum(g, axis=(0,) + tuple(range(2, g.ndim))) if needs[2] else None
    return gx, gw, gb


@defop(saves=("y", "w"), name="conv_transpose")
def _conv_transpose(xp, y, w, b, *, stride, padding, dilation, groups, out_shape):
    return _conv_transpose_forward(
        xp,
        y,
        w,
        b,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        out_shape=out_shape,
    )


@_conv_transpose.vjp
def _(xp, g, y, w, needs, out_shape, **p):
    gy = xp.conv(g, w, None, **p) if needs[0] else None
    gw = xp.conv_weight_grad(g, y, kernel=tuple(w.shape[2:]), **p) if needs[1] else None
    gb = xp.sum(g, axis=(0,) + tuple(range(2, g.ndim))) if needs[2] else None
    return gy, gw, gb


@defop(saves=("x", "g"), name="conv_weight_grad")
def _conv_weight_grad(xp, x, g, *, kernel, stride, padding, dilation, groups):
    return _conv_weight_grad_forward(
        xp, x, g, kernel=kernel, stride=stride, padding=padding, dilation=dilation, groups=groups
    )


@_conv_weight_grad.vjp
def _(xp, h, x, g, needs, kernel, **p):
    gx = xp.conv_transpose(g, h, None, out_shape=tuple(x.shape[2:]), **p) if needs[0] else None
    gg = xp.conv(x, h, None, **p) if needs[1] else None
    return gx, gg


@array_helper
def conv(xp, x, w, b, **p):
    return _conv_forward(xp, x, w, b, **p)


@array_helper
def conv_transpose(xp, y, w, b, **p):
    return _conv_transpose_forward(xp, y, w, b, **p)


@array_helper
def conv_weight_grad(xp, x, g, **p):
    return _conv_weight_grad_forward(xp, x, g, **p)


# ---------------------------------------------------------------- max pooling
def _pool_geometry(x, kernel, stride, padding, dilation):
    return tuple(
        _out_size(x.shape[2 + i], kernel[i], stride[i], *padding[i], dilation[i])
        for i in range(len(kernel))
    )


def _max_pool_forward(xp, x, kernel, stride, padding, dilation):
    out_sizes = _pool_geometry(x, kernel, stride, padding, dilation)
    xpad = _padded(xp, x, padding, value=-xp.inf)
    out = None
    for sl in _offset_slices(kernel, stride, dilation, out_sizes):
        # order K keeps the input's memory layout (channel-major after a conv)
        out = xpad[sl].copy(order="K") if out is None else xp.maximum(out, xpad[sl], out=out)
    return out


def _first_max_masks(xp, xpad, out, slices):
    """One boolean mask per kernel offset: where that offset is the window's first maximum."""
    # each mask is used by the caller before the next one is made, so buffers are reused
    taken = None
    last = len(slices) - 1
    for i, sl in enumerate(slices):
        if i == last and taken is not None:
            yield sl, xp.logical_not(taken, out=taken)
            return
        hit = xp.equal(xpad[sl], out)
        if taken is None:
            taken = hit
        else:
            hit = xp.greater(hit, taken, out=hit)  # a hit where no earlier offset hit
            taken |= hit
        yield sl, hit


def _max_pool_backward_forward(xp, g, x, kernel, stride, padding, dilation):
    xpad = _padded(xp, x, padding, value=-xp.inf)
    slices = _offset_slices(kernel, stride, dilation, g.shape[2:])
    out = _max_pool_forward(xp, x, kernel, stride, padding, dilation)  # cheap: offsets x ufunc
    dxp = xp.zeros_like(xpad, dtype=g.dtype)
    disjoint = all(s >= d * (k - 1) + 1 for s, d, k in zip(stride, dilation, kernel, strict=True))
    for sl, m in _first_max_masks(xp, xpad, out, slices):
        if disjoint:  # windows don't overlap (e.g. 2x2 stride 2): write, no read-modify-write
            dxp[sl] = g * m
        else:
            dxp[sl] += g * m
    crop = (slice(None), slice(None)) + tuple(
        slice(lo, lo + s) for (lo, _), s in zip(padding, x.shape[2:], strict=False)
    )
    return dxp[crop]


def _max_pool_gather_forward(xp, h, x, kernel, stride, padding, dilation):
    xpad = _padded(xp, x, padding, value=-xp.inf)
    hpad = _padded(xp, h, padding)
    out = _max_pool_forward(xp, x, kernel, stride, padding, dilation)
    slices = _offset_slices(kernel, stride, dilation, out.shape[2:])
    res = xp.zeros_like(out, dtype=h.dtype)
    for sl, m in _first_max_masks(xp, xpad, out, slices):
        res += hpad[sl] * m
    return res


@defop(saves="x", name="max_pool")
def _max_pool(xp, x, *, kernel, stride, padding, dilation):
    return _max_pool_forward(xp, x, kernel, stride, padding, dilation)


@_max_pool.vjp
def _(xp, g, x, **p):
    return (xp.max_pool_backward(g, x, **p),)


# The gradient ops take x as an input (as PyTorch's do): linear in g, derivative 0 in x
# (returned as zeros, as PyTorch does).
@defop(saves="x", name="max_pool_backward")
def _max_pool_backward(xp, g, x, *, kernel, stride, padding, dilation):
    return _max_pool_backward_forward(xp, g, x, kernel, stride, padding, dilation)


@_max_pool_backward.vjp
def _(xp, h, x, needs, **p):
    return (xp.max_pool_gather(h, x, **p) if needs[0] else None), (
        xp.zeros_like(x) if needs[1] else None
    )


@defop(saves="x", name="max_pool_gather")
def _max_pool_gather(xp, h, x, *, kernel, stride, padding, dilation):
    return _max_pool_gather_forward(xp, h, x, kernel, stride, padding, dilation)


@_max_pool_gather.vjp
def _(xp, g, x, needs, **p):
    return (xp.max_pool_backward(g, x, **p) if needs[0] else None), (
        xp.zeros_like(x) if needs[1] else None
    )


@array_helper
def max_pool_backward(xp, g, x, *, kernel, stride, padding, dilation):
    return _max_pool_backward_forward(xp, g, x, kernel, stride, padding, dilation)


@array_helper
def max_pool_gather(xp, h, x, *, kernel, stride, padding, dilation):
    return _max_pool_gather_forward(xp, h, x, kernel, stride, padding, dilation)


# ---------------------------------------------------------------- average pooling
@lru_cache(maxsize=256)
def _divisor(in_sizes, kernel, stride, padding, dilation, count_include_pad, ceil_extra):
    """How many elements each window averages (PyTorch's rule: windows are clipped to the
    padded input, and to the real input unless count_include_pad)."""
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(in_sizes, padding, strict=False))
    mask = np.zeros(sp)
    if count_include_pad:
        region = tuple(
            slice(0, s + lo + hi - e)
            for s, (lo, hi), e in zip(in_sizes, padding, ceil_extra, strict=False)
        )
    else:
        region = tuple(slice(lo, lo + s) for s, (lo, _) in zip(in_sizes, padding, strict=False))
    mask[region] = 1.0
    out_sizes = tuple(
        _out_size(s, k, st, lo, hi, d)
        for s, k, st, (lo, hi), d in zip(in_sizes, kernel, stride, padding, dilation, strict=False)
    )
    count = np.zeros(out_sizes)
    for sl in _offset_slices(kernel, stride, dilation, out_sizes):
        count += mask[sl[2:]]
    return np.maximum(count, 1.0)


def _avg_pool_forward(xp, x, kernel, stride, padding, dilation, divisor):
    out_sizes = _pool_geometry(x, kernel, stride, padding, dilation)
    xpad = _padded(xp, x, padding)
    out = None
    for sl in _offset_slices(kernel, stride, dilation, out_sizes):
        out = xpad[sl].copy(order="K") if out is None else xp.add(out, xpad[sl], out=out)
    out /= xp.asarray(divisor, dtype=x.dtype) if not isinstance(divisor, (int, float)) else divisor
    return out


def _avg_pool_backward_forward(xp, g, in_shape, kernel, stride, padding, dilation, divisor):
    gd = g / (
        xp.asarray(divisor, dtype=g.dtype) if not isinstance(divisor, (int, float)) else divisor
    )
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(in_shape[2:], padding, strict=False))
    dxp = xp.zeros((in_shape[1], in_shape[0]) + sp, dtype=g.dtype).swapaxes(0, 1)
    for sl in _offset_slices(kernel, stride, dilation, g.shape[2:]):
        dxp[sl] += gd
    crop = (slice(None), slice(None)) + tuple(
        slice(lo, lo + s) for (lo, _), s in zip(padding, in_shape[2:], strict=False)
    )
    return dxp[crop]


def _avg_divisor(
    x_shape, kernel, stride, padding, dilation, count_include_pad, ceil_extra, divisor_override
):
    if divisor_override:
        return float(divisor_override)
    d = _divisor(
        tuple(x_shape[2:]), kernel, stride, padding, dilation, count_include_pad, ceil_extra
    )
    return float(d.flat[0]) if d.min() == d.max() else d


def _avg_params(kernel, dilation, ceil_extra):
    return dilation or (1,) * len(kernel), ceil_extra or (0,) * len(kernel)


def _avg_pool_op_forward(
    xp,
    x,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    dilation, ceil_extra = _avg_params(kernel, dilation, ceil_extra)
    div = _avg_divisor(
        x.shape, kernel, stride, padding, dilation, count_include_pad, ceil_extra, divisor_override
    )
    return _avg_pool_forward(xp, x, kernel, stride, padding, dilation, div)


def _avg_pool_backward_op_forward(
    xp,
    g,
    in_shape,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    dilation, ceil_extra = _avg_params(kernel, dilation, ceil_extra)
    div = _avg_divisor(
        in_shape, kernel, stride, padding, dilation, count_include_pad, ceil_extra, divisor_override
    )
    return _avg_pool_backward_forward(xp, g, in_shape, kernel, stride, padding, dilation, div)


@defop(saves="x", name="avg_pool")
def _avg_pool(
    xp,
    x,
    *,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    return _avg_pool_op_forward(
        xp, x, kernel, stride, padding, dilation, count_include_pad, ceil_extra, divisor_override
    )


@_avg_pool.vjp
def _(xp, g, x, **p):
    return (xp.avg_pool_backward(g, x, **p),)


@defop(saves="x", name="avg_pool_backward")
def _avg_pool_backward(
    xp,
    g,
    x,
    *,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    return _avg_pool_backward_op_forward(
        xp,
        g,
        x.shape,
        kernel,
        stride,
        padding,
        dilation,
        count_include_pad,
        ceil_extra,
        divisor_override,
    )


@_avg_pool_backward.vjp
def _(xp, h, x, needs, **p):
    return (xp.avg_pool(h, **p) if needs[0] else None), (xp.zeros_like(x) if needs[1] else None)


@array_helper
def avg_pool(xp, x, **p):
    return _avg_pool_op_forward(xp, x, **p)


@array_helper
def avg_pool_backward(xp, g, x, **p):
    return _avg_pool_backward_op_forward(xp, g, x.shape, **p)


# ---------------------------------------------------------------- samples and references
def _p2(n, v):
    return (v,) * n


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


def _pool_cases():
    z = ((0, 0), (0, 0))
    return [
        ((2, 3, 4, 6), dict(kernel=(2, 2), stride=(2, 2), padding=z, dilation=(1, 1))),
        (
            (1, 2, 5, 5),
            dict(kernel=(3, 3), stride=(2, 2), padding=((1, 1), (1, 1)), dilation=(1, 1)),
        ),
        (
            (1, 2, 7, 6),
            dict(kernel=(2, 3), stride=(1, 2), padding=((1, 1), (0, 0)), dilation=(2, 1)),
        ),
        ((2, 2, 9), dict(kernel=(3,), stride=(2,), padding=((1, 1),), dilation=(1,))),
    ]


def _pool_out_shape(xs, p):
    return xs[:2] + tuple(
        _out_size(xs[2 + i], p["kernel"][i], p["stride"][i], *p["padding"][i], p["dilation"][i])
        for i in range(len(xs) - 2)
    )


@_max_pool.sample
def _(rng):
    return [((rng.standard_normal(xs),), p) for xs, p in _pool_cases()]


@_max_pool_backward.sample
def _(rng):
    return [
        ((rng.standard_normal(_pool_out_shape(xs, p)), rng.standard_normal(xs)), p)
        for xs, p in _pool_cases()
    ]


@_max_pool_gather.sample
def _(rng):
    return [((rng.standard_normal(xs), rng.standard_normal(xs)), p) for xs, p in _pool_cases()]


@_max_pool.reference
def _(torch, x, kernel, stride, padding, dilation):
    f = torch.nn.functional
    return (f.max_pool1d, f.max_pool2d, f.max_pool3d)[x.ndim - 3](
        x, kernel, stride, tuple(lo for lo, _ in padding), dilation
    )


def _avg_cases():
    return [
        ((2, 3, 4, 6), dict(kernel=(2, 2), stride=(2, 2), padding=((0, 0), (0, 0)))),
        (
            (1, 2, 5, 5),
            dict(kernel=(3, 3), stride=(2, 2), padding=((1, 1), (1, 1)), count_include_pad=False),
        ),
        ((1, 2, 5, 6), dict(kernel=(3, 2), stride=(1, 2), padding=((1, 1), (1, 1)))),
        (
            (1, 2, 5, 5),
            dict(kernel=(2, 2), stride=(2, 2), padding=((0, 1), (0, 1)), ceil_extra=(1, 1)),
        ),
        ((2, 2, 9), dict(kernel=(3,), stride=(2,), padding=((1, 1),), count_include_pad=False)),
    ]


@_avg_pool.sample
def _(rng):
    return [((rng.standard_normal(xs),), p) for xs, p in _avg_cases()]


@_avg_pool_backward.sample
def _(rng):
    out = []
    for xs, p in _avg_cases():
        full = dict(p, dilation=(1,) * len(p["kernel"]))
        out.append(((rng.standard_normal(_pool_out_shape(xs, full)), rng.standard_normal(xs)), p))
    return out


@_avg_pool.reference
def _(
    torch,
    x,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    f = torch.nn.functional
    return (f.avg_pool1d, f.avg_pool2d, f.avg_pool3d)[x.ndim - 3](
        x,
        kernel,
        stride,
        tuple(lo for lo, _ in padding),
        ceil_mode=bool(ceil_extra and any(ceil_extra)),
        count_include_pad=count_include_pad,
        **({"divisor_override": divisor_override} if divisor_override else {}),
    )


# ---------------------------------------------------------------- adaptive average pooling
@lru_cache(maxsize=256)
def _adaptive_matrix(size, out):
    """(out, size) averaging matrix: row i averages [floor(i*size/out), ceil((i+1)*size/out))."""
    m = np.zeros((out, size))
    for i in range(out):
        lo, hi = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def _apply_per_dim(xp, x, mats):
    """Multiply each spatial axis of x by its matrix (separable: one tensordot per axis)."""
    for i, m in enumerate(mats):
        x = xp.moveaxis(xp.tensordot(xp.asarray(m, dtype=x.dtype), x, axes=(1, 2 + i)), 0, 2 + i)
    return x


def _adaptive_forward(xp, x, out_size):
    return _apply_per_dim(
        xp, x, [_adaptive_matrix(s, o) for s, o in zip(x.shape[2:], out_size, strict=False)]
    )


def _adaptive_backward_forward(xp, g, in_size):
    return _apply_per_dim(
        xp, g, [_adaptive_matrix(s, o).T for s, o in zip(in_size, g.shape[2:], strict=False)]
    )


@defop(saves="x", name="adaptive_avg_pool")
def _adaptive_avg_pool(xp, x, *, out_size):
    return _adaptive_forward(xp, x, out_size)


@_adaptive_avg_pool.vjp
def _(xp, g, x, out_size):
    return (xp.adaptive_avg_pool_backward(g, x, out_size=out_size),)


@defop(saves="x", name="adaptive_avg_pool_backward")
def _adaptive_avg_pool_backward(xp, g, x, *, out_size):
    return _adaptive_backward_forward(xp, g, x.shape[2:])


@_adaptive_avg_pool_backward.vjp
def _(xp, h, x, needs, out_size):
    return (
        (xp.adaptive_avg_pool(h, out_size=out_size) if needs[0] else None),
        (xp.zeros_like(x) if needs[1] else None),
    )


@array_helper
def adaptive_avg_pool(xp, x, *, out_size):
    return _adaptive_forward(xp, x, out_size)


@array_helper
def adaptive_avg_pool_backward(xp, g, x, *, out_size):
    return _adaptive_backward_forward(xp, g, x.shape[2:])


_ADAPTIVE_CASES = [
    ((2, 3, 5, 7), (2, 3)),
    ((1, 2, 6, 4), (3, 4)),
    ((2, 2, 7), (3,)),
    ((1, 2, 4, 4), (1, 1)),
]


@_adaptive_avg_pool.sample
def _(rng):
    return [((rng.standard_normal(xs),), {"out_size": o}) for xs, o in _ADAPTIVE_CASES]


@_adaptive_avg_pool_backward.sample
def _(rng):
    return [
        ((rng.standard_normal(xs[:2] + o), rng.standard_normal(xs)), {"out_size": o})
        for xs, o in _ADAPTIVE_CASES
    ]


@_adaptive_avg_pool.reference
def _(torch, x, out_size):
    f = torch.nn.functional
    return (f.adaptive_avg_pool1d, f.adaptive_avg_pool2d, f.adaptive_avg_pool3d)[x.ndim - 3](
        x, out_size
    )
