"""More elementwise math, PyTorch's names: atan2, hypot, log10, logaddexp(2), xlogy,
addcmul/addcdiv, nan_to_num, logit, deg2rad/rad2deg, copysign, frac, heaviside, erfinv,
sinc, float_power; and their in-place variants.

Each is one op of the table (forward, vjp, jvp, samples, PyTorch reference) except
`float_power`, a cast to float64 followed by `pow`. Integer inputs give the default float
dtype, as in PyTorch; the special points follow PyTorch's derivative formulas (atan2's
gradient at (0, 0) is 0, hypot's is NaN, xlogy(0, y) has no x-gradient where y <= 0,
nan_to_num's gradient is 0 where the input was not finite). `heaviside` is recorded but its
derivative is not implemented, as in PyTorch: backward through it raises.

    >>> tg.atan2(tg.tensor([1.0]), tg.tensor([-1.0]))
    tensor([2.3562])
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .quiet import quiet
from .registry import apply_inplace, defop, dispatch, dispatch_binary, dispatch_unary
from .unary import _ERF64, _erf_values, _fl, _horner
from .xp import plus_tangents

_LN10 = math.log(10.0)
_LN2 = math.log(2.0)
_DEG = math.pi / 180.0
_SQRT_PI_2 = math.sqrt(math.pi) / 2.0


def _flt(a):
    """`_fl` for an array, a Python number unchanged (bool becomes float: NumPy gives float16)."""
    if isinstance(a, bool):
        return float(a)
    return _fl(a) if hasattr(a, "dtype") else a


def _log(xp, y):
    """log(y) for a tensor or array, or for a Python number (the tensor namespace has no
    scalar log): NaN/-inf outside the domain, as for arrays."""
    if hasattr(y, "shape"):
        return xp.log(y)
    with np.errstate(all="ignore"):
        return float(np.log(float(y)))


def _times(t, factor):
    """A tangent (None: no tangent) times a factor."""
    return None if t is None else t * factor


def _binary_samples(rng):
    return [
        ((rng.standard_normal((3, 4)), rng.standard_normal((3, 4))), {}),
        ((rng.standard_normal((2, 3, 4)), rng.standard_normal((4,))), {}),  # broadcasting
        ((rng.standard_normal((3, 1)), rng.standard_normal((1, 4))), {}),
        ((np.asarray(rng.standard_normal(())), np.asarray(rng.standard_normal(()))), {}),  # 0-d
        ((rng.standard_normal((5,)), 0.75), {}),  # a Python number
        ((-0.5, rng.standard_normal((5,))), {}),
    ]


def _positive(rng, shape):
    return rng.uniform(0.3, 2.5, shape)


# ------------------------------------------------------------ atan2, hypot
@defop(saves=("x", "y"), name="atan2")
def _atan2(xp, x, y):
    with quiet():
        return xp.arctan2(_flt(x), _flt(y))


def _atan2_recip(xp, x, y):
    # PyTorch's 1 / (x*x + y*y), and 0 where that sum is 0 (underflow included): the
    # gradient at (0, 0) is 0, not 0 * inf; the zero divides by 1 instead
    r2 = x * x + y * y
    zero = r2 == 0
    return xp.where(zero, 0.0, 1.0 / xp.where(zero, 1.0, r2))


@_atan2.vjp
def _(xp, g, x, y, needs):
    recip = _atan2_recip(xp, x, y)
    return (g * y * recip if needs[0] else None, -g * x * recip if needs[1] else None)


@_atan2.jvp
def _(xp, tangents, x, y, *, out):
    recip = _atan2_recip(xp, x, y)
    return plus_tangents(_times(tangents[0], y * recip), _times(tangents[1], -x * recip))


_atan2.sample(_binary_samples)
_atan2.reference(lambda torch, x, y: torch.atan2(_ref(torch, x, y), _ref(torch, y, x)))


def _ref(torch, v, like):
    """A Python number as a PyTorch tensor of the other input's dtype (torch.atan2 and
    friends want tensors)."""
    if isinstance(v, torch.Tensor):
        return v
    return torch.tensor(v, dtype=like.dtype if isinstance(like, torch.Tensor) else None)


@defop(saves=("x", "y", "out"), name="hypot")
def _hypot(xp, x, y):
    with quiet():
        return xp.hypot(_flt(x), _flt(y))


@_hypot.vjp
def _(xp, g, x, y, out, needs):
    # x / out: NaN at (0, 0), as PyTorch
    return (g * x / out if needs[0] else None, g * y / out if needs[1] else None)


@_hypot.jvp
def _(xp, tangents, x, y, *, out):
    return plus_tangents(_times(tangents[0], x / out), _times(tangents[1], y / out))


_hypot.sample(_binary_samples)
_hypot.reference(lambda torch, x, y: torch.hypot(_ref(torch, x, y), _ref(torch, y, x)))


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """The angle of the point (other, input), in (-pi, pi]; `atan2(y, x)` with broadcasting.
    The gradient at (0, 0) is 0, as in PyTorch.

    >>> tg.atan2(tg.tensor([0.0, 1.0]), tg.tensor([-1.0, 0.0]))
    tensor([3.1416, 1.5708])
    """
    return dispatch_binary(_atan2, input, other)


arctan2 = atan2


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """sqrt(input**2 + other**2) without overflow, elementwise with broadcasting.

    >>> tg.hypot(tg.tensor([3.0]), tg.tensor([4.0]))
    tensor([5.])
    """
    return dispatch_binary(_hypot, input, other)


# ------------------------------------------------------------ log10, logaddexp(2), xlogy
@defop(saves="x", name="log10")
def _log10(xp, x):
    with quiet():  # log(0) = -inf, log(-1) = NaN silently, as PyTorch
        return xp.log10(_fl(x))


_log10.vjp(lambda xp, g, x: (g / (x * _LN10),))
_log10.jvp(lambda xp, tangents, x, *, out: tangents[0] / (x * _LN10))
_log10.sample(
    lambda rng: [((_positive(rng, (3, 4)),), {}), ((np.asarray(_positive(rng, ())),), {})]
)
_log10.reference(lambda torch, x: torch.log10(x))


def log10(input: Tensor) -> Tensor:
    """The base-10 logarithm, elementwise.

    >>> tg.log10(tg.tensor([100.0]))
    tensor([2.])
    """
    return dispatch_unary(_log10, input)


@defop(saves=("x", "y"), name="logaddexp")
def _logaddexp(xp, x, y):
    with quiet():
        return xp.logaddexp(_flt(x), _flt(y))


def _logaddexp_weights(xp, x, y, scale):
    # PyTorch's form 1 / (1 + exp(y - x)): 1 and 0 for an infinite gap, NaN at (-inf, -inf)
    return 1.0 / (1.0 + xp.exp((y - x) * scale)), 1.0 / (1.0 + xp.exp((x - y) * scale))


@_logaddexp.vjp
def _(xp, g, x, y, needs):
    wx, wy = _logaddexp_weights(xp, x, y, 1.0)
    return (g * wx if needs[0] else None, g * wy if needs[1] else None)


@_logaddexp.jvp
def _(xp, tangents, x, y, *, out):
    wx, wy = _logaddexp_weights(xp, x, y, 1.0)
    return plus_tangents(_times(tangents[0], wx), _times(tangents[1], wy))


@defop(saves=("x", "y"), name="logaddexp2")
def _logaddexp2(xp, x, y):
    with quiet():
        return xp.logaddexp2(_flt(x), _flt(y))


@_logaddexp2.vjp
def _(xp, g, x, y, needs):
    wx, wy = _logaddexp_weights(xp, x, y, _LN2)
    return (g * wx if needs[0] else None, g * wy if needs[1] else None)


@_logaddexp2.jvp
def _(xp, tangents, x, y, *, out):
    wx, wy = _logaddexp_weights(xp, x, y, _LN2)
    return plus_tangents(_times(tangents[0], wx), _times(tangents[1], wy))


_logaddexp.sample(_binary_samples)
_logaddexp2.sample(_binary_samples)
_logaddexp.reference(lambda torch, x, y: torch.logaddexp(_ref(torch, x, y), _ref(torch, y, x)))
_logaddexp2.reference(lambda torch, x, y: torch.logaddexp2(_ref(torch, x, y), _ref(torch, y, x)))


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """log(exp(input) + exp(other)) without overflow, elementwise with broadcasting.

    >>> tg.logaddexp(tg.tensor([0.0]), tg.tensor([0.0]))
    tensor([0.6931])
    """
    return dispatch_binary(_logaddexp, input, other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """log2(2**input + 2**other) without overflow, elementwise with broadcasting.

    >>> tg.logaddexp2(tg.tensor([1.0]), tg.tensor([1.0]))
    tensor([2.])
    """
    return dispatch_binary(_logaddexp2, input, other)


@defop(saves=("x", "y"), name="xlogy")
def _xlogy(xp, x, y):
    x, y = _flt(x), _flt(y)
    with quiet():
        prod = x * xp.log(y)
        # 0 where x == 0, unless y is NaN (xlogy(0, nan) is NaN, as in PyTorch)
        return xp.where((x == 0) & (y == y), 0.0, prod)


@_xlogy.vjp
def _(xp, g, x, y, needs):
    gx = None
    if needs[0]:
        # PyTorch: no x-gradient where x == 0 and y <= 0 (log y is -inf or NaN there)
        gx = xp.where((x == 0) & (y <= 0), 0.0, g * _log(xp, y))
    return gx, (g * x / y if needs[1] else None)


@_xlogy.jvp
def _(xp, tangents, x, y, *, out):
    tx = tangents[0]
    if tx is not None:
        tx = xp.where((x == 0) & (y <= 0), 0.0, tx * _log(xp, y))
    return plus_tangents(tx, _times(tangents[1], x / y))


@_xlogy.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)), _positive(rng, (3, 4))), {}),
        ((rng.standard_normal((2, 3)), _positive(rng, (3,))), {}),
        ((rng.standard_normal((4,)), 1.5), {}),
        ((2.0, _positive(rng, (4,))), {}),
    ]


_xlogy.reference(lambda torch, x, y: torch.xlogy(x, y))


def xlogy(input: Tensor, other: Tensor) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is NaN), as PyTorch.

    >>> tg.xlogy(tg.tensor([0.0, 2.0]), tg.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    return dispatch_binary(_xlogy, input, other)


# ------------------------------------------------------------ addcmul, addcdiv
@defop(saves=("t1", "t2"), name="addcmul")
def _addcmul(xp, x, t1, t2, *, value=1):
    with quiet():
        return x + t1 * t2 * value


@_addcmul.vjp
def _(xp, g, t1, t2, needs, value=1):
    return (
        g if needs[0] else None,
        g * t2 * value if needs[1] else None,
        g * t1 * value if needs[2] else None,
    )


@_addcmul.jvp
def _(xp, tangents, t1, t2, *, out, value=1):
    tx, t1t, t2t = tangents
    return plus_tangents(tx, plus_tangents(_times(t1t, t2 * value), _times(t2t, t1 * value)))


@defop(saves=("t1", "t2"), name="addcdiv")
def _addcdiv(xp, x, t1, t2, *, value=1):
    with quiet():
        return x + t1 / t2 * value


@_addcdiv.vjp
def _(xp, g, t1, t2, needs, value=1):
    return (
        g if needs[0] else None,
        g * value / t2 if needs[1] else None,
        -g * value * t1 / (t2 * t2) if needs[2] else None,
    )


@_addcdiv.jvp
def _(xp, tangents, t1, t2, *, out, value=1):
    tx, t1t, t2t = tangents
    return plus_tangents(
        tx, plus_tangents(_times(t1t, value / t2), _times(t2t, -value * t1 / (t2 * t2)))
    )


def _ternary_samples(rng):
    n = rng.standard_normal
    return [
        ((n((3, 4)), n((3, 4)), n((3, 4))), {}),
        ((n((4,)), n((3, 1)), n((3, 4))), {"value": 0.5}),  # broadcasting
        ((np.asarray(n(())), np.asarray(n(())), np.asarray(n(()))), {"value": -2.0}),
    ]


def _divisor_samples(rng):
    away = lambda s: rng.uniform(0.5, 2.0, s) * rng.choice([-1.0, 1.0], s)  # noqa: E731
    n = rng.standard_normal
    return [
        ((n((3, 4)), n((3, 4)), away((3, 4))), {}),
        ((n((4,)), n((3, 1)), away((3, 4))), {"value": 0.5}),
        ((np.asarray(n(())), np.asarray(n(())), np.asarray(away(()))), {"value": -2.0}),
    ]


_addcmul.sample(_ternary_samples)
_addcdiv.sample(_divisor_samples)
_addcmul.reference(lambda torch, x, a, b, value=1: torch.addcmul(x, a, b, value=value))
_addcdiv.reference(lambda torch, x, a, b, value=1: torch.addcdiv(x, a, b, value=value))


def _check_value(what, value):
    if isinstance(value, Tensor) or not isinstance(value, (int, float, np.number)):
        raise TypeError(
            f"{what}: value must be a Python number, got {type(value).__name__}; "
            "multiply a tensor factor into tensor1 instead"
        )


def _check_tensors(what, *args):
    for name, a in zip(("input", "tensor1", "tensor2"), args, strict=True):
        if not isinstance(a, Tensor):
            raise TypeError(f"{what}: {name} must be a Tensor, got {type(a).__name__}")


def _check_integer_division(what, *args):
    if all(np.dtype(a.dtype).kind in "iub" for a in args):
        raise RuntimeError(
            f"{what}: integer division of tensors is not supported (as in PyTorch); "
            "convert tensor1 or tensor2 to a floating dtype first, e.g. t.float()"
        )


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 * tensor2, with broadcasting.

    >>> tg.addcmul(tg.ones(2), tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0]), value=0.5)
    tensor([2.5, 5. ])
    """
    _check_tensors("addcmul", input, tensor1, tensor2)
    _check_value("addcmul", value)
    return dispatch(_addcmul, input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """input + value * tensor1 / tensor2, with broadcasting (Adam's update).

    >>> tg.addcdiv(tg.zeros(2), tg.tensor([1.0, 2.0]), tg.tensor([2.0, 4.0]), value=2)
    tensor([1., 1.])
    """
    _check_tensors("addcdiv", input, tensor1, tensor2)
    _check_value("addcdiv", value)
    _check_integer_division("addcdiv", tensor1, tensor2)
    return dispatch(_addcdiv, input, tensor1, tensor2, value=value)


# ------------------------------------------------------------ nan_to_num, logit
@defop(saves="x", name="nan_to_num")
def _nan_to_num(xp, x, *, nan=0.0, posinf=None, neginf=None):
    if x.dtype.kind not in "fc":
        return x.copy()  # integers have no NaN: a copy, as PyTorch
    return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _finite(xp, x):
    return xp.isfinite(x)


_nan_to_num.vjp(lambda xp, g, x, **params: (xp.where(_finite(xp, x), g, 0.0),))
_nan_to_num.jvp(
    lambda xp, tangents, x, *, out, **params: xp.where(_finite(xp, x), tangents[0], 0.0)
)


@_nan_to_num.sample
def _(rng):
    x = rng.standard_normal((3, 4))
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    return [
        ((x,), {}),
        ((x,), {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}),
        ((np.asarray(rng.standard_normal(())),), {}),
    ]


_nan_to_num.reference(
    lambda torch, x, nan=0.0, posinf=None, neginf=None: torch.nan_to_num(
        x, nan=nan, posinf=posinf, neginf=neginf
    )
)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the largest
    and smallest finite values of the dtype); the gradient is 0 where the input was not
    finite, as in PyTorch.

    >>> tg.nan_to_num(tg.tensor([float("nan"), 1.0]))
    tensor([0., 1.])
    """
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not isinstance(v, (int, float, np.number)):
            raise TypeError(f"nan_to_num: {name} must be a number or None, got {v!r}")
    return dispatch(_nan_to_num, input, nan=nan, posinf=posinf, neginf=neginf)


@defop(saves="x", name="logit")
def _logit(xp, x, *, eps=None):
    x = _fl(x)
    if eps is not None:
        x = xp.clip(x, eps, 1.0 - eps)
    with quiet():
        return xp.log(x / (1.0 - x))


def _logit_slope(xp, x, eps):
    slope = 1.0 / (x * (1.0 - x))
    if eps is None:  # PyTorch: NaN outside [0, 1]
        return xp.where((x < 0) | (x > 1), math.nan, slope)
    return xp.where((x < eps) | (x > 1.0 - eps), 0.0, slope)  # clamped: no gradient


_logit.vjp(lambda xp, g, x, eps=None: (g * _logit_slope(xp, x, eps),))
_logit.jvp(lambda xp, tangents, x, *, out, eps=None: tangents[0] * _logit_slope(xp, x, eps))
_logit.sample(
    lambda rng: [
        ((rng.uniform(0.1, 0.9, (3, 4)),), {}),
        ((np.asarray(rng.uniform(0.1, 0.9, ())),), {}),
        ((np.array([0.05, 0.3, 0.6, 0.97]),), {"eps": 0.1}),
    ]
)
_logit.reference(lambda torch, x, eps=None: torch.logit(x, eps))


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), the inverse of sigmoid; with `eps`, input is first clamped to
    [eps, 1 - eps] (no gradient where it was clamped).

    >>> tg.logit(tg.tensor([0.5, 0.75]))
    tensor([0.    , 1.0986])
    """
    if eps is not None and not isinstance(eps, (int, float, np.number)):
        raise TypeError(f"logit: eps must be a number or None, got {eps!r}")
    return dispatch(_logit, input, eps=eps)


# ------------------------------------------------------------ deg2rad, rad2deg, copysign, frac
@defop(name="deg2rad")
def _deg2rad(xp, x):
    return _fl(x) * _DEG


@defop(name="rad2deg")
def _rad2deg(xp, x):
    return _fl(x) * (1.0 / _DEG)


_deg2rad.vjp(lambda xp, g: (g * _DEG,))
_rad2deg.vjp(lambda xp, g: (g * (1.0 / _DEG),))
_deg2rad.jvp(lambda xp, tangents, *, out: tangents[0] * _DEG)
_rad2deg.jvp(lambda xp, tangents, *, out: tangents[0] * (1.0 / _DEG))


def _normal_samples(rng):
    return [((rng.standard_normal((3, 4)),), {}), ((np.asarray(rng.standard_normal(())),), {})]


_deg2rad.sample(_normal_samples)
_rad2deg.sample(_normal_samples)
_deg2rad.reference(lambda torch, x: torch.deg2rad(x))
_rad2deg.reference(lambda torch, x: torch.rad2deg(x))


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians, elementwise.

    >>> tg.deg2rad(tg.tensor([180.0]))
    tensor([3.1416])
    """
    return dispatch_unary(_deg2rad, input)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees, elementwise.

    >>> tg.rad2deg(tg.tensor([3.141592653589793]))
    tensor([180.])
    """
    return dispatch_unary(_rad2deg, input)


@defop(saves=("x", "out"), name="copysign")
def _copysign(xp, x, y):
    return xp.copysign(_flt(x), _flt(y))


def _copysign_ratio(xp, x, out):
    # PyTorch: out / x, and 0 where x == 0
    if not hasattr(x, "shape"):  # a Python number
        return out * (0.0 if x == 0 else 1.0 / x)
    return xp.where(x == 0, 0.0, out / xp.where(x == 0, 1.0, x))


@_copysign.vjp
def _(xp, g, x, out, needs):
    gx = g * _copysign_ratio(xp, x, out) if needs[0] else None
    return gx, (xp.zeros_like(g) if needs[1] else None)  # PyTorch: a zero gradient for other


_copysign.jvp(lambda xp, tangents, x, *, out: _times(tangents[0], _copysign_ratio(xp, x, out)))
_copysign.sample(_binary_samples)
_copysign.reference(lambda torch, x, y: torch.copysign(_ref(torch, x, y), _ref(torch, y, x)))


def copysign(input: Tensor, other) -> Tensor:
    """|input| with the sign of `other` (a tensor or number; -0.0 counts as negative).

    >>> tg.copysign(tg.tensor([1.0, -2.0]), -1.0)
    tensor([-1., -2.])
    """
    return dispatch_binary(_copysign, input, other)


@defop(name="frac")
def _frac(xp, x):
    with quiet():
        return x - xp.trunc(x)


_frac.vjp(lambda xp, g: (g,))
_frac.jvp(lambda xp, tangents, *, out: tangents[0])
_frac.sample(lambda rng: [((rng.standard_normal((3, 4)) * 3.0,), {})])
_frac.reference(lambda torch, x: torch.frac(x))


def _float_only(what, x):
    if isinstance(x, Tensor) and np.dtype(x.dtype).kind not in "fc":
        raise RuntimeError(
            f"{what}: not implemented for {x.dtype} tensors (as in PyTorch); "
            "convert to a floating dtype first, e.g. t.float()"
        )


def frac(input: Tensor) -> Tensor:
    """The fractional part, input - trunc(input) (the sign follows input); float only.

    >>> tg.frac(tg.tensor([2.5, -1.25]))
    tensor([ 0.5 , -0.25])
    """
    _float_only("frac", input)
    return dispatch_unary(_frac, input)


# ------------------------------------------------------------ heaviside
@defop(name="heaviside")
def _heaviside(xp, x, values):
    return xp.where(x == 0, values, (x > 0).astype(x.dtype))


@_heaviside.vjp
def _(xp, g, needs):
    raise RuntimeError(
        "heaviside: the derivative is not implemented (as in PyTorch); use a smooth "
        "step such as sigmoid(k * x) where a gradient is needed"
    )


# integer samples: nothing to differentiate, the values still checked against PyTorch
_heaviside.sample(
    lambda rng: [
        ((np.array([-2, 0, 3, 0]), np.array([7, 7, 7, 7])), {}),
        ((np.array([[-1, 0], [0, 4]]), np.array([5])), {}),
    ]
)
_heaviside.reference(lambda torch, x, v: torch.heaviside(x, v))


def heaviside(input: Tensor, values) -> Tensor:
    """The step function: 0 where input < 0, `values` where input == 0, 1 where input > 0.
    Like PyTorch, the result is recorded but backward through it raises (no derivative).

    >>> tg.heaviside(tg.tensor([-1.0, 0.0, 2.0]), tg.tensor([0.5]))
    tensor([0. , 0.5, 1. ])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"heaviside: input must be a Tensor, got {type(input).__name__}")
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        raise RuntimeError(
            "heaviside: input and values must have the same dtype (as in PyTorch), got "
            f"{input.dtype} and {values.dtype}; convert values first, e.g. "
            "values.to(input.dtype)"
        )
    return dispatch_binary(_heaviside, input, values)


# ------------------------------------------------------------ erfinv, sinc
# Giles' single-precision approximation ("Approximating the erfinv function", 2010), then
# Newton steps on erf (unary._erf_values, relative error < 2e-15) to float64 accuracy.
_GILES_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_GILES_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _poly(coefs, w):
    acc = np.full_like(w, coefs[0])
    for c in coefs[1:]:
        acc = acc * w + c
    return acc


def _erfc_nonnegative(a):
    """erfc(a) for a >= 0 in float64, to a few ulps relative (unary.py's erf internals:
    the tail exp(-a*a) * erfcx(a) is never computed as 1 - erf)."""
    series, c, u, top, erfcx = _ERF64
    near = 1.0 - a * _horner(series, np.minimum(a * a, 0.5625))
    z = np.minimum(np.maximum(a, 0.75), top)
    far = np.exp(-z * z) * _horner(erfcx, (z - c) / ((z + c) * u))
    return np.where(a < 0.75, near, far)


def _erfinv_values(y):
    """erfinv on a NumPy array (float64 inside): +-inf at +-1, NaN outside [-1, 1]."""
    dtype = y.dtype
    y64 = y.astype(np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y64) * (1.0 + y64))
        central = _poly(_GILES_CENTRAL, w - 2.5)
        tail = _poly(_GILES_TAIL, np.sqrt(np.maximum(w, 0.0)) - 3.0)
        a = np.abs(y64)
        inside = a < 1.0
        x = np.where(inside, a * np.where(w < 5.0, central, tail), 0.0)  # |erfinv(y)|
        # Newton steps (the guess is good to ~1e-7, each step squares that): on erf for
        # |y| < 0.5, on erfc(x) = 1 - |y| (exact for |y| >= 0.5) above, so that y near 1
        # keeps its accuracy
        q = 1.0 - a
        small = a < 0.5
        for _ in range(3):
            slope = np.exp(-x * x) * (1.0 / _SQRT_PI_2)
            x = np.where(
                small,
                x - (_erf_values(np, x) - a) / slope,
                x + (_erfc_nonnegative(x) - q) / slope,
            )
        x = np.where(inside, np.copysign(x, y64), np.where(a == 1.0, np.sign(y64) * np.inf, np.nan))
    return x.astype(dtype)


@defop(saves="out", name="erfinv")
def _erfinv(xp, x):
    x = _fl(x)
    if xp is np:
        return _erfinv_values(x)
    from .. import backend  # CuPy: compute on the host (no erfinv kernel without SciPy)

    return backend.to_device(_erfinv_values(backend.to_device(x, "cpu")), "cuda")


_erfinv.vjp(lambda xp, g, out: (g * _SQRT_PI_2 * xp.exp(out * out),))
_erfinv.jvp(lambda xp, tangents, *, out: tangents[0] * _SQRT_PI_2 * xp.exp(out * out))
_erfinv.sample(
    lambda rng: [
        ((rng.uniform(-0.9, 0.9, (3, 4)),), {}),
        ((np.asarray(rng.uniform(-0.9, 0.9, ())),), {}),
    ]
)
_erfinv.reference(lambda torch, x: torch.erfinv(x))


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on [-1, 1] (+-inf at +-1, NaN outside), no SciPy needed.

    >>> tg.erfinv(tg.tensor([0.0, 0.5]))
    tensor([0.    , 0.4769])
    """
    return dispatch_unary(_erfinv, input)


@defop(saves="x", name="sinc")
def _sinc(xp, x):
    x = _fl(x)
    with quiet():
        return xp.sinc(x) if xp is np else _sinc_values(xp, x)


def _sinc_values(xp, x):
    safe = xp.where(x == 0, 1.0, x) * math.pi
    return xp.where(x == 0, 1.0, xp.sin(safe) / safe)


def _sinc_slope(xp, x):
    # (cos(pi x) - sinc(x)) / x, and 0 at x == 0 (PyTorch); the zero divides by 1 instead
    safe = xp.where(x == 0, 1.0, x)
    px = safe * math.pi
    return xp.where(x == 0, 0.0, (xp.cos(px) - xp.sin(px) / px) / safe)


_sinc.vjp(lambda xp, g, x: (g * _sinc_slope(xp, x),))
_sinc.jvp(lambda xp, tangents, x, *, out: tangents[0] * _sinc_slope(xp, x))
_sinc.sample(
    lambda rng: [
        ((rng.standard_normal((3, 4)) * 2.0,), {}),
        ((np.asarray(rng.standard_normal(())),), {}),
    ]
)
_sinc.reference(lambda torch, x: torch.sinc(x))


def sinc(input: Tensor) -> Tensor:
    """The normalized sinc, sin(pi x) / (pi x), and 1 at 0.

    >>> tg.sinc(tg.tensor([0.0, 0.5]))
    tensor([1.    , 0.6366])
    """
    return dispatch_unary(_sinc, input)


# ------------------------------------------------------------ float_power
def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in float64 (the result is float64, as in PyTorch); either
    may be a number. Differentiable through the cast and `pow`.

    >>> tg.float_power(tg.tensor([2], dtype=tg.float32), 2).dtype
    dtype('float64')
    """
    from .arith import pow
    from .casting import astype

    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power: expected at least one Tensor argument")
    base = astype(input, dtypes.float64) if isinstance(input, Tensor) else float(input)
    if isinstance(exponent, Tensor):
        exponent = astype(exponent, dtypes.float64)
    elif not isinstance(exponent, (int, float, np.number)):
        raise TypeError(f"float_power: exponent must be a Tensor or a number, got {exponent!r}")
    else:
        exponent = float(exponent)
    return pow(base, exponent)


# ------------------------------------------------------------ in-place variants
def _atan2_(self, other):
    """atan2 in place: self becomes atan2(self, other)."""
    return apply_inplace(_atan2, self, other)


def _hypot_(self, other):
    """hypot in place."""
    return apply_inplace(_hypot, self, other)


def _copysign_(self, other):
    """copysign in place."""
    return apply_inplace(_copysign, self, other)


def _frac_(self):
    """frac in place."""
    _float_only("frac_", self)
    return apply_inplace(_frac, self)


def _addcmul_(self, tensor1, tensor2, *, value=1):
    """addcmul in place: self += value * tensor1 * tensor2 (optimizers' second moments)."""
    _check_tensors("addcmul_", self, tensor1, tensor2)
    _check_value("addcmul_", value)
    return apply_inplace(_addcmul, self, tensor1, tensor2, value=value)


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    """addcdiv in place: self += value * tensor1 / tensor2 (Adam's step)."""
    _check_tensors("addcdiv_", self, tensor1, tensor2)
    _check_value("addcdiv_", value)
    _check_integer_division("addcdiv_", tensor1, tensor2)
    return apply_inplace(_addcdiv, self, tensor1, tensor2, value=value)


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    """nan_to_num in place."""
    return apply_inplace(_nan_to_num, self, nan=nan, posinf=posinf, neginf=neginf)


def _logit_(self, eps=None):
    """logit in place."""
    if eps is not None and not isinstance(eps, (int, float, np.number)):
        raise TypeError(f"logit_: eps must be a number or None, got {eps!r}")
    return apply_inplace(_logit, self, eps=eps)


def _heaviside_(self, values):
    """heaviside in place."""
    if isinstance(values, Tensor) and values.dtype != self.dtype:
        raise RuntimeError(
            "heaviside_: input and values must have the same dtype (as in PyTorch), got "
            f"{self.dtype} and {values.dtype}; convert values first"
        )
    return apply_inplace(_heaviside, self, values)


def _float_power_(self, exponent):
    """float_power in place: only a float64 tensor can hold the result (as in PyTorch)."""
    from .arith import _pow
    from .casting import astype

    if self.dtype != dtypes.float64:
        raise RuntimeError(
            f"float_power_: the base has dtype {self.dtype} but the result requires float64 "
            "(as in PyTorch); use t.double().float_power_(...) or the out-of-place float_power"
        )
    if isinstance(exponent, Tensor):
        exponent = astype(exponent, dtypes.float64)
    return apply_inplace(_pow, self, exponent)


#: in-place methods (Tensor.<name>) -> function; installed by tensor_methods
INPLACE_METHODS = {
    "atan2_": _atan2_,
    "arctan2_": _atan2_,
    "hypot_": _hypot_,
    "copysign_": _copysign_,
    "frac_": _frac_,
    "addcmul_": _addcmul_,
    "addcdiv_": _addcdiv_,
    "nan_to_num_": _nan_to_num_,
    "logit_": _logit_,
    "heaviside_": _heaviside_,
    "float_power_": _float_power_,
}

__all__ = [
    "atan2",
    "arctan2",
    "hypot",
    "log10",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "addcmul",
    "addcdiv",
    "nan_to_num",
    "logit",
    "deg2rad",
    "rad2deg",
    "copysign",
    "frac",
    "heaviside",
    "erfinv",
    "sinc",
    "float_power",
]
