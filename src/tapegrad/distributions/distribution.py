"""`Distribution`: the base of every distribution (shapes, validation, sampling API).

Shapes follow PyTorch: a draw of `sample(sample_shape)` has shape
`sample_shape + batch_shape + event_shape`; `log_prob(value)` reduces the event dimensions.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

_Shape = tuple[int, ...]


def _shape(value: Any) -> _Shape:
    if isinstance(value, int):
        return (value,)
    return tuple(int(d) for d in value)


class Distribution:
    """The base of the distributions (PyTorch's `torch.distributions.Distribution`).

    Parameters are checked against `arg_constraints` when `validate_args` is on (the
    default, as PyTorch's; `Distribution.set_default_validate_args(False)` turns it off):
    an invalid one raises a ValueError naming the parameter and the constraint.

    >>> from tapegrad.distributions import Normal
    >>> d = Normal(tg.zeros(3), 1.0)
    >>> d.batch_shape, d.event_shape, d.sample((2,)).shape
    ((3,), (), (2, 3))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args_default: ClassVar[bool] = True
    arg_constraints: ClassVar[dict[str, constraints.Constraint]] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made from now on.

        >>> from tapegrad.distributions import Distribution
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError(
                f"Distribution.set_default_validate_args: value must be True or False, got "
                f"{value!r}"
            )
        Distribution._validate_args_default = bool(value)

    def __init__(
        self,
        batch_shape: Any = (),
        event_shape: Any = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = _shape(batch_shape)
        self._event_shape = _shape(event_shape)
        if validate_args is not None:
            self._validate_args = bool(validate_args)
        else:
            self._validate_args = Distribution._validate_args_default
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        for param, constraint in self.arg_constraints.items():
            if constraint is constraints.dependent:
                continue
            if param not in self.__dict__ and isinstance(
                getattr(type(self), param, None), lazy_property
            ):
                continue  # given the other parameterization (probs vs logits)
            value = getattr(self, param)
            if not isinstance(value, Tensor):
                continue
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter {param} (Tensor of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but "
                    f"found invalid values:\n{value.detach()}"
                )

    @property
    def batch_shape(self) -> _Shape:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> _Shape:
        """The shape of one draw (of one element of the batch)."""
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> _Shape:
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """This distribution with its parameters broadcast to `batch_shape` (no copy).

        >>> from tapegrad.distributions import Normal
        >>> Normal(0.0, 1.0).expand((2, 3)).batch_shape
        (2, 3)
        """
        batch_shape = _shape(batch_shape)
        try:
            np.broadcast_shapes(batch_shape, self._batch_shape)
            if len(batch_shape) < len(self._batch_shape):
                raise ValueError
            np.broadcast_to(np.empty(self._batch_shape), batch_shape)
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}.expand: batch_shape {batch_shape} is not a broadcast "
                f"of the distribution's batch_shape {self._batch_shape}"
            ) from None
        new = object.__new__(type(self))
        lazy = {
            k for k in dir(type(self)) if isinstance(getattr(type(self), k, None), lazy_property)
        }
        for key, value in self.__dict__.items():
            if key in self.arg_constraints and isinstance(value, Tensor):
                event_dim = self.arg_constraints[key].event_dim
                tail = tuple(value.shape[len(value.shape) - event_dim :]) if event_dim else ()
                value = value.expand(*(batch_shape + tail))
            elif key in lazy:
                continue  # recomputed from the expanded parameters
            new.__dict__[key] = value
        new._batch_shape = batch_shape
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw of shape `sample_shape + batch_shape + event_shape` (no gradient).

        >>> from tapegrad.distributions import Bernoulli
        >>> Bernoulli(tg.tensor([0.3, 0.7])).sample((5,)).shape
        (5, 2)
        """
        from ..autograd import no_grad

        with no_grad():
            return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A reparameterized draw: differentiable with respect to the parameters.

        >>> from tapegrad.distributions import Normal
        >>> loc = tg.tensor(1.0, requires_grad=True)
        >>> Normal(loc, 2.0).rsample((4,)).sum().backward()
        >>> loc.grad
        tensor(4.)
        """
        raise NotImplementedError(
            f"{type(self).__name__}.rsample: this distribution has no reparameterized "
            "sampler (has_rsample is False); use sample()"
        )

    def sample_n(self, n: int) -> Tensor:
        """`sample((n,))`.

        >>> from tapegrad.distributions import Normal
        >>> Normal(0.0, 1.0).sample_n(3).shape
        (3,)
        """
        return self.sample((n,))

    def _missing(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{type(self).__name__} does not implement {what}")

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at `value`, one per batch element."""
        raise self._missing("log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at `value`."""
        raise self._missing("cdf")

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse cumulative distribution function at `value`."""
        raise self._missing("icdf")

    def entropy(self) -> Tensor:
        """The entropy, one per batch element."""
        raise self._missing("entropy")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution's support, along a new first dimension."""
        raise self._missing("enumerate_support")

    def perplexity(self) -> Tensor:
        """exp(entropy()).

        >>> from tapegrad.distributions import Bernoulli
        >>> Bernoulli(0.5).perplexity()
        tensor(2.)
        """
        return self.entropy().exp()

    @property
    def mean(self) -> Tensor:
        """The mean."""
        raise self._missing("mean")

    @property
    def mode(self) -> Tensor:
        """The mode."""
        raise self._missing("mode")

    @property
    def variance(self) -> Tensor:
        """The variance."""
        raise self._missing("variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation, sqrt(variance).

        >>> from tapegrad.distributions import Normal
        >>> Normal(0.0, 3.0).stddev
        tensor(3.)
        """
        return self.variance.sqrt()

    def _value(self, value: Any, what: str = "log_prob") -> Tensor:
        """`value` checked (when validating) and as a tensor."""
        if self._validate_args:
            self._validate_sample(value, what)
        if not isinstance(value, Tensor):
            from .utils import _as_tensor

            value = _as_tensor(value)
        return value

    def _validate_sample(self, value: Any, what: str = "log_prob") -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to {what} must be a Tensor")
        event_dim = len(self._event_shape)
        shape = tuple(value.shape)
        if shape[len(shape) - event_dim :] != self._event_shape if event_dim else False:
            raise ValueError(
                f"The right-most size of value must match event_shape: {shape} vs "
                f"{self._event_shape}."
            )
        try:
            np.broadcast_shapes(shape, self._batch_shape + self._event_shape)
        except ValueError:
            raise ValueError(
                f"Value is not broadcastable with batch_shape+event_shape: {shape} vs "
                f"{self._batch_shape + self._event_shape}."
            ) from None
        support = self.support
        if support is None or support is constraints.dependent:
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument (Tensor of shape {shape}) to be within the support "
                f"({support!r}) of the distribution {self!r}, but found invalid values:\n"
                f"{value.detach()}"
            )

    def __repr__(self) -> str:
        parts = []
        for param in self.arg_constraints:
            if param not in self.__dict__:
                continue
            value = self.__dict__[param]
            if isinstance(value, Tensor):
                # PyTorch's: a 0-d value as its number, a one-element one as the tensor
                if value.ndim == 0:
                    shown = f"{value.item()}"
                elif value.numel() == 1:
                    shown = str(value)
                else:
                    shown = f"{tuple(value.shape)}"
            else:
                shown = repr(value)
            parts.append(f"{param}: {shown}")
        return f"{type(self).__name__}({', '.join(parts)})"
