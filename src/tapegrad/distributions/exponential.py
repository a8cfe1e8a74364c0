"""Exponential(rate), reparameterized."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Exponential"]


class Exponential(Distribution):
    """The exponential distribution with rate `rate` (mean 1 / rate).

    >>> from tapegrad.distributions import Exponential
    >>> d = Exponential(tg.tensor([1.0, 2.0]))
    >>> d.log_prob(tg.tensor([1.0, 1.0])), d.mean
    (tensor([-1.    , -1.3069]), tensor([1. , 0.5]))
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        """0."""
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        """1 / rate^2."""
        return self.rate**-2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        e = from_numpy(rng().standard_exponential(self._extended_shape(sample_shape)), self.rate)
        return e / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        value = self._value(value, "cdf")
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Any) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()
