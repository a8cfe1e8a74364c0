"""Bernoulli(probs= or logits=): one coin flip per batch element."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, lazy_property, logits_to_probs, probs_to_logits, rng

__all__ = ["Bernoulli"]


def _one_of(name: str, probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0.

    >>> from tapegrad.distributions import Bernoulli
    >>> d = Bernoulli(probs=tg.tensor([0.25, 0.5]))
    >>> d.log_prob(tg.tensor([1.0, 0.0])), d.entropy()
    (tensor([-1.3863, -0.6931]), tensor([0.5623, 0.6931]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        _one_of("Bernoulli", probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        """log(p / (1 - p))."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """The probability of a 1."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameters."""
        return tuple(self.batch_shape)

    @property
    def mean(self) -> Tensor:
        """probs."""
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where probs > 0.5, 0 where below, NaN at exactly 0.5 (as PyTorch's)."""
        import tapegrad as tg

        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return tg.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self) -> Tensor:
        """probs * (1 - probs)."""
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        p = np.asarray(self.probs.detach().numpy())
        u = rng().random(self._extended_shape(sample_shape))
        return from_numpy(u < p, self.probs)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad.nn.functional as F

        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        import tapegrad.nn.functional as F

        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """[0, 1] along a new first dimension (broadcast over the batch with `expand`).

        >>> from tapegrad.distributions import Bernoulli
        >>> Bernoulli(tg.tensor([0.5, 0.5])).enumerate_support()
        tensor([[0., 0.],
                [1., 1.]])
        """
        import tapegrad as tg

        values = tg.tensor(
            [0.0, 1.0], dtype=self.probs.dtype if "probs" in self.__dict__ else self.logits.dtype
        )
        values = values.reshape((2,) + (1,) * len(self.batch_shape))
        return values.expand(2, *self.batch_shape) if expand else values
