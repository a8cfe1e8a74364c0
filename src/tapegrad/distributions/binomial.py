"""Binomial(total_count, probs= or logits=): successes in total_count trials."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._special import lgamma
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, lazy_property, logits_to_probs, probs_to_logits, rng

__all__ = ["Binomial"]


class Binomial(Distribution):
    """The number of successes in `total_count` Bernoulli(probs) trials.

    >>> from tapegrad.distributions import Binomial
    >>> d = Binomial(10, tg.tensor(0.3))
    >>> d.log_prob(tg.tensor(3.0)), d.mean
    (tensor(-1.3212), tensor(3.))
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Any = 1,
        probs: Any = None,
        logits: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        _one_of("Binomial", probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            shape = self.probs.shape
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        """log(p / (1 - p))."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """The probability of success of each trial."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def support(self) -> constraints.Constraint:
        """The integers 0, ..., total_count."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        """total_count * probs."""
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        """floor((total_count + 1) * probs), at most total_count."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        """total_count * probs * (1 - probs)."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(np.asarray(self.total_count.detach().numpy()).astype(np.int64), shape)
        p = np.broadcast_to(np.asarray(self.probs.detach().numpy(), np.float64), shape)
        return from_numpy(rng().binomial(n, p).astype(np.float64), self.total_count)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad.nn.functional as F

        value = self._value(value)
        n, logits = self.total_count, self.logits
        # k log p + (n - k) log(1 - p) = k * logits - n * softplus(logits)
        binom = lgamma(n + 1) - lgamma(value + 1) - lgamma(n - value + 1)
        return binom + value * logits - n * F.softplus(logits)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """0, ..., total_count along a new first dimension (one total_count only).

        >>> from tapegrad.distributions import Binomial
        >>> Binomial(2, tg.tensor(0.5)).enumerate_support()
        tensor([0., 1., 2.])
        """
        import tapegrad as tg

        n = np.asarray(self.total_count.detach().numpy())
        top = int(n.max()) if n.size else 0
        if not bool((n == top).all()):
            raise NotImplementedError(
                "Binomial.enumerate_support: inhomogeneous total count not supported"
            )
        values = tg.arange(1 + top, dtype=self.total_count.dtype)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand(1 + top, *self.batch_shape) if expand else values

    def entropy(self) -> Tensor:
        values = self.enumerate_support(expand=False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)
