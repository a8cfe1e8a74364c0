"""Arithmetic ops: add sub mul div pow neg, and the Python operators built on them."""

from __future__ import annotations

import math

import numpy as np

from .quiet import quiet
from .registry import defop
from .xp import plus_tangents


def _pair(rng, shape_a=(3, 4), shape_b=(3, 4)):
    return rng.standard_normal(shape_a), rng.standard_normal(shape_b)


def _binary_samples(rng, positive_b=False):
    def b(shape):
        x = rng.standard_normal(shape)
        return abs(x) + 0.5 if positive_b else x

    return [
        ((rng.standard_normal((3, 4)), b((3, 4))), {}),
        ((rng.standard_normal((2, 3, 4)), b((4,))), {}),  # broadcasting
        ((rng.standard_normal((3, 1)), b((1, 4))), {}),  # both broadcast
        (
            (
                rng.standard_normal(()),
                b(()),
            ),
            {},
        ),  # 0-d
        ((rng.standard_normal((3,)), 1.5), {}),  # Python scalar on the right
        ((2.5, b((3,))), {}),  # and on the left
    ]


def _wrapped_int(x, y):
    """A Python int out of an integer array's range, wrapped to its dtype as PyTorch does
    (uint8 + 300 is uint8 + 44); NumPy 2 raises OverflowError instead."""
    if type(y) is int and hasattr(x, "dtype"):
        return np.array(y).astype(x.dtype)
    return y


@defop(name="add", ufunc=np.add)
def _add(xp, x, y):
    try:
        return x + y
    except OverflowError:
        return _wrapped_int(y, x) + _wrapped_int(x, y)


@_add.vjp
def _(xp, g):
    return g, g


@_add.jvp
def _(xp, tangents, *, out):
    return plus_tangents(*tangents)


_add.sample(_binary_samples)


@defop(name="sub", ufunc=np.subtract)
def _sub(xp, x, y):
    try:
        return x - y
    except OverflowError:
        return _wrapped_int(y, x) - _wrapped_int(x, y)


@_sub.vjp
def _(xp, g, needs):
    return g, (-g if needs[1] else None)


@_sub.jvp
def _(xp, tangents, *, out):
    ta, tb = tangents
    return plus_tangents(ta, None if tb is None else -tb)


_sub.sample(_binary_samples)


@defop(saves=("x", "y"), name="mul", ufunc=np.multiply)
def _mul(xp, x, y):
    try:
        return x * y
    except OverflowError:
        return _wrapped_int(y, x) * _wrapped_int(x, y)


@_mul.vjp
def _(xp, g, x, y, needs):
    return (g * y if needs[0] else None), (g * x if needs[1] else None)


@_mul.jvp
def _(xp, tangents, x, y, *, out):
    ta, tb = tangents
    return plus_tangents(None if ta is None else ta * y, None if tb is None else x * tb)


# each factor only serves the other's gradient: `x * 2` keeps nothing of x (as PyTorch), so a
# chain of products holds no intermediate tensors alive and `y = x * c; x += 1` stays legal
_mul.saves_only_for(x=(1,), y=(0,))
_mul.sample(_binary_samples)


@defop(saves=("x", "y"), name="div", ufunc=np.true_divide)
def _div(xp, x, y):
    with quiet():  # 1 / 0 = inf, 0 / 0 = nan silently
        return x / y


@_div.vjp
def _(xp, g, x, y, needs):
    gx = g / y
    return (gx if needs[0] else None), (-gx * (x / y) if needs[1] else None)


@_div.jvp
def _(xp, tangents, x, y, *, out):
    ta, tb = tangents
    return plus_tangents(None if ta is None else ta / y, None if tb is None else -tb * out / y)


_div.sample(lambda rng: _binary_samples(rng, positive_b=True))
# as PyTorch: the dividend is kept only for the divisor's gradient, and the output never, so
# `y = x / 2; y += 1` and `y = 2 / x; y += 1` stay differentiable
_div.saves_only_for(x=(1,))


@defop(name="neg")
def _neg(xp, x):
    return -x


@_neg.vjp
def _(xp, g):
    return (-g,)


@_neg.jvp
def _(xp, tangents, *, out):
    return -tangents[0]


_neg.sample(lambda rng: [((rng.standard_normal((3, 4)),), {})])


@defop(saves=("x", "y", "out"), name="pow")
def _pow(xp, x, y):
    if getattr(x, "dtype", None) == np.bool_:
        if type(y) is bool or getattr(y, "dtype", None) == np.bool_:
            raise TypeError("pow: not implemented for bool ** bool; convert one to int first")
        x = x.astype(np.int64)  # bool ** int is int64, as in PyTorch (NumPy gives int8)
    elif type(x) is bool and getattr(y, "dtype", None) == np.bool_:
        y = y.astype(np.int64)
    with quiet():  # 0 ** -1 = inf, (-1) ** 0.5 = nan silently, as PyTorch
        return x**y


@_pow.vjp
def _(xp, g, x, y, out, needs):
    gx = None
    if needs[0]:  # 0 where the exponent is 0 (x ** -1 at x = 0 would make it NaN)
        if hasattr(y, "shape"):
            gx = g * xp.where(y == 0, 0.0, y * x ** (y - 1))
        else:
            gx = g * y * x ** (y - 1) if y != 0 else g * (x * 0.0)
    # d/dy x**y = x**y * log(x); where x == 0 and y >= 0 the limit is 0 (as PyTorch defines
    # it), where x == 0 and y < 0 it is inf * -inf = -inf (PyTorch's value, not NaN)
    gy = None
    if needs[1]:
        with quiet():
            if hasattr(x, "shape"):  # log of a negative base is NaN, as in PyTorch
                zero_base = x == 0
                if hasattr(y, "shape"):
                    zero_base = zero_base & (y >= 0)
                # the 0.0 makes an int base's log float64 (NumPy's log of uint8 is float16)
                gy = g * xp.where(zero_base, 0.0, out * xp.log(xp.where(x == 0, 0.0, x)))
            elif x == 0:  # a Python scalar base
                gy = g * xp.where(y >= 0, 0.0, out * -math.inf)
            else:
                gy = g * out * (math.log(x) if x > 0 else math.nan)
    return gx, gy


_pow.saves_only_for(out=(1,))  # the output only serves the exponent's gradient


@_pow.sample
def _(rng):
    pos = lambda s: abs(rng.standard_normal(s)) + 0.5  # noqa: E731
    return [
        ((pos((3, 4)), pos((3, 4))), {}),
        ((rng.standard_normal((3, 4)), 3), {}),  # integer power of any sign
        ((rng.standard_normal((3,)), 2.0), {}),
        ((pos((2, 3)), pos((3,))), {}),
        ((2.0, rng.standard_normal((3,))), {}),  # scalar base
    ]


def add(input, other, *, alpha=1):
    """input + alpha * other, broadcasting."""
    return _add(input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1):
    """input - alpha * other, broadcasting."""
    return _sub(input, other if alpha == 1 else other * alpha)


def mul(input, other):
    """input * other, elementwise with broadcasting (`multiply` is the same function)."""
    return _mul(input, other)


def div(input, other, *, rounding_mode=None):
    """input / other; rounding_mode 'floor' or 'trunc' gives a non-differentiable integer-like
    result."""
    if rounding_mode is None:
        return _div(input, other)
    if _integral(input) and _integral(other) and rounding_mode in ("floor", "trunc"):
        # integers stay integers, as in PyTorch (the float quotient gave float32)
        from .compare import floor_divide, fmod

        if rounding_mode == "floor":
            return floor_divide(input, other)
        return floor_divide(input - fmod(input, other), other)  # exact: the rest is 0
    from .elementwise import floor, trunc

    q = _div(input, other)
    return floor(q) if rounding_mode == "floor" else trunc(q)


def _integral(a):
    """An integer or bool tensor, or a Python int (bool included)."""
    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return isinstance(a, int)
    return np.dtype(dtype).kind in "iub"


def neg(input):
    """-input, elementwise (`negative` is the same function)."""
    return _neg(input)


def pow(input, exponent):  # noqa: A001
    """input ** exponent, elementwise with broadcasting; either may be a Python number."""
    return _pow(input, exponent)


multiply, divide, subtract, negative, true_divide = mul, div, sub, neg, div
__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "pow",
    "multiply",
    "divide",
    "subtract",
    "negative",
    "true_divide",
]


_add.reference(lambda torch, x, y: x + y)
_sub.reference(lambda torch, x, y: x - y)
_mul.reference(lambda torch, x, y: x * y)
_div.reference(lambda torch, x, y: x / y)
_neg.reference(lambda torch, x: -x)
_pow.reference(lambda torch, x, y: x**y)
