"""Constraints: the sets parameters and values live in (`torch.distributions.constraints`).

A constraint's `check(value)` is a bool tensor: True where `value` satisfies it, reduced
over the constraint's `event_dim` rightmost dimensions.

>>> from tapegrad.distributions import constraints
>>> constraints.positive.check(tg.tensor([1.0, -1.0]))
tensor([ True, False])
>>> constraints.positive
GreaterThan(lower_bound=0.0)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Constraint",
    "boolean",
    "dependent",
    "greater_than",
    "greater_than_eq",
    "half_open_interval",
    "independent",
    "integer_interval",
    "interval",
    "less_than",
    "lower_cholesky",
    "lower_triangular",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "positive_integer",
    "real",
    "real_vector",
    "simplex",
    "unit_interval",
]


def _tensor(value: Any):
    from ..tensor import Tensor

    if isinstance(value, Tensor):
        return value.detach()
    from .. import tensor as make

    return make(value)


def _all_last(ok, dims: int):
    """Reduce a bool tensor over its `dims` rightmost dimensions."""
    for _ in range(dims):
        ok = ok.all(-1)
    return ok


class Constraint:
    """A set a distribution's parameter or value must lie in.

    `is_discrete` says whether the set is countable, `event_dim` how many rightmost
    dimensions make up one element (1 for a simplex, 2 for a matrix).

    >>> from tapegrad.distributions import constraints
    >>> constraints.unit_interval.check(tg.tensor(0.5))
    tensor(True)
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Any):
        """A bool tensor: True where `value` satisfies the constraint."""
        raise NotImplementedError

    def _args(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__.lstrip('_')}({self._args()})"


class _Real(Constraint):
    def check(self, value: Any):
        x = _tensor(value)
        return x == x  # False at NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any):
        x = _tensor(value)
        return (x == 0) | (x == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any):
        x = _tensor(value)
        is_bool = _all_last((x == 0) | (x == 1), 1)
        return is_bool & (x.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Any):
        x = _tensor(value)
        return (x % 1 == 0) & (x >= self.lower_bound) & (x <= self.upper_bound)

    def _args(self) -> str:
        return f"lower_bound={self.lower_bound}, upper_bound={self.upper_bound}"


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any):
        x = _tensor(value)
        return (x % 1 == 0) & (x >= self.lower_bound)

    def _args(self) -> str:
        return f"lower_bound={self.lower_bound}"


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any):
        return _tensor(value) > self.lower_bound

    def _args(self) -> str:
        return f"lower_bound={self.lower_bound}"


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any):
        return _tensor(value) >= self.lower_bound


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any):
        return _tensor(value) < self.upper_bound

    def _args(self) -> str:
        return f"upper_bound={self.upper_bound}"


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value: Any):
        x = _tensor(value)
        return (x >= self.lower_bound) & (x <= self.upper_bound)

    def _args(self) -> str:
        return f"lower_bound={self.lower_bound}, upper_bound={self.upper_bound}"


class _HalfOpenInterval(_Interval):
    def check(self, value: Any):
        x = _tensor(value)
        return (x >= self.lower_bound) & (x < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any):
        x = _tensor(value)
        return _all_last(x >= 0, 1) & ((x.sum(-1) - 1).abs() < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Any):
        x = _tensor(value)
        return _all_last(x.tril() == x, 2)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any):
        x = _tensor(value)
        lower = _all_last(x.tril() == x, 2)
        return lower & _all_last(x.diagonal(0, -2, -1) > 0, 1)


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value: Any):
        import numpy as np

        from ..tensor import _wrap

        x = np.asarray(_tensor(value).numpy())
        symmetric = np.all(np.abs(x - np.swapaxes(x, -1, -2)) <= 1e-6 * (1 + np.abs(x)), (-2, -1))
        # symmetric with positive eigenvalues (eigvalsh reads the lower triangle only)
        with np.errstate(all="ignore"):
            finite = np.all(np.isfinite(x), (-2, -1))
            safe = np.where(finite[..., None, None], x, 0.0)
            positive = np.all(np.linalg.eigvalsh(safe) > 0, -1)
        return _wrap(np.asarray(symmetric & positive & finite), 0)


class _IndependentConstraint(Constraint):
    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any):
        return _all_last(self.base_constraint.check(value), self.reinterpreted_batch_ndims)

    def _args(self) -> str:
        return f"{self.base_constraint!r}, {self.reinterpreted_batch_ndims}"


def independent(base_constraint: Constraint, reinterpreted_batch_ndims: int) -> Constraint:
    """`base_constraint` over the `reinterpreted_batch_ndims` rightmost dimensions at once.

    >>> from tapegrad.distributions import constraints
    >>> constraints.independent(constraints.positive, 1).check(tg.tensor([[1.0, 2.0], [1.0, -1.0]]))
    tensor([ True, False])
    """
    return _IndependentConstraint(base_constraint, reinterpreted_batch_ndims)


def interval(lower_bound: Any, upper_bound: Any) -> Constraint:
    """The closed interval [lower_bound, upper_bound].

    >>> from tapegrad.distributions import constraints
    >>> constraints.interval(0, 2).check(tg.tensor([1.0, 3.0]))
    tensor([ True, False])
    """
    return _Interval(lower_bound, upper_bound)


def half_open_interval(lower_bound: Any, upper_bound: Any) -> Constraint:
    """The interval [lower_bound, upper_bound).

    >>> from tapegrad.distributions import constraints
    >>> constraints.half_open_interval(0, 1).check(tg.tensor([0.0, 1.0]))
    tensor([ True, False])
    """
    return _HalfOpenInterval(lower_bound, upper_bound)


def integer_interval(lower_bound: Any, upper_bound: Any) -> Constraint:
    """The integers lower_bound, ..., upper_bound.

    >>> from tapegrad.distributions import constraints
    >>> constraints.integer_interval(0, 3).check(tg.tensor([1.0, 1.5, 4.0]))
    tensor([ True, False, False])
    """
    return _IntegerInterval(lower_bound, upper_bound)


def greater_than(lower_bound: Any) -> Constraint:
    """The reals above `lower_bound` (exclusive).

    >>> from tapegrad.distributions import constraints
    >>> constraints.greater_than(1.0).check(tg.tensor([1.0, 2.0]))
    tensor([False,  True])
    """
    return _GreaterThan(lower_bound)


def greater_than_eq(lower_bound: Any) -> Constraint:
    """The reals from `lower_bound` on (inclusive).

    >>> from tapegrad.distributions import constraints
    >>> constraints.greater_than_eq(1.0).check(tg.tensor([1.0, 0.0]))
    tensor([ True, False])
    """
    return _GreaterThanEq(lower_bound)


def less_than(upper_bound: Any) -> Constraint:
    """The reals below `upper_bound` (exclusive).

    >>> from tapegrad.distributions import constraints
    >>> constraints.less_than(1.0).check(tg.tensor([0.0, 1.0]))
    tensor([ True, False])
    """
    return _LessThan(upper_bound)


real = _Real()
real_vector = independent(real, 1)
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()


class _Dependent(Constraint):
    """A constraint that depends on other parameters (Uniform's bounds): never checked."""

    def check(self, value: Any):
        raise ValueError("Cannot determine validity of dependent constraint")


dependent = _Dependent()
