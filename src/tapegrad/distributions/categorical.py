"""Categorical(probs= or logits=): one of K classes per batch element."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import _as_tensor, lazy_property, logits_to_probs, probs_to_logits, rng

__all__ = ["Categorical"]


def _draw(probs: np.ndarray, sample_shape: tuple[int, ...]) -> np.ndarray:
    """Class indices: inverse-CDF draws, one per (sample, batch element)."""
    cdf = np.cumsum(probs, -1)
    cdf = cdf / cdf[..., -1:]
    u = rng().random(sample_shape + probs.shape[:-1])
    idx = (u[..., None] >= cdf).sum(-1)
    return np.minimum(idx, probs.shape[-1] - 1).astype(np.int64)


class Categorical(Distribution):
    """Class k with probability probs[..., k]: the last dimension of `probs` (normalized to
    sum to 1) or `logits` (normalized by logsumexp) indexes the classes, the others batch.

    >>> from tapegrad.distributions import Categorical
    >>> d = Categorical(probs=tg.tensor([0.2, 0.3, 0.5]))
    >>> d.log_prob(tg.tensor(2)), d.entropy()
    (tensor(-0.6931), tensor(1.0297))
    """

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        _one_of(type(self).__name__, probs, logits)
        given = _as_tensor(probs if probs is not None else logits)
        if given.ndim < 1:
            raise ValueError(
                f"{type(self).__name__}: `{'probs' if probs is not None else 'logits'}` "
                "must be at least one-dimensional."
            )
        if probs is not None:
            self.probs = given / given.sum(-1, keepdim=True)
        else:
            self.logits = given - given.logsumexp(-1, keepdim=True)
        self._param = given
        self._num_events = int(given.shape[-1])
        super().__init__(tuple(given.shape[:-1]), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        """Normalized log-probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        """The probabilities of the classes (last dimension)."""
        return logits_to_probs(self.logits)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new: Any = super().expand(batch_shape, _instance)
        new.__dict__["_param"] = new.probs if "probs" in new.__dict__ else new.logits
        return new

    @property
    def param_shape(self) -> tuple[int, ...]:
        """batch_shape + (number of classes,)."""
        return tuple(self._param.shape)

    @property
    def support(self) -> constraints.Constraint:
        """The integers 0, ..., K - 1."""
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        """NaN, as PyTorch's (a category has no mean)."""
        import tapegrad as tg

        return tg.full(self._extended_shape(), float("nan"), dtype=self._param.dtype)

    @property
    def mode(self) -> Tensor:
        """The most probable category."""
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        """NaN, as PyTorch's."""
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Tensor:
        import tapegrad as tg

        probs = np.asarray(self.probs.detach().numpy(), dtype=np.float64)
        return tg.tensor(
            _draw(
                probs, tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)
            )
        )

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value).long()
        shape = np.broadcast_shapes(tuple(value.shape), self.batch_shape)
        logits = self.logits.expand(*shape, self._num_events)
        index = value.expand(*shape).unsqueeze(-1)
        return logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        low = float(np.finfo(np.dtype(self.logits.dtype)).min)
        # 0 * log 0 is 0: a -inf logit is clamped to the dtype's lowest finite value
        return -(self.logits.clamp(min=low) * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """0, ..., K - 1 along a new first dimension (broadcast over the batch with `expand`).

        >>> from tapegrad.distributions import Categorical
        >>> Categorical(logits=tg.zeros(3)).enumerate_support()
        tensor([0, 1, 2])
        """
        import tapegrad as tg

        values = tg.arange(self._num_events).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand(self._num_events, *self.batch_shape) if expand else values
