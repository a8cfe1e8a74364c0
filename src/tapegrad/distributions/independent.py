"""Independent(base, n): a base distribution's rightmost n batch dims as event dims."""

from __future__ import annotations

from typing import Any, ClassVar

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution

__all__ = ["Independent"]


def sum_rightmost(value: Tensor, dims: int) -> Tensor:
    """`value` summed over its `dims` rightmost dimensions."""
    return value.reshape(*value.shape[: value.ndim - dims], -1).sum(-1) if dims > 0 else value


class Independent(Distribution):
    """`base_distribution` with its `reinterpreted_batch_ndims` rightmost batch dimensions
    read as event dimensions: log_prob and entropy sum over them.

    >>> from tapegrad.distributions import Independent, Normal
    >>> d = Independent(Normal(tg.zeros(3, 2), 1.0), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(tg.zeros(3, 2)).shape
    ((3,), (2,), (3,))
    """

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        n = int(reinterpreted_batch_ndims)
        batch = tuple(base_distribution.batch_shape)
        if n > len(batch):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {n} vs {len(batch)}"
            )
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        cut = len(batch) - n
        super().__init__(
            batch[:cut],
            batch[cut:] + tuple(base_distribution.event_shape),
            validate_args=validate_args,
        )

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        """Whether the base distribution has rsample."""
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        """Whether the support can be enumerated (only with no reinterpreted dimensions)."""
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @property
    def support(self) -> constraints.Constraint:
        """The base's support over the reinterpreted dimensions."""
        if self.reinterpreted_batch_ndims == 0:
            return self.base_dist.support
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        batch_shape = tuple(batch_shape)
        event = self.event_shape[: self.reinterpreted_batch_ndims]
        base = self.base_dist.expand(batch_shape + event)
        return Independent(base, self.reinterpreted_batch_ndims, validate_args=False)

    @property
    def mean(self) -> Tensor:
        """The base distribution's mean."""
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        """The base distribution's mode."""
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        """The base distribution's variance."""
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
