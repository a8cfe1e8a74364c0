"""Unary math: exp, log, trig, tanh, sigmoid, erf, abs, relu, sign and rounding.

One op per function, forward and derivative rule together; the public function below each
op follows PyTorch. Unary math on an integer tensor gives the default float dtype, as in
PyTorch. `sign floor ceil round trunc` have a zero gradient (PyTorch's convention). `erf` and
`sigmoid` also exist on the array namespaces (`xp.erf`, `xp.sigmoid`: NumPy has neither), so
rules of other ops call them.

    >>> x = tg.tensor([0.0, 1.0], requires_grad=True)
    >>> tg.exp(x).sum().backward(); x.grad
    tensor([1.    , 2.7183])
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from . import parallel
from .quiet import quiet
from .registry import defop, dispatch_unary

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
    return tuple(
        2 / math.sqrt(math.pi) * (-1) ** k / (math.factorial(k) * (2 * k + 1))
        for k in range(n - 1, -1, -1)
    )


_ERF64 = (
    _series(15),
    2.1213203435596424,
    0.47759225007251715,
    6.0,
    (
        -7.717318452922494e-12,
        5.410161790434208e-11,
        3.8265037329074054e-10,
        -3.096775001069863e-10,
        -9.042898528904496e-09,
        -1.5591819489920803e-08,
        1.7708915832248429e-07,
        7.12139206463888e-07,
        -3.917119917494129e-06,
        -2.3516703562651765e-05,
        0.00014441064640346237,
        0.0006382010492706208,
        -0.010068627414034085,
        0.05621383169819681,
        -0.19715257577994758,
        0.24302789671112493,
    ),
)
_ERF32 = (
    _series(9),
    1.7320508075688772,
    0.39566104149607556,
    4.0,
    (
        -8.596641336566791e-07,
        7.114629095195111e-06,
        5.177862984040438e-05,
        -0.0002928903329732503,
        -0.0027290420753256217,
        0.03491308006280903,
        -0.18229097321488696,
        0.2873412516455932,
    ),
)


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


def _sigmoid_values(xp, x):
    with quiet():  # exp(-x) = inf for very negative x gives exactly 0
        return 1.0 / (1.0 + xp.exp(-x))


# ------------------------------------------------------------ samples shared by unary ops
def _normal(rng, scale=1.0):
    return [
        ((rng.standard_normal((3, 4)) * scale,), {}),
        ((np.asarray(rng.standard_normal(()) * scale),), {}),  # 0-d
        ((rng.standard_normal((2, 1, 3)) * scale,), {}),
    ]


def _positive(rng):
    return [((rng.uniform(0.3, 2.5, (3, 4)),), {}), ((rng.uniform(0.3, 2.5, ()),), {})]


def _away_from_zero(rng):
    x = rng.uniform(0.4, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    return [((x,), {}), ((rng.uniform(0.4, 2.0, ()),), {})]


def _uniform(lo, hi):
    return lambda rng: [((rng.uniform(lo, hi, (3, 4)),), {}), ((rng.uniform(lo, hi, ()),), {})]


def _wide(rng):
    return _normal(rng, 3.0)


@defop(saves="out", ufunc=np.exp)
def _exp(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.exp(_fl(x))


_exp.vjp(lambda xp, g, out: (g * out,))
_exp.jvp(lambda xp, tangents, *, out: tangents[0] * out)


def exp(input: Tensor) -> Tensor:
    """e ** input, elementwise."""
    return dispatch_unary(_exp, input)


@defop(saves="out")
def _expm1(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.expm1(_fl(x))


_expm1.vjp(lambda xp, g, out: (g * (out + 1.0),))


def expm1(input: Tensor) -> Tensor:
    """exp(input) - 1, accurate near 0."""
    return dispatch_unary(_expm1, input)


@defop(saves="x", ufunc=np.log)
def _log(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.log(_fl(x))


_log.vjp(lambda xp, g, x: (g / x,))
_log.jvp(lambda xp, tangents, x, *, out: tangents[0] / x)


def log(input: Tensor) -> Tensor:
    """The natural logarithm, elementwise."""
    return dispatch_unary(_log, input)


@defop(saves="x")
def _log1p(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.log1p(_fl(x))


_log1p.vjp(lambda xp, g, x: (g / (x + 1.0),))


def log1p(input: Tensor) -> Tensor:
    """log(1 + input), accurate near 0."""
    return dispatch_unary(_log1p, input)


@defop(saves="x")
def _log2(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.log2(_fl(x))


_log2.vjp(lambda xp, g, x: (g / (x * _LN2),))


def log2(input: Tensor) -> Tensor:
    """The base-2 logarithm, elementwise."""
    return dispatch_unary(_log2, input)


@defop(saves="out", ufunc=np.sqrt)
def _sqrt(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.sqrt(_fl(x))


_sqrt.vjp(lambda xp, g, out: (g / (out * 2.0),))
_sqrt.jvp(lambda xp, tangents, *, out: tangents[0] / (out * 2.0))


def sqrt(input: Tensor) -> Tensor:
    """The square root, elementwise."""
    return dispatch_unary(_sqrt, input)


@defop(saves="out")
def _rsqrt(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return 1.0 / xp.sqrt(_fl(x))


_rsqrt.vjp(lambda xp, g, out: (g * (out * out * out) * -0.5,))


def rsqrt(input: Tensor) -> Tensor:
    """1 / sqrt(input), elementwise."""
    return dispatch_unary(_rsqrt, input)


@defop(saves="x")
def _square(xp, x):
    if x.dtype == np.bool_:
        x = x.astype(np.int64)  # bool squared is int64, as in PyTorch
    with quiet():
        return x * x


_square.vjp(lambda xp, g, x: (g * x * 2.0,))
_square.jvp(lambda xp, tangents, x, *, out: tangents[0] * x * 2.0)


def square(input: Tensor) -> Tensor:
    """input * input, elementwise."""
    return dispatch_unary(_square, input)


@defop(saves="out")
def _reciprocal(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return 1.0 / _fl(x)


_reciprocal.vjp(lambda xp, g, out: (-g * out * out,))


def reciprocal(input: Tensor) -> Tensor:
    """1 / input, elementwise."""
    return dispatch_unary(_reciprocal, input)


@defop(saves="x", ufunc=np.sin)
def _sin(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.sin(_fl(x))


_sin.vjp(lambda xp, g, x: (g * xp.cos(x),))
_sin.jvp(lambda xp, tangents, x, *, out: tangents[0] * xp.cos(x))


def sin(input: Tensor) -> Tensor:
    """The sine, elementwise (radians)."""
    return dispatch_unary(_sin, input)


@defop(saves="x", ufunc=np.cos)
def _cos(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.cos(_fl(x))


_cos.vjp(lambda xp, g, x: (-g * xp.sin(x),))
_cos.jvp(lambda xp, tangents, x, *, out: -tangents[0] * xp.sin(x))


def cos(input: Tensor) -> Tensor:
    """The cosine, elementwise (radians)."""
    return dispatch_unary(_cos, input)


@defop(saves="out")
def _tan(xp, x):
    with quiet():  # log(-1), 1 / 0, exp(1000): NaN/Inf silently, as PyTorch
        return xp.tan(_fl(x))


_tan.vjp(lambda xp, g, out: (g * (out * out + 1.0),))


def tan(input: Tensor) -> Tensor:
    """The tangent, elementwise (radians)."""
    return dispatch_unary(_tan, input)


@defop(saves="out", ufunc=np.tanh)
def _tanh(xp, x):
    return xp.tanh(_fl(x))  # never warns (tanh(inf) = 1): no quiet() on this hot op


_tanh.vjp(lambda xp, g, out: (g * (1.0 - out * out),))
_tanh.jvp(lambda xp, tangents, *, out: tangents[0] * (1.0 - out * out))


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent, elementwise."""
    return dispatch_unary(_tanh, input)


# hyperbolic and inverse trigonometric functions (PyTorch's names; NumPy's arc* aliases below)
@defop(saves="x", name="sinh")
def _sinh(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.sinh(_fl(x))


@_sinh.vjp
def _(xp, g, x):
    return (g * xp.cosh(x),)


@defop(saves="x", name="cosh")
def _cosh(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.cosh(_fl(x))


@_cosh.vjp
def _(xp, g, x):
    return (g * xp.sinh(x),)


@defop(saves="x", name="asin")
def _asin(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arcsin(_fl(x))


@_asin.vjp
def _(xp, g, x):
    return (g / xp.sqrt(1.0 - x * x),)


@defop(saves="x", name="acos")
def _acos(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arccos(_fl(x))


@_acos.vjp
def _(xp, g, x):
    return (-g / xp.sqrt(1.0 - x * x),)


@defop(saves="x", name="atan")
def _atan(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arctan(_fl(x))


@_atan.vjp
def _(xp, g, x):
    return (g / (x * x + 1.0),)


@defop(saves="x", name="asinh")
def _asinh(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arcsinh(_fl(x))


@_asinh.vjp
def _(xp, g, x):
    return (g / xp.sqrt(x * x + 1.0),)


@defop(saves="x", name="acosh")
def _acosh(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arccosh(_fl(x))


@_acosh.vjp
def _(xp, g, x):
    return (g / xp.sqrt(x * x - 1.0),)


@defop(saves="x", name="atanh")
def _atanh(xp, x):
    with quiet():  # outside the domain: NaN silently, as PyTorch
        return xp.arctanh(_fl(x))


@_atanh.vjp
def _(xp, g, x):
    return (g / (1.0 - x * x),)


def sinh(input):
    """Elementwise hyperbolic sine of `input` (differentiable)."""
    return dispatch_unary(_sinh, input)


def cosh(input):
    """Elementwise hyperbolic cosine of `input` (differentiable)."""
    return dispatch_unary(_cosh, input)


def asin(input):
    """Elementwise arcsine of `input` (differentiable inside (-1, 1))."""
    return dispatch_unary(_asin, input)


def acos(input):
    """Elementwise arccosine of `input` (differentiable inside (-1, 1))."""
    return dispatch_unary(_acos, input)


def atan(input):
    """Elementwise arctangent of `input` (differentiable)."""
    return dispatch_unary(_atan, input)


def asinh(input):
    """Elementwise inverse hyperbolic sine of `input` (differentiable)."""
    return dispatch_unary(_asinh, input)


def acosh(input):
    """Elementwise inverse hyperbolic cosine of `input` (differentiable for input > 1)."""
    return dispatch_unary(_acosh, input)


def atanh(input):
    """Elementwise inverse hyperbolic tangent of `input` (differentiable inside (-1, 1))."""
    return dispatch_unary(_atanh, input)


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


@defop(saves="out", array_twin=True)
def _sigmoid(xp, x):
    return _sigmoid_values(xp, _fl(x))


_sigmoid.vjp(lambda xp, g, out: (g * out * (1.0 - out),))
_sigmoid.jvp(lambda xp, tangents, *, out: tangents[0] * out * (1.0 - out))


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)), computed without overflow."""
    return dispatch_unary(_sigmoid, input)


@defop(saves="x", array_twin=True)
def _erf(xp, x):
    return _erf_values(xp, _fl(x))


_erf.vjp(lambda xp, g, x: (g * xp.exp(-x * x) * (2.0 / math.sqrt(math.pi)),))


def erf(input: Tensor) -> Tensor:
    """The error function (no SciPy needed; relative error < 1e-14 in float64)."""
    return dispatch_unary(_erf, input)


@defop(saves="x")
def _abs(xp, x):
    return xp.abs(x)


# g * sign(x), without NumPy's sign(nan) = nan (PyTorch's slope there is 0)
_abs.vjp(lambda xp, g, x: (g * xp.where(x != x, 0.0, xp.sign(x)),))


def abs(input: Tensor) -> Tensor:  # noqa: A001
    """|input|, elementwise; the gradient at 0 is 0."""
    return dispatch_unary(_abs, input)


def _split_numpy(xp, *arrays):
    """Whether an elementwise pass over these same-shape NumPy arrays is split over the
    intra-op threads (ops/parallel.py: conv nets' activations are multi-MiB)."""
    a = arrays[0]
    return (
        getattr(xp, "module", xp) is np
        and a.ndim > 0
        and a.size >= parallel.MIN_ELEMENTS
        and all(isinstance(b, np.ndarray) and b.shape == a.shape for b in arrays)
    )


@defop(saves="out")
def _relu(xp, x):
    # bool: its maximum with 0 is int64, not an array like x to write into
    if not _split_numpy(xp, x) or x.dtype.kind == "b":
        return xp.maximum(x, 0)
    out = np.empty_like(x)
    parallel.for_slices(
        np, x.shape[0], lambda lo, hi: np.maximum(x[lo:hi], 0, out=out[lo:hi]), x.size
    )
    return out


@_relu.vjp
def _(xp, g, out):
    # a mask product: ~9x faster than where() on large arrays (a NaN gradient at a
    # dead unit stays NaN, where PyTorch's threshold_backward would give 0). The output
    # is >= 0 or NaN, so "out != 0" is "not out <= 0" (slope 1 at relu(NaN) = NaN, as
    # PyTorch, where "out > 0" would give 0) in one comparison pass instead of two
    if not (_split_numpy(xp, g, out) and g.dtype == np.result_type(g, np.bool_)):
        return (g * (out != 0),)
    dx = np.empty_like(g)

    def body(lo, hi):
        live = np.not_equal(out[lo:hi], 0)
        np.multiply(g[lo:hi], live, out=dx[lo:hi])

    parallel.for_slices(np, g.shape[0], body, g.size)
    return (dx,)


# slope 1 at relu(NaN), as the vjp
_relu.jvp(lambda xp, tangents, *, out: tangents[0] * (out != 0))


def relu(input: Tensor) -> Tensor:
    """max(input, 0); the gradient at 0 is 0, as in PyTorch."""
    return dispatch_unary(_relu, input)


@defop()
def _sign(xp, x):
    out = xp.sign(x)
    if out.dtype.kind == "f":  # sign(nan) is 0 in PyTorch, nan in NumPy
        return xp.where(xp.isnan(out), 0, out)
    return out


_sign.vjp(lambda xp, g: (xp.zeros_like(g),))


def sign(input: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of input; the gradient is zero."""
    return dispatch_unary(_sign, input)


@defop()
def _floor(xp, x):
    return xp.floor(x)


_floor.vjp(lambda xp, g: (xp.zeros_like(g),))


def floor(input: Tensor) -> Tensor:
    """The largest integer <= input, elementwise; the gradient is zero."""
    return dispatch_unary(_floor, input)


@defop()
def _ceil(xp, x):
    return xp.ceil(x)


_ceil.vjp(lambda xp, g: (xp.zeros_like(g),))


def ceil(input: Tensor) -> Tensor:
    """The smallest integer >= input, elementwise; the gradient is zero."""
    return dispatch_unary(_ceil, input)


@defop()
def _trunc(xp, x):
    return xp.trunc(x)


_trunc.vjp(lambda xp, g: (xp.zeros_like(g),))


def trunc(input: Tensor) -> Tensor:
    """input rounded toward zero, elementwise; the gradient is zero."""
    return dispatch_unary(_trunc, input)


@defop()
def _round(xp, x):
    return xp.round(x)


_round.vjp(lambda xp, g: (xp.zeros_like(g),))


def round(input: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001
    """Round half to even (as PyTorch and NumPy); `decimals` shifts the rounding position.
    The gradient is zero."""
    if decimals == 0:
        return dispatch_unary(_round, input)
    scale = 10.0**decimals
    return _round(input * scale) / scale


_SAMPLES = {
    "log": _positive,
    "log1p": _uniform(-0.6, 2.0),
    "log2": _positive,
    "sqrt": _positive,
    "rsqrt": _positive,
    "reciprocal": _away_from_zero,
    "tan": _uniform(-1.2, 1.2),
    "floor": _wide,
    "ceil": _wide,
    "trunc": _wide,
    "round": _wide,
    "asin": _uniform(-0.9, 0.9),
    "acos": _uniform(-0.9, 0.9),
    "atan": _wide,
    "asinh": _wide,
    "acosh": _uniform(1.2, 3.0),
    "atanh": _uniform(-0.9, 0.9),
}


def _same_name_in_torch(name):
    return lambda torch, x: getattr(torch, name)(x)


# sample inputs (by default a normal sample); each op has a PyTorch function of its name
for _op in (
    _exp,
    _expm1,
    _log,
    _log1p,
    _log2,
    _sqrt,
    _rsqrt,
    _square,
    _reciprocal,
    _sin,
    _cos,
    _tan,
    _tanh,
    _sinh,
    _cosh,
    _asin,
    _acos,
    _atan,
    _asinh,
    _acosh,
    _atanh,
    _sigmoid,
    _erf,
    _abs,
    _relu,
    _sign,
    _floor,
    _ceil,
    _trunc,
    _round,
):
    _op.sample(_SAMPLES.get(_op.name, _normal))
    _op.reference(_same_name_in_torch(_op.name))
del _op
