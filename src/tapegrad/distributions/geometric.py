"""Geometric(probs= or logits=): failures before the first success."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, lazy_property, logits_to_probs, probs_to_logits, rng

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(probs) trials.

    >>> from tapegrad.distributions import Geometric
    >>> d = Geometric(tg.tensor(0.25))
    >>> d.log_prob(tg.tensor(2.0)), d.mean
    (tensor(-1.9617), tensor(3.))
    """

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        _one_of("Geometric", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(
                f"Expected parameter probs (Tensor of shape {tuple(self.probs.shape)}) of "
                f"distribution {self!r} to be positive but found invalid values:\n"
                f"{self.probs.detach()}"
            )

    @lazy_property
    def logits(self) -> Tensor:
        """log(p / (1 - p))."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """The probability of success of each trial."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        """(1 - probs) / probs: the expected failures before the first success."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        """0."""
        return self.probs * 0

    @property
    def variance(self) -> Tensor:
        """(1 - probs) / probs^2."""
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = np.broadcast_to(np.asarray(self.probs.detach().numpy(), np.float64), shape)
        return from_numpy((rng().geometric(p) - 1).astype(np.float64), self.probs)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad as tg

        value = self._value(value)
        value, probs = broadcast_all(value, self.probs)
        # p == 1 with value 0: 0 * log(0) is 0
        failures = tg.where((probs == 1) & (value == 0), 0.0, value * (-probs).log1p())
        return failures + probs.log()

    def entropy(self) -> Tensor:
        import tapegrad.nn.functional as F

        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
