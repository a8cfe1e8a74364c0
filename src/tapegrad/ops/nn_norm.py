"""Normalisation ops: layer_norm, batch_norm, group_norm (fused forwards, one rule each).

The rules recompute the normalised input from the saved input (cheaper in memory than
saving it) and are written in NumPy vocabulary (mean, sum, sqrt, reshape), so a recorded
backward runs them on the tensor namespace and second derivatives come for free.
"""

from __future__ import annotations

import math

from .quiet import quiet
from .registry import defop


def _standardize(xp, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over `axes`, and the reciprocal deviation."""
    mu = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mu
    rstd = 1 / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True) + eps)
    return xc * rstd, rstd


def _standardize_grad(xp, gh, xhat, rstd, axes):
    """Gradient through _standardize, given the gradient `gh` of its output."""
    return rstd * (
        gh
        - xp.mean(gh, axis=axes, keepdims=True)
        - xhat * xp.mean(gh * xhat, axis=axes, keepdims=True)
    )


def _forward_standardize(x, axes, eps):
    mu = x.mean(axis=axes, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(axis=axes, keepdims=True)
    xc *= (var + eps) ** -0.5
    return xc, mu, var


def _affine(out, w, b, shape=None):
    """out * w + b in place (w, b optional; reshaped to `shape` when given)."""
    if w is not None:
        out *= w if shape is None else w.reshape(shape)
    if b is not None:
        out += b if shape is None else b.reshape(shape)
    return out


def _infinite(xp, w):
    """Whether the weight holds an inf (or NaN): its sum first, the cheap test (an overflow
    of the sum alone sends it to the exact one)."""
    if w is None or math.isfinite(float(w.sum())):
        return False
    return not bool(xp.isfinite(w).all())


def _scale_shift(x, mu, rstd, w, b, shape):
    """x * (rstd w) + (b - mu rstd w): the affine normalisation in PyTorch's fused form, used
    where a weight is inf. There (x - mu) * rstd * inf gives -inf where x < mu, the fused
    form inf - inf = NaN, as PyTorch: the pattern its users see. Elsewhere the two agree to
    rounding and (x - mu) first is the more accurate (no cancellation when |mu| >> std)."""
    scale = rstd * w.reshape(shape)
    shift = -mu * scale if b is None else b.reshape(shape) - mu * scale
    return x * scale + shift


def _affine_grads(xp, g, xhat, axes, needs, shape=None):
    """Gradients of w and b (None where not needed) for out = xhat * w + b, summed over axes
    (xhat reshaped to `shape` first when given)."""
    gw = None
    if needs[1]:
        gw = xp.sum(g * (xhat if shape is None else xp.reshape(xhat, shape)), axis=axes)
    gb = xp.sum(g, axis=axes) if needs[2] else None
    return gw, gb


# ================================================================= layer_norm
@defop(saves=("x", "w"), name="layer_norm")
def _layer_norm(xp, x, w=None, b=None, *, ndim=1, eps=1e-5):
    """Normalise over the last `ndim` axes, then scale by w and shift by b (both optional)."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        out, _, _ = _forward_standardize(x, tuple(range(x.ndim - ndim, x.ndim)), eps)
        return _affine(out, w, b)


@_layer_norm.vjp
def _(xp, g, x, w, *, ndim=1, eps=1e-5, needs):
    axes = tuple(range(x.ndim - ndim, x.ndim))
    lead = tuple(range(x.ndim - ndim))
    xhat, rstd = _standardize(xp, x, axes, eps)
    gx = _standardize_grad(xp, g if w is None else g * w, xhat, rstd, axes) if needs[0] else None
    return (gx, *_affine_grads(xp, g, xhat, lead, needs))


@_layer_norm.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((3, 5)), r((5,)), r((5,))), {}),
        ((r((2, 3, 4)), r((3, 4)), r((3, 4))), {"ndim": 2}),
        ((r((3, 5)), None, None), {"eps": 1e-3}),  # no affine
        ((r((4,)), r((4,)), r((4,))), {}),  # normalise the whole tensor
    ]


@_layer_norm.reference
def _(torch, x, w=None, b=None, ndim=1, eps=1e-5):
    return torch.nn.functional.layer_norm(x, x.shape[x.ndim - ndim :], w, b, eps)


# ================================================================= batch_norm
def _channel_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _batch_axes(x):
    return (0,) + tuple(range(2, x.ndim))


@defop(saves=("x", "w"), name="batch_norm")
def _batch_norm(
    xp,
    x,
    w=None,
    b=None,
    *,
    training=True,
    eps=1e-5,
    momentum=0.1,
    running_mean=None,
    running_var=None,
):
    """Batch normalisation over every axis but 1 (channels).

    training: normalise with the batch statistics and, when running_mean/running_var arrays
    are given, update them in place (momentum; unbiased variance, as PyTorch).
    Otherwise normalise with running_mean/running_var.
    """
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        cshape = _channel_shape(x)
        if x.size == 0:  # an empty batch: an empty result, running statistics untouched
            return _affine(x.copy(), w, b, cshape)
        if training:
            axes = _batch_axes(x)
            out, mu, var = _forward_standardize(x, axes, eps)
            if running_mean is not None:
                n = x.size // x.shape[1]
                running_mean *= 1 - momentum
                running_mean += momentum * mu.reshape(-1)
                running_var *= 1 - momentum
                running_var += (momentum * n / max(n - 1, 1)) * var.reshape(-1)
            if _infinite(xp, w):
                return _scale_shift(x, mu, (var + eps) ** -0.5, w, b, cshape)
        else:
            mu, rstd = running_mean.reshape(cshape), (running_var.reshape(cshape) + eps) ** -0.5
            if _infinite(xp, w):
                return _scale_shift(x, mu, rstd, w, b, cshape)
            out = (x - mu) * rstd
        return _affine(out, w, b, cshape)


@_batch_norm.vjp
def _(xp, g, x, w, *, training=True, eps=1e-5, running_mean=None, running_var=None, needs, **_):
    cshape = _channel_shape(x)
    axes = _batch_axes(x)
    gh = g if w is None else g * xp.reshape(w, cshape)
    if x.size == 0:  # (NumPy's mean of an empty batch would warn)
        return (gh if needs[0] else None, *_affine_grads(xp, g, x, axes, needs))
    if training:
        xhat, rstd = _standardize(xp, x, axes, eps)
        gx = _standardize_grad(xp, gh, xhat, rstd, axes) if needs[0] else None
    else:
        rstd = (running_var.reshape(cshape) + eps) ** -0.5  # constants
        xhat = (x - running_mean.reshape(cshape)) * rstd
        gx = gh * rstd if needs[0] else None
    return (gx, *_affine_grads(xp, g, xhat, axes, needs))


@_batch_norm.sample
def _(rng):
    r = rng.standard_normal
    rv = rng.uniform(0.5, 2, size=3)
    return [
        ((r((4, 3)), r((3,)), r((3,))), {}),
        ((r((2, 3, 2, 2)), r((3,)), r((3,))), {}),
        ((r((4, 3, 2)), None, None), {"eps": 1e-3}),
        (
            (r((4, 3)), r((3,)), r((3,))),
            {"training": False, "running_mean": r(3), "running_var": rv},
        ),
        (
            (r((2, 3, 2, 2)), r((3,)), r((3,))),
            {"training": False, "running_mean": r(3), "running_var": rv},
        ),
    ]


@_batch_norm.reference
def _(
    torch,
    x,
    w=None,
    b=None,
    training=True,
    eps=1e-5,
    momentum=0.1,
    running_mean=None,
    running_var=None,
):
    rm = None if running_mean is None else torch.as_tensor(running_mean, dtype=x.dtype)
    rv = None if running_var is None else torch.as_tensor(running_var, dtype=x.dtype)
    return torch.nn.functional.batch_norm(
        x, rm, rv, w, b, training=training, momentum=momentum, eps=eps
    )


# ================================================================= group_norm
@defop(saves=("x", "w"), name="group_norm")
def _group_norm(xp, x, w=None, b=None, *, num_groups=1, eps=1e-5):
    """Normalise each group of channels of each sample (x is (N, C, ...))."""
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        n = x.shape[0]
        if x.size == 0:  # an empty batch (the -1 below would be undetermined)
            return _affine(x.copy(), w, b, _channel_shape(x))
        grouped = x.reshape(n, num_groups, -1)
        out, mu, var = _forward_standardize(grouped, (2,), eps)
        cshape = _channel_shape(x)
        if _infinite(xp, w):  # per (sample, channel): its group's statistics, its own weight
            per_channel = x.reshape(n, num_groups, x.shape[1] // num_groups, -1)
            rstd = (var[..., None] + eps) ** -0.5
            out = _scale_shift(per_channel, mu[..., None], rstd, w, b, (1, num_groups, -1, 1))
            return out.reshape(x.shape)
        return _affine(out.reshape(x.shape), w, b, cshape)


@_group_norm.vjp
def _(xp, g, x, w, *, num_groups=1, eps=1e-5, needs):
    cshape = _channel_shape(x)
    if x.size == 0:
        gh = g if w is None else g * xp.reshape(w, cshape)
        return (gh if needs[0] else None, *_affine_grads(xp, g, x, _batch_axes(x), needs))
    grouped = (x.shape[0], num_groups, -1)
    xhat, rstd = _standardize(xp, xp.reshape(x, grouped), (2,), eps)
    gx = None
    if needs[0]:
        gh = g if w is None else g * xp.reshape(w, cshape)
        gx = xp.reshape(_standardize_grad(xp, xp.reshape(gh, grouped), xhat, rstd, (2,)), x.shape)
    axes = _batch_axes(x)
    return (gx, *_affine_grads(xp, g, xhat, axes, needs, x.shape))


@_group_norm.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((2, 4, 3)), r((4,)), r((4,))), {"num_groups": 2}),
        ((r((2, 6, 2, 2)), r((6,)), r((6,))), {"num_groups": 3}),
        ((r((3, 4)), None, None), {"num_groups": 4}),
    ]


@_group_norm.reference
def _(torch, x, w=None, b=None, num_groups=1, eps=1e-5):
    return torch.nn.functional.group_norm(x, num_groups, w, b, eps)
