"""Beta(concentration1, concentration0) on [0, 1]."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._special import digamma, lgamma
from .dirichlet import _dirichlet_mode
from .distribution import Distribution
from .gamma import standard_gamma_rsample
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Beta"]


class Beta(Distribution):
    """The beta distribution with shapes `concentration1` (alpha) and `concentration0` (beta).

    `rsample` is X / (X + Y) of two reparameterized gamma draws (see Gamma), so it is
    differentiable in both concentrations; its gradients are unbiased but, draw by draw,
    not PyTorch's (which differentiates the Beta's own quantile).

    >>> from tapegrad.distributions import Beta
    >>> d = Beta(tg.tensor(2.0), tg.tensor(3.0))
    >>> d.log_prob(tg.tensor(0.25)), d.mean
    (tensor(0.5232), tensor(0.4))
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self, concentration1: Any, concentration0: Any, validate_args: bool | None = None
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """concentration1 / (concentration1 + concentration0)."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """The density's maximum, (a - 1) / (a + b - 2), as the Dirichlet's mode of (a, b)."""
        import tapegrad as tg

        both = tg.stack([self.concentration1, self.concentration0], -1)
        return _dirichlet_mode(both)[..., 0]

    @property
    def variance(self) -> Tensor:
        """a b / ((a + b)^2 (a + b + 1))."""
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total**2 * (total + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        a = np.broadcast_to(np.asarray(self.concentration1.detach().numpy(), np.float64), shape)
        b = np.asarray(self.concentration0.detach().numpy(), np.float64)
        return from_numpy(rng().beta(a, np.broadcast_to(b, shape)), self.concentration1)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A draw differentiable in both concentrations (through gamma draws).

        >>> from tapegrad.distributions import Beta
        >>> Beta(tg.tensor(2.0, requires_grad=True), 3.0).rsample((4,)).requires_grad
        True
        """
        shape = self._extended_shape(sample_shape)
        x = standard_gamma_rsample(self.concentration1, shape)
        y = standard_gamma_rsample(self.concentration0, shape)
        return x / (x + y)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad as tg

        value = self._value(value)
        a, b = self.concentration1, self.concentration0
        return (
            tg.xlogy(a - 1, value)
            + tg.xlogy(b - 1, 1 - value)
            + lgamma(a + b)
            - lgamma(a)
            - lgamma(b)
        )

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (
            lgamma(a)
            + lgamma(b)
            - lgamma(total)
            - (a - 1) * digamma(a)
            - (b - 1) * digamma(b)
            + (total - 2) * digamma(total)
        )
