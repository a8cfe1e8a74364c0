"""MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import constraints
from ._linalg import _mT, cholesky, solve_lower
from .distribution import Distribution
from .utils import _as_tensor, from_numpy, lazy_property, rng

__all__ = ["MultivariateNormal"]


class MultivariateNormal(Distribution):
    """The Gaussian on vectors of size k (event_shape (k,)), given exactly one of the
    covariance matrix, its inverse (the precision) or its lower Cholesky factor;
    reparameterized through the factor.

    >>> from tapegrad.distributions import MultivariateNormal
    >>> d = MultivariateNormal(tg.zeros(2), covariance_matrix=tg.tensor([[2.0, 0.5], [0.5, 1.0]]))
    >>> d.log_prob(tg.tensor([1.0, -1.0])), d.entropy()
    (tensor(-3.2605), tensor(3.1177))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Any,
        covariance_matrix: Any = None,
        precision_matrix: Any = None,
        scale_tril: Any = None,
        validate_args: bool | None = None,
    ) -> None:
        loc = _as_tensor(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        name = ("covariance_matrix", "precision_matrix", "scale_tril")[given.index(True)]
        matrix = _as_tensor(
            (covariance_matrix, precision_matrix, scale_tril)[given.index(True)], loc
        )
        if matrix.ndim < 2:
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading "
                "batch dimensions"
            )
        batch = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        k = int(loc.shape[-1])
        setattr(self, name, matrix.expand(*batch, k, k))
        self.loc = loc.expand(*batch, k)
        super().__init__(batch, (k,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix.tril()  # the upper part is never read
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            import tapegrad as tg

            cov = tg.linalg.inv(matrix)
            self._unbroadcasted_scale_tril = cholesky(0.5 * (cov + _mT(cov)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_unbroadcasted_scale_tril"] = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The lower Cholesky factor of the covariance."""
        low = self._unbroadcasted_scale_tril
        return low.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """scale_tril @ scale_tril^T."""
        low = self._unbroadcasted_scale_tril
        cov = low @ _mT(low)
        return cov.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """The inverse of the covariance."""
        import tapegrad as tg

        low = self._unbroadcasted_scale_tril
        inv = tg.linalg.inv(low)
        prec = _mT(inv) @ inv
        return prec.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def mean(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """loc."""
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The diagonal of the covariance matrix."""
        var = (self._unbroadcasted_scale_tril**2).sum(-1)
        return var.expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = from_numpy(rng().standard_normal(shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        value = self._value(value)
        diff = (value - self.loc).unsqueeze(-1)
        m = (solve_lower(self._unbroadcasted_scale_tril, diff).squeeze(-1) ** 2).sum(-1)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self._batch_shape) if self._batch_shape else h
