"""Convolution ops, for any number of spatial dimensions (1-D, 2-D, 3-D).

Layout is PyTorch's: input (N, C, *S), conv weight (O, C/groups, *K), transposed-conv
weight (C_in, C_out/groups, *K). Spatial parameters arrive normalised by the public
functions (nn/functional_conv.py): `stride`, `dilation`, `kernel` are tuples with one entry
per spatial dim and `padding` a tuple of (low, high) pairs (asymmetric for 'same' with an
even kernel, or for ceil_mode).

A convolution is ONE GEMM: the input windows are copied once into a (C*K, N*L) matrix
(im2col over a strided view) and multiplied by the (O, C*K) weight matrix. Its gradients
are ops too, so second order closes: d/dx conv = conv_transpose (one GEMM + a col2im loop
over the kernel offsets), d/dw conv = conv_weight_grad (one GEMM over the same im2col), and
conv_transpose's own gradients are conv and conv_weight_grad again. A rule skips the input
gradient when the input needs none (the first layer of a network). Pooling: ops/pool.py.
"""

from __future__ import annotations

import itertools
from math import prod

import numpy as np

from .promotion import check_same_float
from .registry import defop

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
    # row-major, as PyTorch's result (`conv(x).view(n, -1)` must work)
    return xp.ascontiguousarray(_from_channels_first(out, x.shape[0], out_sizes))


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
    return xp.ascontiguousarray(out.transpose((1, 0) + tuple(range(2, 2 + nd))))


def _conv_weight_grad_forward(xp, x, g, *, kernel, stride, padding, dilation, groups):
    """d(sum(g * conv(x, w)))/dw: the (O, C/G, *K) weight gradient, one GEMM."""
    cols, _ = _im2col(xp, x, kernel, stride, padding, dilation, groups)
    gm = _channels_first(xp, g, groups)
    dw = _gemm(gm, cols.transpose(0, 2, 1))
    return dw.reshape((g.shape[1], x.shape[1] // groups) + tuple(kernel))


@defop(saves=("x", "w"), name="conv", array_twin=True)
def _conv(xp, x, w, b, *, stride, padding, dilation, groups):
    check_same_float("conv", x, w, b)
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _conv_forward(
            xp, x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups
        )


@_conv.vjp
def _(xp, g, x, w, needs, **p):
    gx = xp.conv_transpose(g, w, None, out_shape=tuple(x.shape[2:]), **p) if needs[0] else None
    gw = xp.conv_weight_grad(x, g, kernel=tuple(w.shape[2:]), **p) if needs[1] else None
    gb = xp.sum(g, axis=(0,) + tuple(range(2, g.ndim))) if needs[2] else None
    return gx, gw, gb


@defop(saves=("y", "w"), name="conv_transpose", array_twin=True)
def _conv_transpose(xp, y, w, b, *, stride, padding, dilation, groups, out_shape):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
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


@defop(saves=("x", "g"), name="conv_weight_grad", array_twin=True)
def _conv_weight_grad(xp, x, g, *, kernel, stride, padding, dilation, groups):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _conv_weight_grad_forward(
            xp,
            x,
            g,
            kernel=kernel,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
        )


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
