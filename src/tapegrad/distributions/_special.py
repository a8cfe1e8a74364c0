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


# -- the derivative of a gamma draw with respect to its shape (implicit reparameterization) --
#
# A draw x of Gamma(a, 1) is F^-1(u; a) for a uniform u, F = P(a, .) the regularized lower
# incomplete gamma function; holding u fixed, dx/da = -(dP/da)(a, x) / p(x; a), p the
# density. dP/da has no closed form: below x = a + 1 it is the derivative, term by term, of
# P's power series; above, where P is near 1 and that sum cancels, it is minus the derivative
# of Q = 1 - P, carried along the continued fraction of the upper incomplete gamma function
# (both are accurate to about 1e-9 relative in float64, checked against mpmath).


def _lower_series_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    # P = sum_n t_n, t_n = exp(-x) x^(a + n) / Gamma(a + n + 1): dt_n/da = t_n (log x - psi)
    out = np.zeros_like(a)
    idx = np.arange(a.size)
    logx = np.log(x)
    log_t = -x + a * logx - _lgamma_np(a + 1.0)
    psi = _digamma_np(a + 1.0)
    s, p = np.zeros_like(a), np.zeros_like(a)
    n = 0
    while idx.size:
        for _ in range(16):
            t = np.exp(log_t)
            s = s + t * (logx - psi)
            p = p + t
            n += 1
            k = a + n
            log_t = log_t + logx - np.log(k)
            psi = psi + 1.0 / k
        # past the largest term, what is left is below a geometric series of ratio r
        r = x / (a + n + 1.0)
        rest = np.exp(log_t) / np.maximum(1.0 - r, 1e-300) * (1.0 + np.abs(logx - psi))
        done = (r < 1.0) & (rest <= 1e-17 * np.maximum(p, 1e-300))
        if done.any():
            out[idx[done]] = s[done]
            keep = ~done
            idx, a, x, logx, log_t, psi, s, p = (
                v[keep] for v in (idx, a, x, logx, log_t, psi, s, p)
            )
    return out


def _upper_fraction_da(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    # Gamma(a, x) = exp(-x) x^a h, h the continued fraction 1/(x+1-a-) 1(1-a)/(x+3-a-) ...,
    # evaluated by Lentz's method with the derivative in a of every quantity alongside
    tiny = 1e-300
    out = np.zeros_like(a)
    idx = np.arange(a.size)
    b, db = x + 1.0 - a, -np.ones_like(a)
    c, dc = np.full_like(a, 1.0 / tiny), np.zeros_like(a)
    d = 1.0 / b
    dd = -db / b**2
    h, dh = d.copy(), dd.copy()
    i = 0
    while idx.size:
        for _ in range(8):
            i += 1
            an, dan = -i * (i - a), float(i)
            b = b + 2.0
            dn = an * d + b
            ddn = dan * d + an * dd + db
            dn = np.where(np.abs(dn) < tiny, tiny, dn)
            cn = b + an / c
            dcn = db + dan / c - an * (dc / c) / c
            cn = np.where(np.abs(cn) < tiny, tiny, cn)
            d, dd = 1.0 / dn, -ddn / dn**2
            c, dc = cn, dcn
            delta, ddelta = d * c, dd * c + d * dc
            h, dh = h * delta, dh * delta + h * ddelta
        done = (np.abs(delta - 1.0) < 1e-16) & (np.abs(ddelta * h) <= 1e-16 * np.abs(dh) + 1e-300)
        if done.any():
            ad, xd = a[done], x[done]
            pref = np.exp(-xd + ad * np.log(xd) - _lgamma_np(ad))
            # dQ/da, Q = pref * h; minus it is dP/da
            out[idx[done]] = -(pref * h[done] * (np.log(xd) - _digamma_np(ad)) + pref * dh[done])
            keep = ~done
            idx, a, x, b, db, c, dc, d, dd, h, dh = (
                v[keep] for v in (idx, a, x, b, db, c, dc, d, dd, h, dh)
            )
    return out


def standard_gamma_grad_np(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d x / d a for draws `x` of Gamma(`a`, 1), at a fixed quantile (float64 arrays).

    >>> from tapegrad.distributions._special import standard_gamma_grad_np
    >>> float(standard_gamma_grad_np(np.array(1.0), np.array(1.0)).round(6))
    1.173563
    """
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a64.shape
    a_flat, x_flat = a64.ravel().copy(), np.maximum(x64.ravel(), 1e-300)
    with np.errstate(all="ignore"):
        upper = x_flat > a_flat + 1.0
        dp = np.empty_like(a_flat)
        if (~upper).any():
            dp[~upper] = _lower_series_da(a_flat[~upper], x_flat[~upper])
        if upper.any():
            dp[upper] = _upper_fraction_da(a_flat[upper], x_flat[upper])
        log_density = (a_flat - 1.0) * np.log(x_flat) - x_flat - _lgamma_np(a_flat)
        return (-dp / np.exp(log_density)).reshape(shape)


class _StandardGamma(Function):
    # a draw of Gamma(a, 1) whose gradient in a is the implicit reparameterization above
    @staticmethod
    def forward(ctx: Any, a: Tensor, draws: np.ndarray) -> Tensor:
        ctx.save_for_backward(a)
        ctx.draws = draws
        return _out(draws, a)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        (a,) = ctx.saved_tensors
        return grad * _out(standard_gamma_grad_np(_host(a), ctx.draws), a), None


def standard_gamma(a: Tensor, draws: np.ndarray) -> Tensor:
    """`draws` (of Gamma(a, 1), one per element of `a`) as a tensor differentiable in `a`
    (first order: the derivative is computed, not recorded)."""
    return _StandardGamma.apply(a, draws)
