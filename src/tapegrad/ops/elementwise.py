"""Elementwise ops: unary math, clamp, maximum/minimum, where (activations with parameters
are in activation.py, copies and casts in casting.py).

Each op is one table entry (forward + rule); the public functions below them follow PyTorch
(`clamp(min=, max=)`, `gelu(approximate=)`, `softplus(beta=, threshold=)`). Unary math on an
integer tensor gives the default float dtype, as in PyTorch. `sign floor ceil round trunc`
have a zero gradient (PyTorch's convention); `maximum`/`minimum` split the gradient half
and half where the inputs tie.

    >>> x = tg.tensor([-1.0, 0.5], requires_grad=True)
    >>> tg.clamp(x, min=0).sum().backward(); x.grad
    tensor([0., 1.])
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .registry import apply_inplace, defop
from .xp import array_helper

_LN2 = math.log(2.0)


def _fl(x):
    """Integer and bool arrays become the default float dtype (PyTorch's rule for math ops)."""
    return x if x.dtype.kind not in "iub" else x.astype(dtypes.get_default_dtype())


# ------------------------------------------------------------ erf without SciPy
# |x| < 0.75: the Maclaurin series of erf(x)/x in t = x*x (exact coefficients).
# |x| >= 0.75: erf = 1 - exp(-x*x) * erfcx(|x|), erfcx fitted (Chebyshev interpolation,
# converted to powers) in s = (z - c) / ((z + c) * u), which maps [0.75, top] onto [-1, 1];
# beyond `top`, erf rounds to +-1. float64: relative error < 2e-15 on the whole line;
# float32/float16 use shorter polynomials (error < 2e-8).
def _series(n):
    return tuple(2 / math.sqrt(math.pi) * (-1) ** k / (math.factorial(k) * (2 * k + 1))
                 for k in range(n - 1, -1, -1))


_ERF64 = (_series(15), 2.1213203435596424, 0.47759225007251715, 6.0, (
    -7.717318452922494e-12, 5.410161790434208e-11, 3.8265037329074054e-10,
    -3.096775001069863e-10, -9.042898528904496e-09, -1.5591819489920803e-08,
    1.7708915832248429e-07, 7.12139206463888e-07, -3.917119917494129e-06,
    -2.3516703562651765e-05, 0.00014441064640346237, 0.0006382010492706208,
    -0.010068627414034085, 0.05621383169819681, -0.19715257577994758, 0.24302789671112493,
))
_ERF32 = (_series(9), 1.7320508075688772, 0.39566104149607556, 4.0, (
    -8.596641336566791e-07, 7.114629095195111e-06, 5.177862984040438e-05,
    -0.0002928903329732503, -0.0027290420753256217, 0.03491308006280903,
    -0.18229097321488696, 0.2873412516455932,
))


def _horner(coefs, t):
    acc = t * coefs[0] + coefs[1]
    for c in coefs[2:]:
        acc *= t
        acc += c
    return acc


def _erf_values(xp, x):
    """erf on an array; `xp` is NumPy/CuPy or a rule's array namespace."""
    series, c, u, top, erfcx = _ERF64 if x.dtype.itemsize > 4 else _ERF32
    a = xp.abs(x)
    t = x * x
    near = x * _horner(series, xp.minimum(t, 0.5625))
    z = xp.maximum(xp.minimum(a, top), 0.75)  # NaN stays NaN
    s = (z - c) / ((z + c) * u)
    far = xp.exp(-z * z)
    far *= _horner(erfcx, s)
    far = 1.0 - far
    far *= xp.sign(x)
    return xp.where(a < 0.75, near, far)


def _erf_helper(xp, x):
    return _erf_values(xp, x)


def _sigmoid_values(xp, x):
    with np.errstate(over="ignore"):  # exp(-x) = inf for very negative x gives exactly 0
        return 1.0 / (1.0 + xp.exp(-x))


def _sigmoid_helper(xp, x):
    return _sigmoid_values(xp, x)


# array namespaces get xp.erf / xp.sigmoid; on tensors they are the ops of the same name
_erf_helper.__name__ = "erf"
_sigmoid_helper.__name__ = "sigmoid"
array_helper(_erf_helper)
array_helper(_sigmoid_helper)


# ------------------------------------------------------------ samples shared by unary ops
def _normal(rng, scale=1.0):
    return [((rng.standard_normal((3, 4)) * scale,), {}),
            ((np.asarray(rng.standard_normal(()) * scale),), {}),  # 0-d
            ((rng.standard_normal((2, 1, 3)) * scale,), {})]


def _positive(rng):
    return [((rng.uniform(0.3, 2.5, (3, 4)),), {}), ((rng.uniform(0.3, 2.5, ()),), {})]


def _away_from_zero(rng):
    x = rng.uniform(0.4, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    return [((x,), {}), ((rng.uniform(0.4, 2.0, ()),), {})]


def _unary(name, forward, rule, saves=(), samples=_normal, ref=None, doc=""):
    """Register a one-input op `name` and return its public function."""
    forward.__name__ = name
    op = defop(saves=saves, name=name)(forward)
    op.vjp(rule)
    op.sample(samples)
    op.reference(ref or (lambda torch, x: getattr(torch, name)(x)))

    def public(input):
        return op(input)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc or f"Elementwise {name} of `input` (differentiable)."
    public.op = op
    return public


def _zero_grad(xp, g):
    return (xp.zeros_like(g),)


def _uniform(lo, hi):
    return lambda rng: [((rng.uniform(lo, hi, (3, 4)),), {}), ((rng.uniform(lo, hi, ()),), {})]


def _wide(rng):
    return _normal(rng, 3.0)


exp = _unary("exp", lambda xp, x: xp.exp(_fl(x)), lambda xp, g, out: (g * out,), "out")
expm1 = _unary("expm1", lambda xp, x: xp.expm1(_fl(x)),
               lambda xp, g, out: (g * (out + 1.0),), "out")
log = _unary("log", lambda xp, x: xp.log(_fl(x)), lambda xp, g, x: (g / x,), "x", _positive)
log1p = _unary("log1p", lambda xp, x: xp.log1p(_fl(x)), lambda xp, g, x: (g / (x + 1.0),), "x",
               _uniform(-0.6, 2.0))
log2 = _unary("log2", lambda xp, x: xp.log2(_fl(x)), lambda xp, g, x: (g / (x * _LN2),), "x",
              _positive)
sqrt = _unary("sqrt", lambda xp, x: xp.sqrt(_fl(x)), lambda xp, g, out: (g / (out * 2.0),), "out",
              _positive)
rsqrt = _unary("rsqrt", lambda xp, x: 1.0 / xp.sqrt(_fl(x)),
               lambda xp, g, out: (g * (out * out * out) * -0.5,), "out", _positive)
square = _unary("square", lambda xp, x: x * x, lambda xp, g, x: (g * x * 2.0,), "x")
reciprocal = _unary("reciprocal", lambda xp, x: 1.0 / _fl(x), lambda xp, g, out: (-g * out * out,),
                    "out", _away_from_zero)
sin = _unary("sin", lambda xp, x: xp.sin(_fl(x)), lambda xp, g, x: (g * xp.cos(x),), "x")
cos = _unary("cos", lambda xp, x: xp.cos(_fl(x)), lambda xp, g, x: (-g * xp.sin(x),), "x")
tan = _unary("tan", lambda xp, x: xp.tan(_fl(x)), lambda xp, g, out: (g * (out * out + 1.0),),
             "out", _uniform(-1.2, 1.2))
tanh = _unary("tanh", lambda xp, x: xp.tanh(_fl(x)), lambda xp, g, out: (g * (1.0 - out * out),),
              "out")
sigmoid = _unary("sigmoid", lambda xp, x: _sigmoid_values(xp, _fl(x)),
                 lambda xp, g, out: (g * out * (1.0 - out),), "out")
erf = _unary("erf", lambda xp, x: _erf_values(xp, _fl(x)),
             lambda xp, g, x: (g * xp.exp(-x * x) * (2.0 / math.sqrt(math.pi)),), "x")
abs = _unary("abs", lambda xp, x: xp.abs(x), lambda xp, g, x: (g * xp.sign(x),), "x")  # noqa: A001
relu = _unary("relu", lambda xp, x: xp.maximum(x, 0),
              # a mask product: ~9x faster than where() on large arrays (a NaN gradient at a
              # dead unit stays NaN, where PyTorch's threshold_backward would give 0)
              lambda xp, g, out: (g * (out > 0),), "out")
sign = _unary("sign", lambda xp, x: xp.sign(x), _zero_grad)
floor = _unary("floor", lambda xp, x: xp.floor(x), _zero_grad, samples=_wide)
ceil = _unary("ceil", lambda xp, x: xp.ceil(x), _zero_grad, samples=_wide)
trunc = _unary("trunc", lambda xp, x: xp.trunc(x), _zero_grad, samples=_wide)
_round0 = _unary("round", lambda xp, x: xp.round(x), _zero_grad, samples=_wide)
sigmoid.__doc__ = "1 / (1 + exp(-input)), computed without overflow."

# hyperbolic and inverse trigonometric functions (PyTorch's names; NumPy's arc* aliases below)
@defop(saves="x", name="sinh")
def _sinh(xp, x):
    return xp.sinh(_fl(x))


@_sinh.vjp
def _(xp, g, x):
    return (g * xp.cosh(x),)


@defop(saves="x", name="cosh")
def _cosh(xp, x):
    return xp.cosh(_fl(x))


@_cosh.vjp
def _(xp, g, x):
    return (g * xp.sinh(x),)


@defop(saves="x", name="asin")
def _asin(xp, x):
    return xp.arcsin(_fl(x))


@_asin.vjp
def _(xp, g, x):
    return (g / xp.sqrt(1.0 - x * x),)


@defop(saves="x", name="acos")
def _acos(xp, x):
    return xp.arccos(_fl(x))


@_acos.vjp
def _(xp, g, x):
    return (-g / xp.sqrt(1.0 - x * x),)


@defop(saves="x", name="atan")
def _atan(xp, x):
    return xp.arctan(_fl(x))


@_atan.vjp
def _(xp, g, x):
    return (g / (x * x + 1.0),)


@defop(saves="x", name="asinh")
def _asinh(xp, x):
    return xp.arcsinh(_fl(x))


@_asinh.vjp
def _(xp, g, x):
    return (g / xp.sqrt(x * x + 1.0),)


@defop(saves="x", name="acosh")
def _acosh(xp, x):
    return xp.arccosh(_fl(x))


@_acosh.vjp
def _(xp, g, x):
    return (g / xp.sqrt(x * x - 1.0),)


@defop(saves="x", name="atanh")
def _atanh(xp, x):
    return xp.arctanh(_fl(x))


@_atanh.vjp
def _(xp, g, x):
    return (g / (1.0 - x * x),)


for _op, _samples in ((_sinh, _normal), (_cosh, _normal), (_asin, _uniform(-0.9, 0.9)),
                      (_acos, _uniform(-0.9, 0.9)), (_atan, _wide), (_asinh, _wide),
                      (_acosh, _uniform(1.2, 3.0)), (_atanh, _uniform(-0.9, 0.9))):
    _op.sample(_samples)
    _op.reference(lambda torch, x, _name=_op.name: getattr(torch, _name)(x))


def sinh(input):
    """Elementwise hyperbolic sine of `input` (differentiable)."""
    return _sinh(input)


def cosh(input):
    """Elementwise hyperbolic cosine of `input` (differentiable)."""
    return _cosh(input)


def asin(input):
    """Elementwise arcsine of `input` (differentiable inside (-1, 1))."""
    return _asin(input)


def acos(input):
    """Elementwise arccosine of `input` (differentiable inside (-1, 1))."""
    return _acos(input)


def atan(input):
    """Elementwise arctangent of `input` (differentiable)."""
    return _atan(input)


def asinh(input):
    """Elementwise inverse hyperbolic sine of `input` (differentiable)."""
    return _asinh(input)


def acosh(input):
    """Elementwise inverse hyperbolic cosine of `input` (differentiable for input > 1)."""
    return _acosh(input)


def atanh(input):
    """Elementwise inverse hyperbolic tangent of `input` (differentiable inside (-1, 1))."""
    return _atanh(input)


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh

erf.__doc__ = "The error function (no SciPy needed; relative error < 1e-14 in float64)."
relu.__doc__ = "max(input, 0); the gradient at 0 is 0, as in PyTorch."


def round(input, decimals=0):  # noqa: A001
    """Round half to even (as PyTorch and NumPy); `decimals` shifts the rounding position.
    The gradient is zero."""
    if decimals == 0:
        return _round0(input)
    scale = 10.0 ** decimals
    return _round0(input * scale) / scale


# ------------------------------------------------------------ clamp, maximum, minimum, where
@defop(saves=("x", "a_min", "a_max"), name="clip")
def _clip(xp, x, a_min, a_max):
    if a_min is None:
        return xp.minimum(x, a_max)
    if a_max is None:
        return xp.maximum(x, a_min)
    return xp.minimum(xp.maximum(x, a_min), a_max)  # min > max gives max, as in PyTorch


@_clip.vjp
def _(xp, g, x, a_min, a_max, needs):
    # PyTorch's clamp rule: x gets the gradient where min <= x <= max (bounds inclusive)
    if a_min is None:
        inside = x <= a_max
    elif a_max is None:
        inside = x >= a_min
    else:
        inside = (x >= a_min) & (x <= a_max)
    gx = xp.where(inside, g, 0.0) if needs[0] else None
    gmin = xp.where(x < a_min, g, 0.0) if needs[1] else None
    gmax = xp.where(x > a_max, g, 0.0) if needs[2] else None
    return gx, gmin, gmax


@_clip.sample
def _(rng):
    x = rng.standard_normal((3, 4))
    return [
        ((x, -0.5, 0.5), {}),
        ((x, None, 0.3), {}),
        ((rng.standard_normal(()), -0.3, None), {}),
        ((x, -rng.uniform(0.1, 1.0, (4,)), rng.uniform(0.1, 1.0, (3, 1))), {}),  # tensor bounds
    ]


_clip.reference(lambda torch, x, lo, hi: torch.clamp(x, lo, hi))


def _binary_samples(rng):
    return [
        ((rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), {}),
        ((rng.standard_normal((2, 3, 4)), rng.standard_normal((4,))), {}),
        ((rng.standard_normal((3, 1)), rng.standard_normal((1, 4))), {}),
        ((rng.standard_normal(()), rng.standard_normal(())), {}),
        ((rng.standard_normal((5,)), 0.25), {}),
        ((-0.25, rng.standard_normal((5,))), {}),
    ]


@defop(saves=("x", "y"), name="maximum")
def _maximum(xp, x, y):
    return xp.maximum(x, y)


def _extremum_grad(xp, g, x, y, needs, wins):
    """maximum/minimum rule: g to the input that `wins(a, b)` over the other, half each on a
    tie (as PyTorch)."""
    tie = x == y
    half = g * 0.5
    gx = xp.where(tie, half, xp.where(wins(x, y), g, 0.0)) if needs[0] else None
    gy = xp.where(tie, half, xp.where(wins(y, x), g, 0.0)) if needs[1] else None
    return gx, gy


@_maximum.vjp
def _(xp, g, x, y, needs):
    return _extremum_grad(xp, g, x, y, needs, operator.gt)


@defop(saves=("x", "y"), name="minimum")
def _minimum(xp, x, y):
    return xp.minimum(x, y)


@_minimum.vjp
def _(xp, g, x, y, needs):
    return _extremum_grad(xp, g, x, y, needs, operator.lt)


def _as_ref_tensor(torch, v, like):
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=like.dtype)


_maximum.sample(_binary_samples)
_minimum.sample(_binary_samples)
_maximum.reference(lambda torch, x, y: torch.maximum(
    _as_ref_tensor(torch, x, y if isinstance(y, torch.Tensor) else x),
    _as_ref_tensor(torch, y, x if isinstance(x, torch.Tensor) else y)))
_minimum.reference(lambda torch, x, y: torch.minimum(
    _as_ref_tensor(torch, x, y if isinstance(y, torch.Tensor) else x),
    _as_ref_tensor(torch, y, x if isinstance(x, torch.Tensor) else y)))


@defop(saves="condition", name="where")
def _where(xp, condition, x, y):
    return xp.where(condition, x, y)


@_where.vjp
def _(xp, g, condition, needs):
    return (None, xp.where(condition, g, 0.0) if needs[1] else None,
            xp.where(condition, 0.0, g) if needs[2] else None)


@_where.sample
def _(rng):
    c = rng.standard_normal((3, 4)) > 0
    return [
        ((c, rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), {}),
        ((c, rng.standard_normal((4,)), rng.standard_normal((3, 1))), {}),  # broadcasting
        ((c, rng.standard_normal((3, 4)), 0.5), {}),
        ((np.array(True), rng.standard_normal(()), rng.standard_normal(())), {}),  # 0-d
    ]


_where.reference(lambda torch, c, x, y: torch.where(c, x, y))


def clamp(input, min=None, max=None):  # noqa: A002
    """Limit `input` to [min, max]; either bound may be None, a number or a tensor.

    >>> tg.clamp(tg.tensor([-2.0, 0.5, 3.0]), min=-1, max=1)
    tensor([-1. ,  0.5,  1. ])
    """
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    return _clip(input, min, max)


def clip(input, min=None, max=None):  # noqa: A002
    """Alias of clamp."""
    return clamp(input, min, max)


def clamp_min(input, min):  # noqa: A002
    return _clip(input, min, None)


def clamp_max(input, max):  # noqa: A002
    return _clip(input, None, max)


def maximum(input, other):
    """Elementwise maximum with broadcasting; tied elements share the gradient half and half."""
    return _maximum(input, other)


def minimum(input, other):
    """Elementwise minimum with broadcasting; tied elements share the gradient half and half."""
    return _minimum(input, other)


def where(condition, input, other):
    """`input` where `condition` is true, else `other` (numbers allowed for either).

    >>> tg.where(tg.tensor([True, False]), tg.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.])
    """
    if not isinstance(condition, Tensor):
        from ..creation import as_tensor

        condition = as_tensor(condition)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from ..creation import tensor

        input = tensor(input)  # two numbers: the default dtype, not NumPy's float64
    return _where(condition, input, other)


def _clamp_(self, min=None, max=None):  # noqa: A002
    """clamp in place."""
    if min is None and max is None:
        raise RuntimeError("clamp_: at least one of 'min' or 'max' must not be None")
    return apply_inplace(_clip, self, min, max)


def _where_method(self, condition, other):
    """`self` where `condition`, else `other` (PyTorch's Tensor.where)."""
    return where(condition, self, other)


absolute, fix = abs, trunc

# activations with parameters and the copy/cast/in-place-write ops live next door; they are
# registered (and re-exported) with this module
from .activation import elu, gelu, leaky_relu, silu, softplus  # noqa: E402
from .casting import astype, clone  # noqa: E402,F401  (astype: for reduce.py)

__all__ = [
    "abs", "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "square", "reciprocal", "sin",
    "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sigmoid", "relu",
    "leaky_relu", "elu", "gelu", "silu", "softplus", "erf",
    "sign", "floor", "ceil", "round", "trunc", "clamp", "clip", "clamp_min", "clamp_max", "maximum",
    "minimum", "where", "clone", "absolute", "fix",
]
