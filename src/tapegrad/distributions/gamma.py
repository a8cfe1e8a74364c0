"""Gamma(concentration, rate)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._special import digamma, lgamma
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Gamma"]


class Gamma(Distribution):
    """The gamma distribution with shape `concentration` and inverse scale `rate`.

    Unlike PyTorch's, it has no `rsample` (PyTorch differentiates its draws by implicit
    reparameterization, which needs the incomplete gamma function's derivative).

    >>> from tapegrad.distributions import Gamma
    >>> d = Gamma(tg.tensor(2.0), tg.tensor(3.0))
    >>> d.log_prob(tg.tensor(0.5)), d.mean
    (tensor(0.0041), tensor(0.6667))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """concentration / rate."""
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        """(concentration - 1) / rate, clamped at 0."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        """concentration / rate^2."""
        return self.concentration / self.rate**2

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        c = np.broadcast_to(np.asarray(self.concentration.detach().numpy(), np.float64), shape)
        r = np.asarray(self.rate.detach().numpy(), np.float64)
        x = rng().standard_gamma(c) / r
        # a draw that underflows to 0 is the smallest positive number (on the support)
        return from_numpy(np.maximum(x, np.finfo(np.dtype(self.rate.dtype)).tiny), self.rate)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad as tg

        value = self._value(value)
        c, r = self.concentration, self.rate
        return tg.xlogy(c, r) + tg.xlogy(c - 1, value) - r * value - lgamma(c)

    def cdf(self, value: Any) -> Tensor:
        raise self._missing("cdf (the regularized incomplete gamma function)")

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)
