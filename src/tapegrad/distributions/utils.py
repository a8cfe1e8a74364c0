"""Helpers the distributions share: broadcasting parameters, probs <-> logits, draws.

>>> from tapegrad.distributions.utils import broadcast_all
>>> [t.shape for t in broadcast_all(tg.zeros(2, 1), 1.0, tg.ones(3))]
[(2, 3), (2, 3), (2, 3)]
"""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from ..tensor import Tensor

__all__ = [
    "broadcast_all",
    "lazy_property",
    "clamp_probs",
    "logits_to_probs",
    "probs_to_logits",
]


def _as_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    import tapegrad as tg

    if isinstance(value, Tensor):
        return value
    dtype = like.dtype if like is not None and like.is_floating_point() else None
    return tg.tensor(value, dtype=dtype or tg.get_default_dtype())


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """`values` (tensors or numbers) as tensors of one broadcast shape; numbers take the
    dtype of the first floating tensor, else the default dtype (as PyTorch's).

    >>> from tapegrad.distributions.utils import broadcast_all
    >>> broadcast_all(tg.tensor([1.0, 2.0]), 0.5)[1]
    tensor([0.5, 0.5])
    """
    like = next((v for v in values if isinstance(v, Tensor) and v.is_floating_point()), None)
    for v in values:
        if not isinstance(v, (Tensor, Number)):
            raise ValueError(
                f"broadcast_all: input arguments must all be instances of numbers.Number or "
                f"Tensor, got {type(v).__name__}"
            )
    tensors = [_as_tensor(v, like) for v in values]
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(*shape) for t in tensors)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first read and then stored on the instance (a distribution
    given `probs` computes its `logits` only when asked).

    >>> from tapegrad.distributions.utils import lazy_property
    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         return 2
    >>> A().x
    2
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.__name__] = value
        return value


def clamp_probs(probs: Tensor) -> Tensor:
    """`probs` clamped into [eps, 1 - eps] of their dtype (finite logs at 0 and 1).

    >>> from tapegrad.distributions.utils import clamp_probs
    >>> bool(clamp_probs(tg.tensor([0.0]))[0] > 0)
    True
    """
    eps = float(np.finfo(np.dtype(probs.dtype)).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits of probabilities: log(p) - log(1 - p) for a binary variable, else log(p).

    >>> from tapegrad.distributions.utils import probs_to_logits
    >>> probs_to_logits(tg.tensor([0.5]), is_binary=True)
    tensor([0.])
    """
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities of logits: sigmoid for a binary variable, else softmax over the last dim.

    >>> from tapegrad.distributions.utils import logits_to_probs
    >>> logits_to_probs(tg.tensor([0.0, 0.0]))
    tensor([0.5, 0.5])
    """
    import tapegrad.nn.functional as F

    if is_binary:
        return logits.sigmoid()
    return F.softmax(logits, dim=-1)


def rng() -> np.random.Generator:
    """This thread's generator (tg.manual_seed seeds it)."""
    from ..random import resolve

    return resolve("distributions", None)


def from_numpy(values: np.ndarray, like: Tensor) -> Tensor:
    """A tensor of `values` in `like`'s dtype (no graph)."""
    import tapegrad as tg

    return tg.tensor(np.asarray(values), dtype=like.dtype)
