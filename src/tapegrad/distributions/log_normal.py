"""LogNormal(loc, scale): exp of a Normal(loc, scale)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale).

    >>> from tapegrad.distributions import LogNormal
    >>> d = LogNormal(0.0, 1.0)
    >>> d.log_prob(tg.tensor(1.0)), d.mean
    (tensor(-0.9189), tensor(1.6487))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        """The mean of log(X)."""
        return self.base_dist.loc  # type: ignore[attr-defined]

    @property
    def scale(self) -> Tensor:
        """The standard deviation of log(X)."""
        return self.base_dist.scale  # type: ignore[attr-defined]

    @property
    def mean(self) -> Tensor:
        """exp(loc + scale^2 / 2)."""
        return (self.loc + self.scale**2 / 2).exp()

    @property
    def mode(self) -> Tensor:
        """exp(loc - scale^2)."""
        return (self.loc - self.scale**2).exp()

    @property
    def variance(self) -> Tensor:
        """(exp(scale^2) - 1) exp(2 loc + scale^2)."""
        s2 = self.scale**2
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc

    def __repr__(self) -> str:
        return repr(self.base_dist).replace("Normal", "LogNormal", 1)
