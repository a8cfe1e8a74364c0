"""Elementwise ops: clamp, maximum/minimum, where; and the elementwise family's public names
(unary math from unary.py, activations with parameters from activation.py, copies and casts
from casting.py), so `tg.ops.elementwise` lists them all.

Each op is one table entry (forward + rule); the public functions below them follow PyTorch
(`clamp(min=, max=)`). `maximum`/`minimum` split the gradient half and half where the
inputs tie.

    >>> x = tg.tensor([-1.0, 0.5], requires_grad=True)
    >>> tg.clamp(x, min=0).sum().backward(); x.grad
    tensor([0., 1.])
"""

from __future__ import annotations

import operator

import numpy as np

from ..tensor import Tensor
from .activation import elu, gelu, leaky_relu, silu, softplus
from .casting import astype, clone  # noqa: F401  (public names of the family)
from .registry import apply_inplace, defop
from .unary import (  # noqa: F401  (public names of the family)
    abs,
    acos,
    acosh,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctanh,
    asin,
    asinh,
    atan,
    atanh,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    expm1,
    floor,
    log,
    log1p,
    log2,
    reciprocal,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)


# ------------------------------------------------------------ clamp, maximum, minimum, where
@defop(saves=("x", "a_min", "a_max"), name="clip")
def _clip(xp, x, a_min, a_max):
    if a_min is None:
        return xp.minimum(x, a_max)
    if a_max is None:
        return xp.maximum(x, a_min)
    return xp.minimum(xp.maximum(x, a_min), a_max)  # min > max gives max, as in PyTorch


@_clip.vjp
def _(xp, g, x, a_min, a_max, needs):
    # PyTorch's clamp rule: x gets the gradient where min <= x <= max (bounds inclusive)
    if a_min is None:
        inside = x <= a_max
    elif a_max is None:
        inside = x >= a_min
    else:
        inside = (x >= a_min) & (x <= a_max)
    gx = xp.where(inside, g, 0.0) if needs[0] else None
    gmin = xp.where(x < a_min, g, 0.0) if needs[1] else None
    gmax = xp.where(x > a_max, g, 0.0) if needs[2] else None
    return gx, gmin, gmax


@_clip.sample
def _(rng):
    x = rng.standard_normal((3, 4))
    return [
        ((x, -0.5, 0.5), {}),
        ((x, None, 0.3), {}),
        ((rng.standard_normal(()), -0.3, None), {}),
        ((x, -rng.uniform(0.1, 1.0, (4,)), rng.uniform(0.1, 1.0, (3, 1))), {}),  # tensor bounds
    ]


_clip.reference(lambda torch, x, lo, hi: torch.clamp(x, lo, hi))


def _binary_samples(rng):
    return [
        ((rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), {}),
        ((rng.standard_normal((2, 3, 4)), rng.standard_normal((4,))), {}),
        ((rng.standard_normal((3, 1)), rng.standard_normal((1, 4))), {}),
        ((rng.standard_normal(()), rng.standard_normal(())), {}),
        ((rng.standard_normal((5,)), 0.25), {}),
        ((-0.25, rng.standard_normal((5,))), {}),
    ]


@defop(saves=("x", "y"), name="maximum")
def _maximum(xp, x, y):
    return xp.maximum(x, y)


def _extremum_grad(xp, g, x, y, needs, wins):
    """maximum/minimum rule: g to the input that `wins(a, b)` over the other, half each on a
    tie (as PyTorch)."""
    tie = x == y
    half = g * 0.5
    # "not beaten" rather than "wins": with a NaN neither is beaten and both get g (PyTorch)
    gx = xp.where(tie, half, xp.where(wins(y, x), 0.0, g)) if needs[0] else None
    gy = xp.where(tie, half, xp.where(wins(x, y), 0.0, g)) if needs[1] else None
    return gx, gy


@_maximum.vjp
def _(xp, g, x, y, needs):
    return _extremum_grad(xp, g, x, y, needs, operator.gt)


@defop(saves=("x", "y"), name="minimum")
def _minimum(xp, x, y):
    return xp.minimum(x, y)


@_minimum.vjp
def _(xp, g, x, y, needs):
    return _extremum_grad(xp, g, x, y, needs, operator.lt)


def _as_ref_tensor(torch, v, like):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=like.dtype)


_maximum.sample(_binary_samples)
_minimum.sample(_binary_samples)
_maximum.reference(
    lambda torch, x, y: torch.maximum(
        _as_ref_tensor(torch, x, y if isinstance(y, torch.Tensor) else x),
        _as_ref_tensor(torch, y, x if isinstance(x, torch.Tensor) else y),
    )
)
_minimum.reference(
    lambda torch, x, y: torch.minimum(
        _as_ref_tensor(torch, x, y if isinstance(y, torch.Tensor) else x),
        _as_ref_tensor(torch, y, x if isinstance(x, torch.Tensor) else y),
    )
)


@defop(saves="condition", name="where")
def _where(xp, condition, x, y):
    return xp.where(condition, x, y)


@_where.vjp
def _(xp, g, condition, needs):
    return (
        None,
        xp.where(condition, g, 0.0) if needs[1] else None,
        xp.where(condition, 0.0, g) if needs[2] else None,
    )


@_where.sample
def _(rng):
    c = rng.standard_normal((3, 4)) > 0
    return [
        ((c, rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), {}),
        ((c, rng.standard_normal((4,)), rng.standard_normal((3, 1))), {}),  # broadcasting
        ((c, rng.standard_normal((3, 4)), 0.5), {}),
        ((np.array(True), rng.standard_normal(()), rng.standard_normal(())), {}),  # 0-d
    ]


_where.reference(lambda torch, c, x, y: torch.where(c, x, y))


def clamp(input, min=None, max=None):  # noqa: A002
    """Limit `input` to [min, max]; either bound may be None, a number or a tensor.

    >>> tg.clamp(tg.tensor([-2.0, 0.5, 3.0]), min=-1, max=1)
    tensor([-1. ,  0.5,  1. ])
    """
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    return _clip(input, min, max)


def clip(input, min=None, max=None):  # noqa: A002
    """Alias of clamp."""
    return clamp(input, min, max)


def clamp_min(input, min):  # noqa: A002
    """Elementwise `max(input, min)`: values below `min` become `min`."""
    return _clip(input, min, None)


def clamp_max(input, max):  # noqa: A002
    """Elementwise `min(input, max)`: values above `max` become `max`."""
    return _clip(input, None, max)


def maximum(input, other):
    """Elementwise maximum with broadcasting; tied elements share the gradient half and half."""
    return _maximum(input, other)


def minimum(input, other):
    """Elementwise minimum with broadcasting; tied elements share the gradient half and half."""
    return _minimum(input, other)


def where(condition, input=None, other=None):
    """`input` where `condition` is true, else `other` (numbers allowed for either);
    `where(condition)` alone is `nonzero(condition, as_tuple=True)`, as in PyTorch.

    >>> tg.where(tg.tensor([True, False]), tg.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.])
    """
    if input is None and other is None:
        from ..creation import as_tensor
        from .index import nonzero

        return nonzero(as_tensor(condition), as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    if not isinstance(condition, Tensor):
        from ..creation import as_tensor

        condition = as_tensor(condition)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from ..creation import tensor

        input = tensor(input)  # two numbers: the default dtype, not NumPy's float64
    return _where(condition, input, other)


def _clamp_(self, min=None, max=None):  # noqa: A002
    """clamp in place."""
    if min is None and max is None:
        raise RuntimeError("clamp_: at least one of 'min' or 'max' must not be None")
    return apply_inplace(_clip, self, min, max)


def _where_method(self, condition, other):
    """`self` where `condition`, else `other` (PyTorch's Tensor.where)."""
    return where(condition, self, other)


absolute, fix = abs, trunc


__all__ = [
    "abs",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "arcsin",
    "arccos",
    "arctan",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sigmoid",
    "relu",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "softplus",
    "erf",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "where",
    "clone",
    "absolute",
    "fix",
]
