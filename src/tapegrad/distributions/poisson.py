"""Poisson(rate): counts."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._special import lgamma
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Poisson"]


class Poisson(Distribution):
    """The Poisson distribution with mean `rate` (draws are floating counts, as PyTorch's).

    >>> from tapegrad.distributions import Poisson
    >>> Poisson(tg.tensor(2.0)).log_prob(tg.tensor(3.0))
    tensor(-1.7123)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """rate."""
        return self.rate

    @property
    def mode(self) -> Tensor:
        """floor(rate)."""
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        """rate."""
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        lam = np.broadcast_to(np.asarray(self.rate.detach().numpy(), np.float64), shape)
        return from_numpy(rng().poisson(lam).astype(np.float64), self.rate)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad as tg

        value = self._value(value)
        rate, value = broadcast_all(self.rate, value)
        return tg.xlogy(value, rate) - rate - lgamma(value + 1)
