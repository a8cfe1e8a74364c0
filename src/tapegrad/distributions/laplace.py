"""Laplace(loc, scale), reparameterized."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution with location `loc` and scale `scale`.

    >>> from tapegrad.distributions import Laplace
    >>> d = Laplace(0.0, 1.0)
    >>> d.log_prob(tg.tensor([0.0, 1.0])), d.variance
    (tensor([-0.6931, -1.6931]), tensor(2.))
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
        """sqrt(2) * scale."""
        return math.sqrt(2) * self.scale

    @property
    def variance(self) -> Tensor:
        """2 * scale^2."""
        return 2 * self.scale**2

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        # u in the open interval (-1, 1): log1p(-|u|) stays finite
        tiny = np.finfo(np.dtype(self.loc.dtype)).eps
        u = from_numpy(rng().uniform(-1 + tiny, 1.0, shape), self.loc)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Tensor:
        value = self._value(value, "cdf")
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
