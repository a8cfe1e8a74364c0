"""Dirichlet(concentration): distributions over the simplex."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._special import digamma, lgamma
from .distribution import Distribution
from .gamma import standard_gamma_rsample
from .utils import _as_tensor, from_numpy, rng

__all__ = ["Dirichlet"]


def _dirichlet_mode(c: Tensor) -> Tensor:
    """PyTorch's mode: (c - 1)+ normalized; where every c < 1, the one-hot of the largest."""
    import tapegrad as tg
    import tapegrad.nn.functional as F

    cm1 = (c - 1).clamp(min=0)
    mode = cm1 / cm1.sum(-1, keepdim=True)
    all_small = (c < 1).all(-1, keepdim=True)
    corner = F.one_hot(c.argmax(-1), int(c.shape[-1])).to(c.dtype)
    return tg.where(all_small, corner, mode)


class Dirichlet(Distribution):
    """The Dirichlet distribution: K-vectors on the simplex, event_shape (K,).

    `rsample` normalizes reparameterized gamma draws (see Gamma), so it is differentiable
    in the concentration; its gradients are unbiased but, draw by draw, not PyTorch's.

    >>> from tapegrad.distributions import Dirichlet
    >>> d = Dirichlet(tg.tensor([1.0, 2.0, 3.0]))
    >>> d.log_prob(tg.tensor([0.2, 0.3, 0.5])), d.mean
    (tensor(1.5041), tensor([0.1667, 0.3333, 0.5   ]))
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        c = _as_tensor(concentration)
        if c.ndim < 1:
            raise ValueError(
                "Dirichlet: `concentration` parameter must be at least one-dimensional."
            )
        self.concentration = c
        super().__init__(tuple(c.shape[:-1]), tuple(c.shape[-1:]), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """concentration normalized over the last dimension."""
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """The density's maximum, (c - 1) / (sum(c) - k) where every c > 1."""
        return _dirichlet_mode(self.concentration)

    @property
    def variance(self) -> Tensor:
        """c (c0 - c) / (c0^2 (c0 + 1)), c0 = sum(c)."""
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0**2 * (c0 + 1))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        c = np.broadcast_to(np.asarray(self.concentration.detach().numpy(), np.float64), shape)
        g = rng().standard_gamma(c)
        tiny = np.finfo(np.dtype(self.concentration.dtype)).tiny
        g = np.maximum(g, tiny)
        return from_numpy(g / g.sum(-1, keepdims=True), self.concentration)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """A draw on the simplex differentiable in the concentration (through gamma draws).

        >>> from tapegrad.distributions import Dirichlet
        >>> Dirichlet(tg.ones(3, requires_grad=True)).rsample((2,)).shape
        (2, 3)
        """
        g = standard_gamma_rsample(self.concentration, self._extended_shape(sample_shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        import tapegrad as tg

        value = self._value(value)
        c = self.concentration
        return tg.xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        c0 = c.sum(-1)
        return (
            lgamma(c).sum(-1)
            - lgamma(c0)
            - (k - c0) * digamma(c0)
            - ((c - 1.0) * digamma(c)).sum(-1)
        )
