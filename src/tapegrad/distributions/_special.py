"""lgamma, digamma and trigamma as differentiable functions (no SciPy: tapegrad has none).

lgamma is the standard library's, elementwise; digamma and trigamma shift the argument up
by their recurrences until the asymptotic series is accurate to float64 (x >= 8), and use
the reflection formula below 0.5. Each one's derivative is the next one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import Function
from ..tensor import Tensor, _wrap

_lgamma_values = np.frompyfunc(lambda v: math.lgamma(v) if v == v else v, 1, 1)


def _host(x: Tensor) -> np.ndarray:
    return np.asarray(x.detach().numpy(), dtype=np.float64)


def _out(values: np.ndarray, like: Tensor) -> Tensor:
    return _wrap(np.asarray(values, dtype=like.dtype))


def _lgamma_np(x: np.ndarray) -> np.ndarray:
    # math.lgamma raises at the poles (0, -1, ...) where the value is +inf
    poles = (x <= 0) & (x == np.floor(x))
    safe = np.where(poles, 1.0, x)
    out = np.asarray(_lgamma_values(safe), dtype=np.float64)
    return np.where(poles, np.inf, out)


def _digamma_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        z = np.where(reflect, 1.0 - x, x)
        acc = np.zeros_like(z)
        for _ in range(8):
            small = z < 8.0
            acc = acc - np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = (
            np.log(z)
            - 0.5 / z
            - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
        )
        out = acc + series
        out = np.where(reflect, out - np.pi / np.tan(np.pi * x), out)
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


def _trigamma_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        # psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)
        z = np.where(reflect, 1.0 - x, x)
        acc = np.zeros_like(z)
        for _ in range(8):
            small = z < 8.0
            acc = acc + np.where(small, 1.0 / (z * z), 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = 1 / z + r / 2 + r / z * (1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30))))
        out = acc + series
        return np.where(reflect, np.pi**2 / np.sin(np.pi * x) ** 2 - out, out)


def _polygamma2_np(x: np.ndarray) -> np.ndarray:
    """psi''(x), for x > 0 (the second derivative of digamma)."""
    with np.errstate(all="ignore"):
        z = np.array(x, dtype=np.float64)
        acc = np.zeros_like(z)
        for _ in range(8):
            small = z < 8.0
            acc = acc - np.where(small, 2.0 / z**3, 0.0)
            z = np.where(small, z + 1.0, z)
        r = 1.0 / (z * z)
        series = -r - r / z - r * r * (1 / 2 - r * (1 / 6 - r * (1 / 6 - r * (3 / 10))))
        return acc + series


class _Trigamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _out(_trigamma_np(_host(x)), x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad * _out(_polygamma2_np(_host(x)), x)


class _Digamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _out(_digamma_np(_host(x)), x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad * trigamma(x)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        ctx.save_for_backward(x)
        return _out(_lgamma_np(_host(x)), x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return grad * digamma(x)


def lgamma(x: Tensor) -> Tensor:
    """log|Gamma(x)|, elementwise (differentiable twice)."""
    return _Lgamma.apply(x)


def digamma(x: Tensor) -> Tensor:
    """The digamma function d/dx lgamma(x), elementwise."""
    return _Digamma.apply(x)


def trigamma(x: Tensor) -> Tensor:
    """The trigamma function d/dx digamma(x), elementwise."""
    return _Trigamma.apply(x)
