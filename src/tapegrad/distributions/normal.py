"""Normal(loc, scale): the Gaussian, reparameterized."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Normal"]


class Normal(Distribution):
    """The normal distribution with mean `loc` and standard deviation `scale`.

    >>> from tapegrad.distributions import Normal
    >>> d = Normal(tg.tensor([0.0, 1.0]), tg.tensor([1.0, 2.0]))
    >>> d.log_prob(tg.tensor([0.0, 1.0]))
    tensor([-0.9189, -1.6121])
    >>> d.cdf(tg.tensor([0.0, 1.0]))
    tensor([0.5, 0.5])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """scale."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """scale^2."""
        return self.scale**2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = from_numpy(rng().standard_normal(shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        return (
            -((value - self.loc) ** 2) / (2 * self.scale**2)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def cdf(self, value: Any) -> Tensor:
        value = self._value(value, "cdf")
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value: Any) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
