"""OneHotCategorical(probs= or logits=): a Categorical whose draws are one-hot vectors."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(Distribution):
    """One-hot vectors of K classes (event_shape (K,)) drawn as `Categorical(probs, logits)`.

    >>> from tapegrad.distributions import OneHotCategorical
    >>> d = OneHotCategorical(probs=tg.tensor([0.2, 0.8]))
    >>> d.log_prob(tg.tensor([0.0, 1.0])), d.event_shape
    (tensor(-0.2231), (2,))
    """

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self, probs: Any = None, logits: Any = None, validate_args: bool | None = None
    ) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(
            self._categorical.batch_shape,
            (self._categorical._num_events,),
            validate_args=False,
        )
        self._validate_args = self._categorical._validate_args

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__["_categorical"] = self._categorical.expand(batch_shape)
        new._batch_shape = new._categorical.batch_shape
        return new

    @property
    def probs(self) -> Tensor:
        """The probabilities of the classes."""
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        """Normalized log-probabilities of the classes."""
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        """batch_shape + (number of classes,)."""
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        """probs."""
        return self.probs

    @property
    def mode(self) -> Tensor:
        """The one-hot vector of the most probable category."""
        import tapegrad.nn.functional as F

        return F.one_hot(self.probs.argmax(-1), self.event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        """probs * (1 - probs)."""
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        import tapegrad.nn.functional as F

        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self.event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The K one-hot vectors along a new first dimension.

        >>> from tapegrad.distributions import OneHotCategorical
        >>> OneHotCategorical(logits=tg.zeros(2)).enumerate_support()
        tensor([[1., 0.],
                [0., 1.]])
        """
        import tapegrad as tg

        n = self.event_shape[0]
        values = tg.eye(n, dtype=self.probs.dtype).reshape(
            (n,) + (1,) * len(self.batch_shape) + (n,)
        )
        return values.expand(n, *self.batch_shape, n) if expand else values

    def __repr__(self) -> str:
        return repr(self._categorical).replace("Categorical", type(self).__name__, 1)
