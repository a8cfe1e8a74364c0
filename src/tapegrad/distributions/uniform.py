"""Uniform(low, high): the continuous uniform distribution on [low, high)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The uniform distribution on the half-open interval [low, high).

    >>> from tapegrad.distributions import Uniform
    >>> d = Uniform(0.0, 4.0)
    >>> d.log_prob(tg.tensor(1.0)), d.mean, d.variance
    (tensor(-1.3863), tensor(2.), tensor(1.3333))
    """

    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError(
                f"Expected parameter low (Tensor of shape {tuple(self.low.shape)}) of "
                f"distribution {self!r} to satisfy the constraint low < high, but found "
                f"invalid values:\n{self.low.detach()}"
            )

    @property
    def support(self) -> constraints.Constraint:
        """[low, high], which depends on the parameters."""
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        """(low + high) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        """NaN, as PyTorch's (every point of the support is a mode)."""
        return self.high * float("nan")

    @property
    def stddev(self) -> Tensor:
        """(high - low) / sqrt(12)."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        """(high - low)^2 / 12."""
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = from_numpy(rng().random(self._extended_shape(sample_shape)), self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        inside = ((self.low <= value) & (value < self.high)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Any) -> Tensor:
        value = self._value(value, "cdf")
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Any) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
