"""Functions of two tensors of one shape: lerp (linear interpolation) and dist (the p-norm
of their difference).

`lerp` is one op with a fused rule; `dist` is a composite of `sub` and `norm`.

    >>> tg.lerp(tg.tensor([0.0, 10.0]), tg.tensor([10.0, 20.0]), 0.25)
    tensor([ 2.5, 12.5])
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .registry import apply_inplace, defop
from .statistics import norm


@defop(saves=("x", "y", "weight"), name="lerp")
def _lerp(xp, x, y, weight):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        # PyTorch's two-sided form: exact at weight 1, and lerp(-inf, y, 0.6) is -inf, not
        # -inf + 0.6 * inf = NaN
        near_x = x + weight * (y - x)
        if isinstance(weight, (int, float)):
            return near_x if abs(weight) < 0.5 else y - (y - x) * (1.0 - weight)
        return xp.where(xp.abs(weight) < 0.5, near_x, y - (y - x) * (1.0 - weight))


@_lerp.vjp
def _(xp, g, x, y, weight, needs):
    gx = g * (1.0 - weight) if needs[0] else None
    gy = g * weight if needs[1] else None
    gw = g * (y - x) if needs[2] else None
    return gx, gy, gw


@_lerp.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), 0.3), {}),
        ((rng.standard_normal((3, 4)), rng.standard_normal((4,)), rng.uniform(0, 1, (3, 1))), {}),
        ((rng.standard_normal(()), rng.standard_normal(()), rng.uniform(0, 1, ())), {}),
        ((rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), 0.75), {}),
    ]


@_lerp.reference
def _(torch, x, y, weight):
    return torch.lerp(x, y, weight)


def lerp(input, end, weight):
    """input + weight * (end - input); `weight` is a number or a tensor (all broadcast).

    >>> tg.lerp(tg.tensor([1.0]), tg.tensor([3.0]), 0.5)
    tensor([2.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"lerp(): input must be a Tensor, got {type(input).__name__}")
    try:
        return _lerp(input, end, weight)
    except ValueError:
        shapes = [
            tuple(a.shape) if isinstance(a, Tensor) else type(a).__name__
            for a in (input, end, weight)
        ]
        raise RuntimeError(
            f"lerp(): the shapes of input, end and weight {shapes} don't broadcast"
        ) from None


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast), over all elements: p = 2 (default), 1, inf,
    -inf, 0 or any other number.

    >>> tg.dist(tg.tensor([1.0, 1.0]), tg.tensor([4.0, 5.0]))
    tensor(5.)
    """
    return norm(input - other, p)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """The p-norm distance between every row of `x1` (..., P, M) and every row of `x2`
    (..., R, M): (..., P, R). At zero distance the gradient is zero, as PyTorch's.

    >>> tg.cdist(tg.tensor([[0.0, 0.0]]), tg.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cdist(): {name} must be a Tensor, got {type(t).__name__}")
        if t.ndim < 2:
            raise RuntimeError(f"cdist(): {name} must have at least 2 dimensions, got {t.ndim}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"cdist(): x1 and x2 must have the same number of columns, got {x1.shape[-1]} "
            f"and {x2.shape[-1]}"
        )
    if float(p) < 0:
        raise RuntimeError(f"cdist(): p must be non-negative, got {p}")
    return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), float(p), dim=-1)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between `x1` and `x2` along `dim` (broadcast): their dot
    product over the product of their norms, each norm clamped to at least `eps`.

    >>> tg.cosine_similarity(tg.tensor([1.0, 0.0]), tg.tensor([1.0, 1.0]), dim=0)
    tensor(0.7071)
    """
    from .elementwise import clamp_min

    for name, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cosine_similarity(): {name} must be a Tensor, got {type(t).__name__}")
    n1 = clamp_min(norm(x1, 2, dim=dim, keepdim=True), eps)
    n2 = clamp_min(norm(x2, 2, dim=dim, keepdim=True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _lerp_(self, end, weight):
    """In place `self + weight * (end - self)`."""
    return apply_inplace(_lerp, self, end, weight)


__all__ = ["lerp", "dist", "cdist", "cosine_similarity"]
