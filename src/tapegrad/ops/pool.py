"""Pooling ops: max, average and adaptive average pooling, for 1-D, 2-D and 3-D inputs.

Each op loops over the kernel offsets on strided views of the (padded) input: a handful of
whole-array ufunc calls, no Python loop over elements, no window copy (for 2x2 stride 2
this is several times faster than a reshape-and-reduce); max pooling over windows that tile
the input goes one axis at a time (see "tiling windows"). Gradients are ops too, so second
order closes: max_pool -> max_pool_backward (scatter to the first maximum of each window, as
PyTorch) -> max_pool_gather -> max_pool_backward; avg_pool <-> avg_pool_backward;
adaptive_avg_pool <-> adaptive_avg_pool_backward. The gradient ops take x as an input, as
PyTorch's do, with a zero derivative in x.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from . import parallel
from .conv import _offset_slices, _out_size, _padded
from .registry import defop


# ---------------------------------------------------------------- max pooling
def _pool_geometry(x, kernel, stride, padding, dilation):
    return tuple(
        _out_size(x.shape[2 + i], kernel[i], stride[i], *padding[i], dilation[i])
        for i in range(len(kernel))
    )


def _crop(padding, sizes):
    """Index that cuts the padding back off a padded (N, C, *sizes) array."""
    return (slice(None), slice(None)) + tuple(
        slice(lo, lo + s) for (lo, _), s in zip(padding, sizes, strict=False)
    )


def _pool_vjp(backward):
    """vjp of a pooling op: its gradient op `backward`(g, x, **params)."""
    return lambda xp, g, x, **p: (getattr(xp, backward)(g, x, **p),)


def _grad_op_vjp(other, takes_x=True):
    """vjp of a gradient op (linear in g, derivative 0 in x, returned as zeros as PyTorch
    does): the derivative in g is the op `other` applied to h (and x when `takes_x`)."""

    def rule(xp, h, x, needs, **p):
        dg = None
        if needs[0]:
            dg = getattr(xp, other)(h, x, **p) if takes_x else getattr(xp, other)(h, **p)
        return dg, (xp.zeros_like(x) if needs[1] else None)

    return rule


# ---------------------------------------------------------------- tiling windows
# When the windows tile the input (stride == kernel, no dilation, no padding: the usual 2x2
# stride 2), a window's maximum is the maximum over its last axis, then over the one before,
# ...: sum(K) ufunc passes instead of prod(K), the first over contiguous rows. Its first
# maximum in row-major order is separable the same way: the first row holding the window's
# maximum, then the first column of that row holding it. (A reshape-and-reduce,
# `x.reshape(N, C, Ho, 2, Wo, 2).max(axis=(3, 5))`, is 20x slower in NumPy.)
def _tiles(x, kernel, stride, padding, dilation):
    """Whether the windows tile x: then pooling goes axis by axis."""
    return (
        tuple(stride) == tuple(kernel)
        and any(k > 1 for k in kernel)
        and all(d == 1 for d in dilation)
        and not any(lo or hi for lo, hi in padding)
    )


def _whole_windows(x, kernel):
    """x cropped to the windows that tile it (a view)."""
    return x[
        (slice(None), slice(None))
        + tuple(slice(0, (s // k) * k) for s, k in zip(x.shape[2:], kernel, strict=True))
    ]


def _tiled_stages(xp, x, kernel):
    """[x cropped to whole windows, max over the last axis's windows, ..., the pooled max]."""
    nd = len(kernel)
    stages = [_whole_windows(x, kernel)]
    for axis in reversed(range(2, 2 + nd)):
        stages.append(_reduce_axis(xp, stages[-1], axis, kernel[axis - 2], xp.maximum))
    return stages


def _tiled_max(xp, x, kernel):
    """The pooled maximum alone (no stages for a backward): outermost axis first, so that
    the first pass, over the most data, combines whole contiguous rows (pool1 of W3
    0.60 -> 0.43 ms); the maximum does not depend on the order (NaN wins in any)."""
    a = _whole_windows(x, kernel)
    for axis in range(2, 2 + len(kernel)):
        a = _reduce_axis(xp, a, axis, kernel[axis - 2], xp.maximum)
    return a


def _axis_offsets(a, axis, k):
    """The k strided views of `a` along `axis`, one per window offset."""
    return [a[(slice(None),) * axis + (slice(j, None, k),)] for j in range(k)]


def _reduce_axis(xp, a, axis, k, ufunc):
    views = _axis_offsets(a, axis, k)
    if k == 1:
        return views[0]
    out = ufunc(views[0], views[1])
    for v in views[2:]:
        ufunc(out, v, out=out)
    return out


def _tiled_max_pool_backward(xp, g, x, kernel):
    """Send g to each window's first maximum, one axis at a time (outermost first); the
    batch split over the intra-op threads (ops/parallel.py)."""
    nd = len(kernel)
    dx = xp.empty(x.shape, dtype=g.dtype)
    nan_windows = []

    def body(lo, hi):
        stages = _tiled_stages(xp, x[lo:hi], kernel)
        if g.dtype.kind == "f" and xp.isnan(stages[-1]).any():
            nan_windows.append(True)  # PyTorch's last-NaN rule: the general path, below
            return
        gs = g[lo:hi]
        whole = stages[0].shape[2:]
        if whole != x.shape[2:]:  # a remainder no window covers gets no gradient
            dx[lo:hi] = 0
        pairs = zip(stages[-2::-1], stages[:0:-1])
        for axis, (finer, coarser) in zip(range(2, 2 + nd), pairs):
            k = kernel[axis - 2]
            if axis == 1 + nd:  # the last stage scatters into dx itself (no copy after)
                dst = dx[(slice(lo, hi), slice(None)) + tuple(slice(0, s) for s in whole)]
            else:
                dst = xp.empty(finer.shape, dtype=g.dtype)
            taken = None
            offsets = zip(_axis_offsets(finer, axis, k), _axis_offsets(dst, axis, k))
            for j, (f, d) in enumerate(offsets):
                if j == k - 1 and taken is not None:
                    hit = xp.logical_not(taken, out=taken)
                else:
                    hit = xp.equal(f, coarser)
                    if taken is None:
                        taken = hit
                    else:
                        hit = xp.greater(hit, taken, out=hit)  # a hit where no earlier offset hit
                        taken |= hit
                xp.multiply(gs, hit, out=d)
            gs = dst

    parallel.for_slices(xp, x.shape[0], body, elements=x.size)
    return None if nan_windows else dx


def _max_pool_forward(xp, x, kernel, stride, padding, dilation):
    if _tiles(x, kernel, stride, padding, dilation):
        out = xp.empty(x.shape[:2] + tuple(s // k for s, k in zip(x.shape[2:], kernel)), x.dtype)

        def body(lo, hi):
            out[lo:hi] = _tiled_max(xp, x[lo:hi], kernel)

        parallel.for_slices(xp, x.shape[0], body, elements=x.size)
        return out
    out_sizes = _pool_geometry(x, kernel, stride, padding, dilation)
    xpad = _padded(xp, x, padding, value=-xp.inf)
    out = None
    for sl in _offset_slices(kernel, stride, dilation, out_sizes):
        # order K keeps the input's memory layout (channel-major after a conv)
        out = xpad[sl].copy(order="K") if out is None else xp.maximum(out, xpad[sl], out=out)
    return xp.ascontiguousarray(out)


def _first_max_masks(xp, xpad, out, slices, padding=None):
    """One boolean mask per kernel offset: where that offset is the window's first maximum.

    `padding` (the (lo, hi) pairs xpad was padded by) keeps the -inf padding from being taken
    where a window's maximum is -inf itself: PyTorch takes the window's first real -inf."""
    # each mask is used by the caller before the next one is made, so buffers are reused
    real = _real_positions(xp, xpad, out, padding)
    if real is not None or (out.dtype.kind == "f" and xp.isnan(out).any()):
        yield from _nan_max_masks(xp, xpad, out, slices, real)
        return
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


def _real_positions(xp, xpad, out, padding):
    """Where xpad holds the input rather than padding, or None where no window's maximum is
    -inf (then the padding can't tie with it: the fast path is exact)."""
    if padding is None or not any(lo or hi for lo, hi in padding) or out.dtype.kind != "f":
        return None
    if not xp.isneginf(out).any():
        return None
    real = xp.zeros(xpad.shape, dtype=bool)
    real[
        (slice(None), slice(None))
        + tuple(slice(lo, s - hi) for s, (lo, hi) in zip(xpad.shape[2:], padding, strict=True))
    ] = True
    return real


def _nan_max_masks(xp, xpad, out, slices, real=None):
    """_first_max_masks where some window holds a NaN: there the maximum is its last NaN
    (PyTorch's CPU kernel keeps replacing the maximum with each NaN it meets); or where some
    window's maximum is -inf (`real`: the input's positions in xpad, never its padding)."""
    nans = [xp.isnan(xpad[sl]) for sl in slices]
    later = xp.zeros(out.shape, dtype=bool)
    last_nan = [None] * len(slices)
    for i in range(len(slices) - 1, -1, -1):
        last_nan[i] = nans[i] & ~later
        later |= nans[i]
    taken = xp.zeros(out.shape, dtype=bool)
    for i, sl in enumerate(slices):
        hit = xp.equal(xpad[sl], out) & ~taken
        if real is not None:
            hit &= real[sl]
        taken |= hit
        yield sl, xp.where(later, last_nan[i], hit)


def _max_pool_backward_forward(xp, g, x, kernel, stride, padding, dilation):
    if _tiles(x, kernel, stride, padding, dilation):
        dx = _tiled_max_pool_backward(xp, g, x, kernel)
        if dx is not None:
            return dx
    xpad = _padded(xp, x, padding, value=-xp.inf)
    slices = _offset_slices(kernel, stride, dilation, g.shape[2:])
    out = _max_pool_forward(xp, x, kernel, stride, padding, dilation)  # cheap: offsets x ufunc
    dxp = xp.zeros_like(xpad, dtype=g.dtype)
    disjoint = all(s >= d * (k - 1) + 1 for s, d, k in zip(stride, dilation, kernel, strict=True))
    for sl, m in _first_max_masks(xp, xpad, out, slices, padding):
        if disjoint:  # windows don't overlap (e.g. 2x2 stride 2): write, no read-modify-write
            dxp[sl] = g * m
        else:
            dxp[sl] += g * m
    return xp.ascontiguousarray(dxp[_crop(padding, x.shape[2:])])


def _max_pool_gather_forward(xp, h, x, kernel, stride, padding, dilation):
    xpad = _padded(xp, x, padding, value=-xp.inf)
    hpad = _padded(xp, h, padding)
    out = _max_pool_forward(xp, x, kernel, stride, padding, dilation)
    slices = _offset_slices(kernel, stride, dilation, out.shape[2:])
    res = xp.zeros_like(out, dtype=h.dtype)
    for sl, m in _first_max_masks(xp, xpad, out, slices, padding):
        res += hpad[sl] * m
    return xp.ascontiguousarray(res)


def max_pool_indices(xp, x, kernel, stride, padding, dilation):
    """PyTorch's return_indices: for each output, the flat index (over the input's spatial
    dims) of its window's first maximum. Plain arrays, never differentiated."""
    out = _max_pool_forward(xp, x, kernel, stride, padding, dilation)
    xpad = _padded(xp, x, padding, value=-xp.inf)
    slices = _offset_slices(kernel, stride, dilation, out.shape[2:])
    sizes = x.shape[2:]
    nd = len(sizes)
    # position along spatial dim i of offset k at output o: o * stride + k * dilation - low pad
    grids = [
        xp.arange(out.shape[2 + i]).reshape((-1,) + (1,) * (nd - 1 - i)) * stride[i] - padding[i][0]
        for i in range(nd)
    ]
    idx = xp.zeros(out.shape, dtype=xp.int64)
    offsets = itertools.product(*[range(k) for k in kernel])
    for koff, (_, m) in zip(offsets, _first_max_masks(xp, xpad, out, slices, padding), strict=True):
        flat = 0
        for i in range(nd):
            flat = flat * sizes[i] + grids[i] + koff[i] * dilation[i]
        idx += m * flat
    return idx


@defop(saves="x", name="max_pool")
def _max_pool(xp, x, *, kernel, stride, padding, dilation):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _max_pool_forward(xp, x, kernel, stride, padding, dilation)


_max_pool.vjp(_pool_vjp("max_pool_backward"))


# The gradient ops take x as an input (as PyTorch's do): linear in g, derivative 0 in x
# (returned as zeros, as PyTorch does).
@defop(saves="x", name="max_pool_backward", array_twin=True)
def _max_pool_backward(xp, g, x, *, kernel, stride, padding, dilation):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _max_pool_backward_forward(xp, g, x, kernel, stride, padding, dilation)


_max_pool_backward.vjp(_grad_op_vjp("max_pool_gather"))


@defop(saves="x", name="max_pool_gather", array_twin=True)
def _max_pool_gather(xp, h, x, *, kernel, stride, padding, dilation):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _max_pool_gather_forward(xp, h, x, kernel, stride, padding, dilation)


_max_pool_gather.vjp(_grad_op_vjp("max_pool_backward"))


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
    count = np.maximum(count, 1.0)
    count.flags.writeable = False  # cached and shared between calls
    return count


def _scale(xp, divisor, dtype):
    return divisor if isinstance(divisor, (int, float)) else xp.asarray(divisor, dtype=dtype)


def _avg_setup(
    x_shape,
    kernel,
    stride,
    padding,
    dilation=None,
    count_include_pad=True,
    ceil_extra=None,
    divisor_override=None,
):
    """(dilation, divisor) of an average pool: the op's optional params resolved."""
    dilation = dilation or (1,) * len(kernel)
    if divisor_override:
        return dilation, float(divisor_override)
    d = _divisor(
        tuple(x_shape[2:]),
        kernel,
        stride,
        padding,
        dilation,
        count_include_pad,
        ceil_extra or (0,) * len(kernel),
    )
    return dilation, (float(d.flat[0]) if d.min() == d.max() else d)


def _avg_pool_op_forward(xp, x, kernel, stride, padding, **opts):
    dilation, divisor = _avg_setup(x.shape, kernel, stride, padding, **opts)
    out_sizes = _pool_geometry(x, kernel, stride, padding, dilation)
    xpad = _padded(xp, x, padding)
    out = None
    for sl in _offset_slices(kernel, stride, dilation, out_sizes):
        out = xpad[sl].copy(order="K") if out is None else xp.add(out, xpad[sl], out=out)
    out /= _scale(xp, divisor, x.dtype)
    return xp.ascontiguousarray(out)


def _avg_pool_backward_op_forward(xp, g, in_shape, kernel, stride, padding, **opts):
    dilation, divisor = _avg_setup(in_shape, kernel, stride, padding, **opts)
    gd = g / _scale(xp, divisor, g.dtype)
    sp = tuple(s + lo + hi for s, (lo, hi) in zip(in_shape[2:], padding, strict=False))
    dxp = xp.zeros((in_shape[1], in_shape[0]) + sp, dtype=g.dtype).swapaxes(0, 1)
    for sl in _offset_slices(kernel, stride, dilation, g.shape[2:]):
        dxp[sl] += gd
    return xp.ascontiguousarray(dxp[_crop(padding, in_shape[2:])])


# optional params (dilation, count_include_pad, ceil_extra, divisor_override): see _avg_setup
@defop(saves="x", name="avg_pool", array_twin=True)
def _avg_pool(xp, x, *, kernel, stride, padding, **opts):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _avg_pool_op_forward(xp, x, kernel, stride, padding, **opts)


_avg_pool.vjp(_pool_vjp("avg_pool_backward"))


@defop(saves="x", name="avg_pool_backward", array_twin=True)
def _avg_pool_backward(xp, g, x, *, kernel, stride, padding, **opts):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _avg_pool_backward_op_forward(xp, g, x.shape, kernel, stride, padding, **opts)


_avg_pool_backward.vjp(_grad_op_vjp("avg_pool", takes_x=False))


# ---------------------------------------------------------------- adaptive average pooling
@lru_cache(maxsize=256)
def _adaptive_matrix(size, out):
    """(out, size) averaging matrix: row i averages [floor(i*size/out), ceil((i+1)*size/out))."""
    m = np.zeros((out, size))
    for i in range(out):
        lo, hi = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    m.flags.writeable = False  # cached and shared between calls
    return m


def _apply_per_dim(xp, x, mats):
    """Multiply each spatial axis of x by its matrix (separable: one tensordot per axis)."""
    for i, m in enumerate(mats):
        x = xp.moveaxis(xp.tensordot(xp.asarray(m, dtype=x.dtype), x, axes=(1, 2 + i)), 0, 2 + i)
    return x


def _adaptive_windows(xp, x, out_size):
    """The same averages window by window: an inf stays in the windows that hold it (the
    matrix product would spread inf * 0 = NaN over its whole row)."""
    for i, (size, out) in enumerate(zip(x.shape[2:], out_size, strict=False)):
        axis = 2 + i
        parts = []
        for j in range(out):
            lo, hi = (j * size) // out, -((-(j + 1) * size) // out)
            window = xp.take(x, xp.arange(lo, hi), axis=axis)
            parts.append(xp.sum(window, axis=axis, keepdims=True) / (hi - lo))
        x = xp.concatenate(parts, axis=axis).astype(x.dtype, copy=False)
    return x


def _adaptive_forward(xp, x, out_size):
    if x.dtype.kind == "f" and not xp.isfinite(x).all():
        return _adaptive_windows(xp, x, out_size)
    return xp.ascontiguousarray(
        _apply_per_dim(
            xp, x, [_adaptive_matrix(s, o) for s, o in zip(x.shape[2:], out_size, strict=False)]
        )
    )


def _adaptive_backward_forward(xp, g, in_size):
    return xp.ascontiguousarray(
        _apply_per_dim(
            xp, g, [_adaptive_matrix(s, o).T for s, o in zip(in_size, g.shape[2:], strict=False)]
        )
    )


@defop(saves="x", name="adaptive_avg_pool", array_twin=True)
def _adaptive_avg_pool(xp, x, *, out_size):
    if x.ndim != len(out_size) + 2:  # the public function adds the batch dim where missing
        raise RuntimeError(
            f"adaptive_avg_pool: expected a (batch, channels, *spatial) input with "
            f"{len(out_size)} spatial dim(s) for out_size {tuple(out_size)}, got shape "
            f"{tuple(x.shape)}"
        )
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _adaptive_forward(xp, x, out_size)


_adaptive_avg_pool.vjp(_pool_vjp("adaptive_avg_pool_backward"))


@defop(saves="x", name="adaptive_avg_pool_backward", array_twin=True)
def _adaptive_avg_pool_backward(xp, g, x, *, out_size):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        return _adaptive_backward_forward(xp, g, x.shape[2:])


_adaptive_avg_pool_backward.vjp(_grad_op_vjp("adaptive_avg_pool", takes_x=False))


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


# ---------------------------------------------------------------- samples and references
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
        # tiling windows (pooled axis by axis): a remainder no window covers, 3-wide, 1-D, 3-D
        ((2, 3, 5, 7), dict(kernel=(2, 2), stride=(2, 2), padding=z, dilation=(1, 1))),
        ((1, 2, 6, 7), dict(kernel=(3, 2), stride=(3, 2), padding=z, dilation=(1, 1))),
        ((2, 2, 9), dict(kernel=(3,), stride=(3,), padding=((0, 0),), dilation=(1,))),
        (
            (1, 2, 4, 4, 5),
            dict(kernel=(2, 2, 2), stride=(2, 2, 2), padding=z + ((0, 0),), dilation=(1, 1, 1)),
        ),
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
