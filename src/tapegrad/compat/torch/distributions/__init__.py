"""`torch.distributions` in the facade: `Categorical` and `Normal`, the two that policy-
gradient and VAE scripts use (pytorch/examples' reinforcement_learning, actor_critic).

Their parameters, `log_prob`, `entropy`, `cdf` and `rsample` are differentiable tapegrad
computations; `sample()` draws from tapegrad's generator (so `torch.manual_seed` makes runs
repeatable, not equal to PyTorch's draws). Arguments are validated as in PyTorch (its
default `validate_args`): a parameter outside its constraint, or a `log_prob` value outside
the support, raises a ValueError. Other distributions are not supported.

>>> import tapegrad.compat.torch as torch
>>> from tapegrad.compat.torch.distributions import Categorical
>>> m = Categorical(probs=torch.tensor([0.25, 0.75]))
>>> m.log_prob(torch.tensor(1)), m.sample((4,)).shape
(tensor(-0.2877), (4,))
"""

from __future__ import annotations

import math
import sys
import types
from typing import Any

import numpy as np

from .... import creation, dtypes
from ....autograd.modes import no_grad
from ....nn import functional as F
from ....ops import elementwise as _ew
from ....sampling import multinomial
from ....tensor import Tensor
from ..._facade import unsupported

__all__ = ["Distribution", "Categorical", "Normal"]


def _as_tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return creation.tensor(x, dtype=dtypes.get_default_dtype())


def _shape(sample_shape) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


class Distribution:
    """The base of the facade's distributions: `batch_shape`, `event_shape`, and
    `sample` as `rsample` without a graph.

    >>> from tapegrad.compat.torch.distributions import Normal
    >>> Normal(0.0, 1.0).batch_shape
    ()
    """

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = ()) -> None:
        self.batch_shape = tuple(batch_shape)
        self.event_shape = tuple(event_shape)

    def sample(self, sample_shape=()) -> Tensor:
        """A draw of shape `sample_shape + batch_shape + event_shape`, outside the graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """A reparameterized draw (differentiable in the parameters), where defined."""
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample")

    def _extended_shape(self, sample_shape=()) -> tuple:
        return _shape(sample_shape) + self.batch_shape + self.event_shape

    def _invalid(self, what: str, value, constraint: str) -> ValueError:
        return ValueError(
            f"Expected {what} (Tensor of shape {tuple(getattr(value, 'shape', ()))}) of "
            f"distribution {self!r} to satisfy the constraint {constraint}, but found invalid "
            f"values:\n{value}"
        )


class Categorical(Distribution):
    """A distribution over 0 .. K-1 given by `probs` (non-negative, normalized over the last
    dimension) or `logits` (unnormalized log-probabilities); the leading dimensions are
    the batch.

    >>> import tapegrad.compat.torch as torch
    >>> from tapegrad.compat.torch.distributions import Categorical
    >>> Categorical(logits=torch.tensor([0.0, 0.0])).entropy()
    tensor(0.6931)
    """

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Categorical: pass exactly one of probs or logits")
        if probs is not None:
            probs = _as_tensor(probs)
            if probs.ndim < 1:
                raise ValueError("Categorical: probs must have at least one dimension")
            self.probs = probs / probs.sum(-1, keepdim=True)
            tiny = float(np.finfo(self.probs.dtype).eps)
            self.logits = _ew.clamp(self.probs, tiny, 1 - tiny).log()
            if validate_args is not False and not bool(
                ((probs >= 0).all() & (probs.sum(-1) > 0).all()).item()
            ):
                raise self._invalid("parameter probs", self.probs, "Simplex()")
        else:
            logits = _as_tensor(logits)
            if logits.ndim < 1:
                raise ValueError("Categorical: logits must have at least one dimension")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = F.softmax(self.logits, dim=-1)
        self._num_events = self.probs.shape[-1]
        self._validate = validate_args is not False
        super().__init__(self.probs.shape[:-1])

    @property
    def param_shape(self) -> tuple:
        """The shape of `probs` (batch_shape + (K,))."""
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        """NaN, as PyTorch's (a category has no mean)."""
        return creation.full(self.batch_shape, math.nan, dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        """NaN, as PyTorch's."""
        return self.mean

    def sample(self, sample_shape=()) -> Tensor:
        """int64 categories of shape `sample_shape + batch_shape`.

        >>> import tapegrad.compat.torch as torch
        >>> from tapegrad.compat.torch.distributions import Categorical
        >>> Categorical(torch.tensor([[0.0, 1.0], [1.0, 0.0]])).sample((3,)).tolist()
        [[1, 0], [1, 0], [1, 0]]
        """
        shape = _shape(sample_shape)
        n = int(np.prod(shape)) if shape else 1
        with no_grad():
            flat = self.probs.detach().reshape(-1, self._num_events)
            draws = multinomial(flat, n, replacement=True)  # (batch, n)
            return draws.T.reshape(shape + self.batch_shape)

    def log_prob(self, value) -> Tensor:
        """log P(value), broadcast against the batch (differentiable in the parameters)."""
        value = _as_tensor(value).long()
        if self._validate and not bool(((value >= 0) & (value < self._num_events)).all().item()):
            raise ValueError(
                f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within "
                f"the support (IntegerInterval(lower_bound=0, upper_bound="
                f"{self._num_events - 1})) of the distribution {self!r}, but found invalid "
                f"values:\n{value}"
            )
        shape = np.broadcast_shapes(tuple(value.shape) + (1,), tuple(self.logits.shape))
        logits = self.logits.expand(shape)
        index = value.unsqueeze(-1).expand(shape[:-1] + (1,))
        return logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum(p log p) over the categories."""
        floor = float(np.finfo(self.logits.dtype).min)
        return -(self.probs * _ew.clamp(self.logits, min=floor)).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """0 .. K-1 (broadcast over the batch when `expand`), as PyTorch's."""
        values = creation.arange(self._num_events).reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + self.batch_shape) if expand else values

    def __repr__(self) -> str:
        return f"Categorical(probs: {tuple(self.probs.shape)}, logits: {tuple(self.logits.shape)})"


class Normal(Distribution):
    """The normal distribution with mean `loc` and standard deviation `scale` (> 0),
    broadcast together into the batch shape.

    >>> import tapegrad.compat.torch as torch
    >>> from tapegrad.compat.torch.distributions import Normal
    >>> Normal(torch.tensor(0.0), torch.tensor(1.0)).log_prob(torch.tensor(0.0))
    tensor(-0.9189)
    """

    def __init__(self, loc, scale, validate_args=None) -> None:
        loc, scale = _as_tensor(loc), _as_tensor(scale)
        shape = np.broadcast_shapes(tuple(loc.shape), tuple(scale.shape))
        self.loc, self.scale = loc.expand(shape), scale.expand(shape)
        super().__init__(shape)
        if validate_args is not False and not bool((scale > 0).all().item()):
            raise self._invalid("parameter scale", scale, "GreaterThan(lower_bound=0.0)")

    @property
    def mean(self) -> Tensor:
        """`loc`."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """`loc`."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """`scale`."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """`scale ** 2`."""
        return self.scale**2

    def rsample(self, sample_shape=()) -> Tensor:
        """`loc + scale * eps`, eps standard normal: differentiable in loc and scale."""
        eps = creation.randn(*self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        """The log density at `value`."""
        value = _as_tensor(value)
        return (
            -((value - self.loc) ** 2) / (2 * self.variance)
            - self.scale.log()
            - math.log(math.sqrt(2 * math.pi))
        )

    def entropy(self) -> Tensor:
        """`0.5 + 0.5 log(2 pi) + log(scale)`."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value) -> Tensor:
        """P(X <= value)."""
        return 0.5 * (1 + ((_as_tensor(value) - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value) -> Tensor:
        """The `value`-quantile."""
        return self.loc + self.scale * (2 * _as_tensor(value) - 1).erfinv() * math.sqrt(2)

    def __repr__(self) -> str:
        def part(t):
            return f"{t.item()}" if t.ndim == 0 else f"{tuple(t.shape)}"

        return f"Normal(loc: {part(self.loc)}, scale: {part(self.scale)})"


def _submodule(leaf: str, names: dict[str, Any]) -> types.ModuleType:
    full = f"{__name__}.{leaf}"
    module = types.ModuleType(full, f"`torch.distributions.{leaf}`.")
    vars(module).update(names)
    sys.modules[full] = module  # (`from torch.distributions.normal import Normal`)
    return module


categorical = _submodule("categorical", {"Categorical": Categorical})
normal = _submodule("normal", {"Normal": Normal})
distribution = _submodule("distribution", {"Distribution": Distribution})


def __getattr__(name: str):
    raise unsupported(
        "the PyTorch facade (torch.distributions)",
        name,
        "only Categorical and Normal are provided",
    )
