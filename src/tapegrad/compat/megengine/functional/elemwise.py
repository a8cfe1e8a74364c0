"""`mge.functional.elemwise`: MegEngine's elementwise functions under their own names and
signatures (`F.elemwise.add(x, y)`, `F.elemwise.clip(x, lower, upper)`), each also at
`F`'s top level. `round` rounds halves away from zero, as MegEngine's ROUND kernel does
(its documented examples: 2.5 -> 3, 4.5 -> 5), where PyTorch and NumPy round to even.

    >>> import tapegrad.compat.megengine.functional as F
    >>> F.elemwise.round(mge.tensor([0.5, 1.5, 2.5, -2.5])).numpy().tolist()
    [1.0, 2.0, 3.0, -3.0]
    >>> f"{F.elemwise.logaddexp(mge.tensor(0.0), mge.tensor(0.0)).item():.4f}"  # log 2
    '0.6931'
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "abs",
    "add",
    "acos",
    "asin",
    "atan",
    "atan2",
    "asinh",
    "acosh",
    "atanh",
    "ceil",
    "clip",
    "cos",
    "cosh",
    "div",
    "equal",
    "exp",
    "expm1",
    "floor",
    "floor_div",
    "greater",
    "greater_equal",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "logaddexp",
    "maximum",
    "minimum",
    "mod",
    "mul",
    "neg",
    "not_equal",
    "pow",
    "right_shift",
    "round",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "sub",
    "tan",
    "tanh",
]


def _tg():
    import tapegrad

    return tapegrad


def _t(x):
    """A Python number or array as an mge.Tensor (MegEngine's functions take both)."""
    from .._tensor import Tensor, tensor

    return x if isinstance(x, _tg().Tensor) else tensor(x) if not isinstance(x, Tensor) else x


def _binary(x, y):
    # one operand may be a Python number; tapegrad's ops take that as a scalar
    return (_t(x), y) if not isinstance(y, _tg().Tensor) else (x, y)


def add(x, y):
    """x + y."""
    return _tg().add(*_binary(x, y))


def sub(x, y):
    """x - y."""
    return _tg().sub(*_binary(x, y))


def mul(x, y):
    """x * y."""
    return _tg().mul(*_binary(x, y))


def div(x, y):
    """True division x / y (float even for integer operands)."""
    return _tg().true_divide(*_binary(x, y))


def floor_div(x, y):
    """Floor division x // y."""
    return _tg().floor_divide(*_binary(x, y))


def mod(x, y):
    """Remainder with the divisor's sign (Python's %)."""
    return _tg().remainder(*_binary(x, y))


def pow(x, y):  # noqa: A001
    """x ** y."""
    return _tg().pow(*_binary(x, y))


def maximum(x, y):
    """Elementwise maximum."""
    return _tg().maximum(*_binary(x, y))


def minimum(x, y):
    """Elementwise minimum."""
    return _tg().minimum(*_binary(x, y))


def atan2(y, x):
    """The angle of (x, y), in (-pi, pi]."""
    return _tg().atan2(*_binary(y, x))


def logaddexp(x, y):
    """log(exp(x) + exp(y)), without overflow."""
    return _tg().logaddexp(*_binary(x, y))


def equal(x, y):
    """x == y, elementwise."""
    return _tg().eq(*_binary(x, y))


def not_equal(x, y):
    """x != y, elementwise."""
    return _tg().ne(*_binary(x, y))


def less(x, y):
    """x < y."""
    return _tg().lt(*_binary(x, y))


def less_equal(x, y):
    """x <= y."""
    return _tg().le(*_binary(x, y))


def greater(x, y):
    """x > y."""
    return _tg().gt(*_binary(x, y))


def greater_equal(x, y):
    """x >= y."""
    return _tg().ge(*_binary(x, y))


def logical_and(x, y):
    """x and y (booleans)."""
    return _tg().logical_and(*_binary(x, y))


def logical_or(x, y):
    """x or y (booleans)."""
    return _tg().logical_or(*_binary(x, y))


def logical_xor(x, y):
    """x xor y (booleans)."""
    return _tg().logical_xor(*_binary(x, y))


def logical_not(x):
    """not x (booleans)."""
    return _tg().logical_not(_t(x))


def _int_shift(name, x, y):
    x = _t(x)
    if np.dtype(x.dtype).kind not in "iu":
        raise TypeError(f"{name}: shifts take an integer tensor, got {x.dtype}; cast it first")
    return x, _tg().pow(2, y) if isinstance(y, _tg().Tensor) else 2 ** int(y)


def left_shift(x, y):
    """x << y (integers): x * 2**y."""
    x, scale = _int_shift("left_shift", x, y)
    return _tg().mul(x, scale)


def right_shift(x, y):
    """x >> y (integers, arithmetic): floor(x / 2**y)."""
    x, scale = _int_shift("right_shift", x, y)
    return _tg().floor_divide(x, scale)


def clip(x, lower=None, upper=None):
    """x limited to [lower, upper]; either bound may be None, not both."""
    if lower is None and upper is None:
        raise ValueError("clip: give lower, upper or both (both are None)")
    return _tg().clamp(_t(x), lower, upper)


def round(x):  # noqa: A001
    """The nearest integer, halves away from zero (MegEngine's ROUND; not to even)."""
    tg = _tg()
    x = _t(x)
    whole = tg.trunc(x)
    # x - trunc(x) is exact in floating point, so the half test is too (no x + 0.5 rounding)
    up = (tg.abs(x - whole) >= 0.5).astype(x.dtype)
    return whole + tg.sign(x) * up


def _unary(core_name: str, doc: str):
    core = getattr(_tg(), core_name)

    def fn(x):
        return core(_t(x))

    fn.__doc__ = doc
    fn.__wrapped__ = core  # type: ignore[attr-defined]  # the core op inside (as functools.wraps)
    return fn


abs = _unary("abs", "|x|.")  # noqa: A001
neg = _unary("neg", "-x.")
exp = _unary("exp", "e ** x.")
expm1 = _unary("expm1", "e ** x - 1, accurate for small x.")
log = _unary("log", "The natural logarithm.")
log1p = _unary("log1p", "log(1 + x), accurate for small x.")
sqrt = _unary("sqrt", "The square root.")
square = _unary("square", "x * x.")
ceil = _unary("ceil", "The smallest integer not below x.")
floor = _unary("floor", "The largest integer not above x.")
sin = _unary("sin", "The sine (radians).")
cos = _unary("cos", "The cosine (radians).")
tan = _unary("tan", "The tangent (radians).")
asin = _unary("asin", "The inverse sine, in [-pi/2, pi/2].")
acos = _unary("acos", "The inverse cosine, in [0, pi].")
atan = _unary("atan", "The inverse tangent, in [-pi/2, pi/2].")
sinh = _unary("sinh", "The hyperbolic sine.")
cosh = _unary("cosh", "The hyperbolic cosine.")
tanh = _unary("tanh", "The hyperbolic tangent.")
asinh = _unary("asinh", "The inverse hyperbolic sine.")
acosh = _unary("acosh", "The inverse hyperbolic cosine (x >= 1).")
atanh = _unary("atanh", "The inverse hyperbolic tangent (|x| < 1).")
for _name in __all__:  # each defined function under its MegEngine name
    _fn = globals()[_name]
    if _fn.__name__ == "fn":
        _fn.__name__ = _fn.__qualname__ = _name
del _name, _fn
