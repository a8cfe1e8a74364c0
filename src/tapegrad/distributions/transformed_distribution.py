"""TransformedDistribution(base, transforms): the law of transforms applied to base draws."""

from __future__ import annotations

from typing import Any, ClassVar

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .independent import sum_rightmost
from .transforms import Transform

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """Draws of `base_distribution` passed through `transforms` (one Transform or a list,
    applied in order); log_prob by the change of variables.

    >>> from tapegrad.distributions import Normal, TransformedDistribution
    >>> from tapegrad.distributions.transforms import AffineTransform
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [AffineTransform(1.0, 2.0)])
    >>> d.log_prob(tg.tensor(1.0))
    tensor(-1.6121)
    """

    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        transforms: Transform | list[Transform],
        validate_args: bool | None = None,
    ) -> None:
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, list) or not all(
            isinstance(t, Transform) for t in transforms
        ):
            raise ValueError(
                "transforms must be a Transform or a list of Transforms, got "
                f"{type(transforms).__name__}"
            )
        self.base_dist = base_distribution
        self.transforms = transforms
        event_dim = max([len(base_distribution.event_shape)] + [t.event_dim for t in transforms])
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        """Whether the base distribution has rsample."""
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint:
        """The codomain of the last transform (the base's support without transforms)."""
        if not self.transforms:
            return self.base_dist.support
        return self.transforms[-1].codomain

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        batch_shape = tuple(batch_shape)
        extra = len(self.event_shape) - len(self.base_dist.event_shape)
        new.base_dist = self.base_dist.expand(batch_shape + self.event_shape[:extra])
        new._batch_shape = batch_shape
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        from ..autograd import no_grad

        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        y = self._value(value)
        event_dim = len(self.event_shape)
        total: Any = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.event_dim)
            y = x
        base = sum_rightmost(
            self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape)
        )
        return total + base

    def _monotone_sign(self) -> int:
        sign = 1
        for t in self.transforms:
            sign *= t.sign
        return sign

    def cdf(self, value: Any) -> Tensor:
        value = self._value(value, "cdf")
        for t in reversed(self.transforms):
            value = t.inv(value)
        value = self.base_dist.cdf(value)
        return value if self._monotone_sign() == 1 else 1 - value

    def icdf(self, value: Tensor) -> Tensor:
        if self._monotone_sign() != 1:
            value = 1 - value
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value

    def __repr__(self) -> str:
        return f"TransformedDistribution({self.base_dist!r}, {self.transforms!r})"
