"""Comparisons, logical and bitwise ops, `//` and `%`.

Comparisons give bool tensors and never join a graph; `==` returns a tensor (Tensor stays
hashable by identity). `remainder` (`%`) is the one differentiable op here: d/dx = 1 and
d/dy = -floor(x / y), as in PyTorch; `floor_divide` (`//`) is not differentiable.

    >>> (tg.tensor([1.0, 2.0, 3.0]) > 1.5).tolist()
    [False, True, True]
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .registry import defop, note_values_read


# Internal ops carry NumPy's names (rules call xp.equal, xp.logical_and, ...); the public
# functions below carry PyTorch's. Comparisons and logic never join a graph.
@defop(differentiable=False)
def _equal(xp, x, y):
    """x == y"""
    return x == y


@defop(differentiable=False)
def _not_equal(xp, x, y):
    """x != y"""
    return x != y


@defop(differentiable=False)
def _less(xp, x, y):
    """x < y"""
    return x < y


@defop(differentiable=False)
def _less_equal(xp, x, y):
    """x <= y"""
    return x <= y


@defop(differentiable=False)
def _greater(xp, x, y):
    """x > y"""
    return x > y


@defop(differentiable=False)
def _greater_equal(xp, x, y):
    """x >= y"""
    return x >= y


@defop(differentiable=False)
def _logical_and(xp, x, y):
    """x and y"""
    return xp.logical_and(x, y)


@defop(differentiable=False)
def _logical_or(xp, x, y):
    """x or y"""
    return xp.logical_or(x, y)


@defop(differentiable=False)
def _logical_xor(xp, x, y):
    """x xor y"""
    return xp.logical_xor(x, y)


@defop(differentiable=False)
def _bitwise_and(xp, x, y):
    """x & y"""
    return xp.bitwise_and(x, y)


@defop(differentiable=False)
def _bitwise_or(xp, x, y):
    """x | y"""
    return xp.bitwise_or(x, y)


@defop(differentiable=False)
def _bitwise_xor(xp, x, y):
    """x ^ y"""
    return xp.bitwise_xor(x, y)


def _integer_division(xp, what, fn, x, y):
    """`fn(x, y)` (floor_divide, remainder); an integer division by zero is refused, as in
    PyTorch (NumPy returns 0), and a float one gives inf/nan without a warning."""
    kind = getattr(x, "dtype", np.dtype(type(x))).kind + getattr(y, "dtype", np.dtype(type(y))).kind
    if "f" not in kind and "c" not in kind and not xp.all(y != 0):
        raise RuntimeError(
            f"ZeroDivisionError: {what}: integer division by zero; make the divisor non-zero, "
            "or divide as floats (x.float())"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return fn(x, y)


@defop(differentiable=False)
def _floor_divide(xp, x, y):
    """floor(x / y)"""
    return _integer_division(xp, "floor_divide", xp.floor_divide, x, y)


@defop(differentiable=False)
def _logical_not(xp, x):
    """not x"""
    return xp.logical_not(x)


@defop(differentiable=False)
def _invert(xp, x):
    """~x"""
    return xp.invert(x)


@defop(differentiable=False)
def _isnan(xp, x):
    """x is NaN"""
    return xp.isnan(x)


@defop(differentiable=False)
def _isinf(xp, x):
    """x is +-inf"""
    return xp.isinf(x)


@defop(differentiable=False)
def _isfinite(xp, x):
    """x is neither inf nor NaN"""
    return xp.isfinite(x)


@defop(differentiable=False, name="isclose")
def _isclose(xp, x, y, *, rtol=1e-05, atol=1e-08, equal_nan=False):
    return xp.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)


@defop(saves=("x", "y"), name="remainder")
def _remainder(xp, x, y):
    # the sign of the divisor, as Python and PyTorch
    return _integer_division(xp, "remainder", xp.remainder, x, y)


@_remainder.vjp
def _(xp, g, x, y, needs):
    return (g if needs[0] else None), (-g * xp.floor_divide(x, y) if needs[1] else None)


@_remainder.sample
def _remainder_samples(rng):
    def divisor(shape):
        return np.asarray(rng.uniform(1.3, 2.2, shape) * rng.choice([-1.0, 1.0], shape))

    return [
        ((rng.uniform(-4, 4, (3, 4)), divisor((3, 4))), {}),
        ((rng.uniform(-4, 4, (2, 3)), divisor((3,))), {}),
        ((rng.uniform(-4, 4, ()), divisor(())), {}),
        ((rng.uniform(-4, 4, (4,)), 1.7), {}),
    ]


_remainder.reference(lambda torch, x, y: torch.remainder(x, y))


@defop(saves=("x", "y"), name="fmod")
def _fmod(xp, x, y):
    # C's fmod, computed exactly by NumPy (x - trunc(x / y) * y loses the low digits once
    # |x / y| is large, and makes an int result float)
    return _integer_division(xp, "fmod", xp.fmod, x, y)


@_fmod.vjp
def _(xp, g, x, y, needs):
    if not needs[1]:
        return g, None
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = xp.trunc(x / y)
    return (g if needs[0] else None), -g * quotient


_fmod.sample(_remainder_samples)
_fmod.reference(lambda torch, x, y: torch.fmod(x, y))


# ------------------------------------------------------------ public functions
def eq(input, other):
    """Elementwise input == other (a bool tensor)."""
    return _equal(input, other)


def ne(input, other):
    """Elementwise input != other."""
    return _not_equal(input, other)


def lt(input, other):
    """Elementwise input < other."""
    return _less(input, other)


def le(input, other):
    """Elementwise input <= other."""
    return _less_equal(input, other)


def gt(input, other):
    """Elementwise input > other."""
    return _greater(input, other)


def ge(input, other):
    """Elementwise input >= other."""
    return _greater_equal(input, other)


def logical_and(input, other):
    """Elementwise logical and of the truth values (any dtype) -> bool."""
    return _logical_and(input, other)


def logical_or(input, other):
    """Elementwise logical or -> bool."""
    return _logical_or(input, other)


def logical_xor(input, other):
    """Elementwise logical xor -> bool."""
    return _logical_xor(input, other)


def logical_not(input):
    """Elementwise logical not -> bool."""
    return _logical_not(input)


def isnan(input):
    """Where input is NaN."""
    return _isnan(input)


def isinf(input):
    """Where input is +inf or -inf."""
    return _isinf(input)


def isfinite(input):
    """Where input is neither inf nor NaN."""
    return _isfinite(input)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (a bool tensor)."""
    return _isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when every element of `input` is close to `other` (see isclose).

    >>> tg.allclose(tg.tensor([1.0]), tg.tensor([1.0 + 1e-9]))
    True
    """
    note_values_read("allclose", input, other)
    return bool(_isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)._data.all())


def equal(input, other) -> bool:
    """True when both tensors have the same shape and the same elements (PyTorch's
    torch.equal; for the elementwise comparison use eq)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    note_values_read("equal", input, other)
    return bool(_equal(input, other)._data.all())


def floor_divide(input, other):
    """floor(input / other), elementwise (`//`); not differentiable."""
    return _floor_divide(input, other)


def remainder(input, other):
    """input - floor(input / other) * other (`%`), with the sign of `other`. Differentiable."""
    return _remainder(input, other)


def fmod(input, other):
    """input - trunc(input / other) * other, with the sign of `input` (C's fmod); an int
    result for int inputs. Differentiable: d/dx = 1, d/dy = -trunc(x / y), as in PyTorch."""
    return _fmod(input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
__all__ = [
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isnan",
    "isinf",
    "isfinite",
    "isclose",
    "allclose",
    "equal",
    "floor_divide",
    "remainder",
    "fmod",
]


# ------------------------------------------------------------ operators and methods
def _comparison(op, reflected):
    def method(self, other):
        if other is None:  # t == None is False, t != None True (as in PyTorch)
            return op is _not_equal
        if isinstance(other, (str, bytes)):
            return NotImplemented
        return op(self, other)

    method.__name__ = reflected
    return method


def _check_bitwise(what, *ts):
    for t in ts:
        dt = t.dtype if isinstance(t, Tensor) else np.result_type(t)
        if dt.kind not in "biu" and not isinstance(t, bool):
            raise TypeError(
                f"{what} is only defined for bool and integer tensors, got {dt}; for a "
                "float mask compare first (x > 0) or use logical_and/logical_or"
            )


def _bitwise(op, symbol, reverse=False):
    def method(self, other):
        _check_bitwise(f"'{symbol}'", self, other)
        return op(other, self) if reverse else op(self, other)

    return method


def _invert_method(self):
    _check_bitwise("'~'", self)
    return _invert(self)
