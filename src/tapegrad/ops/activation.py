"""Activations with parameters: leaky_relu, elu, gelu (exact erf form or tanh), silu,
softplus. Each is one op of the table with its rule; the public functions follow
`torch.nn.functional`.

    >>> tg.gelu(tg.tensor([1.0]))
    tensor([0.8413])
"""

from __future__ import annotations

import math

import numpy as np

from .quiet import quiet
from .registry import defop
from .unary import _erf_values, _fl, _normal, _sigmoid_values

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@defop(saves="x", name="leaky_relu")
def _leaky_relu(xp, x, *, negative_slope=0.01):
    return xp.where(x > 0, x, x * negative_slope)


@_leaky_relu.vjp
def _(xp, g, x, negative_slope=0.01):
    return (xp.where(x > 0, g, g * negative_slope),)


_leaky_relu.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)),), {}),
        ((rng.standard_normal(()),), {"negative_slope": 0.2}),
    ]
)
_leaky_relu.reference(
    lambda torch, x, negative_slope=0.01: torch.nn.functional.leaky_relu(x, negative_slope)
)


@defop(saves="x", name="elu")
def _elu(xp, x, *, alpha=1.0):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        x = _fl(x)
        return xp.where(x > 0, x, xp.expm1(xp.minimum(x, 0.0)) * alpha)


@_elu.vjp
def _(xp, g, x, alpha=1.0):
    # x <= 0, not x > 0, picks the exponential side: at NaN the slope is 1, as in PyTorch
    return (xp.where(x <= 0, g * xp.exp(xp.minimum(x, 0.0)) * alpha, g),)


_elu.sample(
    lambda rng: [((rng.standard_normal((3, 4)),), {}), ((rng.standard_normal(()),), {"alpha": 0.5})]
)
_elu.reference(lambda torch, x, alpha=1.0: torch.nn.functional.elu(x, alpha))


@defop(saves="x", name="gelu")
def _gelu(xp, x, *, approximate="none"):
    x = _fl(x)
    if x.dtype.itemsize < 4:  # float16: x**3 (and x * 2) overflow; compute in float32
        return _gelu.forward(xp, x.astype(np.float32), approximate=approximate).astype(x.dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # inf in, inf (or nan) out silently
        if approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * _SQRT_2_OVER_PI
            return x * 0.5 * (xp.tanh(inner) + 1.0)
        return x * 0.5 * (_erf_values(xp, x * _SQRT1_2) + 1.0)


@_gelu.vjp
def _(xp, g, x, approximate="none"):
    if approximate == "tanh":
        x2 = x * x
        t = xp.tanh((x + x2 * x * 0.044715) * _SQRT_2_OVER_PI)
        dinner = (x2 * (3 * 0.044715) + 1.0) * _SQRT_2_OVER_PI
        return (g * ((t + 1.0) * 0.5 + x * (1.0 - t * t) * dinner * 0.5),)
    cdf = (xp.erf(x * _SQRT1_2) + 1.0) * 0.5
    pdf = xp.exp(x * x * -0.5) * _INV_SQRT_2PI
    return (g * (cdf + x * pdf),)


_gelu.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)) * 2,), {}),
        ((rng.standard_normal(()),), {}),
        ((rng.standard_normal((3, 4)) * 2,), {"approximate": "tanh"}),
    ]
)
_gelu.reference(
    lambda torch, x, approximate="none": torch.nn.functional.gelu(x, approximate=approximate)
)


@defop(saves="x", name="silu")
def _silu(xp, x):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        x = _fl(x)
        return x * _sigmoid_values(xp, x)


@_silu.vjp
def _(xp, g, x):
    s = xp.sigmoid(x)
    return (g * s * (x * (1.0 - s) + 1.0),)


_silu.sample(_normal)
_silu.reference(lambda torch, x: torch.nn.functional.silu(x))


@defop(saves="x", name="softplus")
def _softplus(xp, x, *, beta=1.0, threshold=20.0):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        x = _fl(x)
        bx = x * beta
        return xp.where(bx > threshold, x, xp.logaddexp(0.0, bx) / beta)


@_softplus.vjp
def _(xp, g, x, beta=1.0, threshold=20.0):
    bx = x * beta
    return (xp.where(bx > threshold, g, g * xp.sigmoid(bx)),)


_softplus.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)) * 2,), {}),
        ((rng.standard_normal(()),), {"beta": 2.0}),
        ((rng.uniform(-2, 3, (4,)),), {"beta": 1.5, "threshold": 1.0}),
    ]
)
_softplus.reference(
    lambda torch, x, beta=1.0, threshold=20.0: torch.nn.functional.softplus(
        x, beta=beta, threshold=threshold
    )
)


def leaky_relu(input, negative_slope=0.01):
    """x where x > 0, else negative_slope * x."""
    return _leaky_relu(input, negative_slope=negative_slope)


def elu(input, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _elu(input, alpha=alpha)


def gelu(input, approximate="none"):
    """x * Phi(x) with the exact erf form (approximate='none', PyTorch's default) or the tanh
    approximation (approximate='tanh')."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _gelu(input, approximate=approximate)


def silu(input):
    """x * sigmoid(x) (also called swish)."""
    return _silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta; reverts to x where beta * x > threshold."""
    return _softplus(input, beta=beta, threshold=threshold)


__all__ = ["leaky_relu", "elu", "gelu", "silu", "softplus"]
