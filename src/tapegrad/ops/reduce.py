"""Reductions: sum mean prod amax amin max min argmax argmin all any (var std logsumexp norm
cumsum cumprod are in statistics.py).

Internal ops have NumPy's names and signatures (`sum(x, axis=None, keepdims=False)`, also
callable NumPy-style with `axis` positional), because rules call `xp.sum(g, axis=..)` on
arrays and on tensors alike. Public functions follow PyTorch: `dim=`/`axis=`,
`keepdim=`/`keepdims=`, `var`/`std` with Bessel's correction by default, `max(x, dim)`
returning `(values, indices)`. Ties in amax/amin/max/min share the gradient equally.

    >>> x = tg.tensor([[1.0, 3.0], [3.0, 2.0]], requires_grad=True)
    >>> x.max().backward(); x.grad
    tensor([[0. , 0.5],
            [0.5, 0. ]])
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from .. import dtypes
from ..tensor import Tensor
from .arguments import check_scalar_dims
from .quiet import quiet
from .registry import NumpyStyleOp, defop
from .xp import linear_jvp

_inf = math.inf
_nan = math.nan


class _ReductionOp(NumpyStyleOp):
    """A reduction callable the NumPy way (`xp.sum(g, 0)`, an axis list or tuple) whose rule
    learns the input's shape as the `in_shape` parameter, so the input need not be saved."""

    def arguments(self, args, params):
        args, params = NumpyStyleOp.arguments(self, args, params)
        axis = params.get("axis")
        if isinstance(axis, list):
            params["axis"] = tuple(axis)
        if axis is not None and getattr(args[0], "ndim", None) == 0:
            check_scalar_dims(self.name, axis)  # dim 0 or -1 of a 0-d input: all of it
            params["axis"] = None
        return args, params


class _ReductionOptions(TypedDict):
    """`defop`'s keywords that `**_REDUCTION` passes, typed so each is checked against
    `defop`'s own parameter (a plain dict would type them all as `object`)."""

    params: Sequence[str]
    in_shape: bool
    op_class: type[NumpyStyleOp]


# the options every differentiable reduction registers with
_REDUCTION: _ReductionOptions = {
    "params": ("axis", "keepdims"),
    "in_shape": True,
    "op_class": _ReductionOp,
}


def _axes(axis, ndim):
    """Reduced axes as a sorted tuple of non-negative ints (none for a 0-d input)."""
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0:
        check_scalar_dims("reduction", axis)
        return ()
    if isinstance(axis, tuple):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def _kept_shape(in_shape, axis):
    axes = _axes(axis, len(in_shape))
    return tuple(1 if i in axes else n for i, n in enumerate(in_shape))


def _count(in_shape, axis):
    return math.prod(in_shape[a] for a in _axes(axis, len(in_shape)))


def _kept(xp, t, in_shape, axis, keepdims):
    """`t`, a reduction's output (or its gradient), with the reduced axes kept as size 1."""
    if keepdims or axis is None:  # a 0-d result broadcasts against anything as it is
        return t
    return xp.reshape(t, _kept_shape(in_shape, axis))


def _reduce_samples(rng, positive=False):
    def a(*shape):
        x = rng.standard_normal(shape)
        return np.asarray(np.abs(x) + 0.5) if positive else x

    return [
        ((a(3, 4),), {}),
        ((a(3, 4),), {"axis": 1}),
        ((a(2, 3, 4),), {"axis": -1, "keepdims": True}),
        ((a(2, 3, 4),), {"axis": (0, 2)}),
        ((a(),), {}),
        ((a(3, 4),), {"axis": 0, "keepdims": True}),
    ]


def _torch_dims_list(axis):
    return list(axis) if isinstance(axis, tuple) else [axis]


def _torch_dim(axis):
    return list(axis) if isinstance(axis, tuple) else axis


# ------------------------------------------------------------ sum, mean, prod
@defop(name="sum", **_REDUCTION)
def _sum(xp, x, *, axis=None, keepdims=False, in_shape=None):
    return xp.sum(x, axis=axis, keepdims=keepdims)


@_sum.vjp
def _(xp, g, axis=None, keepdims=False, in_shape=()):
    return (xp.broadcast_to(_kept(xp, g, in_shape, axis, keepdims), in_shape),)


_sum.jvp(linear_jvp(_sum))  # linear: the tangent goes through the op


@defop(name="mean", **_REDUCTION)
def _mean(xp, x, *, axis=None, keepdims=False, in_shape=None):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        n = _count(x.shape, axis)
        if n == 0:  # the mean of nothing is NaN, as in PyTorch (NumPy would warn)
            return xp.full(
                np.sum(np.empty(x.shape), axis=axis, keepdims=keepdims).shape,
                math.nan,
                dtype=x.dtype if x.dtype.kind == "f" else np.float64,
            )
        if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # NumPy accumulates float16 in float32
            return xp.mean(x, axis=axis, keepdims=keepdims)
        return xp.sum(x, axis=axis, keepdims=keepdims) / n


@_mean.vjp
def _(xp, g, axis=None, keepdims=False, in_shape=()):
    g = _kept(xp, g, in_shape, axis, keepdims) / builtins.max(_count(in_shape, axis), 1)
    return (xp.broadcast_to(g, in_shape),)


_mean.jvp(linear_jvp(_mean))  # linear: the tangent goes through the op


@defop(saves=("x", "out"), name="prod", **_REDUCTION)
def _prod(xp, x, *, axis=None, keepdims=False, in_shape=None):
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is nan, as in PyTorch
        return xp.prod(x, axis=axis, keepdims=keepdims)


@_prod.vjp
def _(xp, g, x, out, axis=None, keepdims=False, in_shape=()):
    # d out / d x_i = product of the others, as PyTorch computes it: out / x_i where nothing
    # is zero; where x_i is the only zero, the product of the non-zeros; beside one zero, 0
    # (NaN if an inf or NaN is among the others, since 0 * inf is NaN); with two zeros or
    # more, 0 everywhere. (With two zeros or more the second derivative this gives is 0.)
    out = _kept(xp, out, in_shape, axis, keepdims)
    g = _kept(xp, g, in_shape, axis, keepdims)
    zero = x == 0
    nonzero = xp.where(zero, 1.0, x)
    n_zeros = xp.sum(zero, axis=axis, keepdims=True)
    at_zero = xp.where(n_zeros == 1, xp.prod(nonzero, axis=axis, keepdims=True), 0.0)
    # out / x_i is right (also for the second derivative) unless the row holds an inf or NaN
    bad = xp.logical_not(xp.isfinite(x))
    n_bad = xp.sum(bad, axis=axis, keepdims=True)
    beside_zero = xp.where((n_zeros == 1) & (n_bad - bad > 0), _nan, 0.0)
    quotient = xp.where((n_zeros == 0) | (n_bad == 0), out / nonzero, beside_zero)
    return (g * xp.where(zero, at_zero, quotient),)


for _op in (_sum, _mean):
    _op.sample(_reduce_samples)
_prod.sample(
    lambda rng: (
        _reduce_samples(rng) + [((np.array([[1.5, 0.0, 2.0], [0.0, -0.7, 3.0]]),), {"axis": 1})]
    )
)
_sum.reference(
    lambda torch, x, axis=None, keepdims=False: (
        torch.sum(x, dim=_torch_dim(axis), keepdim=keepdims) if axis is not None else torch.sum(x)
    )
)
_mean.reference(
    lambda torch, x, axis=None, keepdims=False: (
        torch.mean(x, dim=_torch_dim(axis), keepdim=keepdims) if axis is not None else torch.mean(x)
    )
)


def _torch_prod(torch, x, axis=None, keepdims=False):
    if axis is None:
        return torch.prod(x)
    # torch.prod takes one dim: a 0-d input's (0 or -1) goes to it as given, to be checked
    axes = sorted(_axes(axis, x.ndim), reverse=True) if x.ndim else _torch_dims_list(axis)
    for a in axes:
        x = torch.prod(x, dim=a, keepdim=keepdims)
    return x


_prod.reference(_torch_prod)


# ------------------------------------------------------------ amax, amin (and NumPy's max, min)
def _extreme_rule(xp, g, x, out, axis=None, keepdims=False, in_shape=()):
    hit = (x == _kept(xp, out, in_shape, axis, keepdims)).astype(g.dtype)
    share = _kept(xp, g, in_shape, axis, keepdims) / xp.sum(hit, axis=axis, keepdims=True)
    return (hit * share,)  # ties share the gradient equally


@defop(saves=("x", "out"), name="amax", **_REDUCTION)
def _amax(xp, x, *, axis=None, keepdims=False, in_shape=None):
    return xp.max(x, axis=axis, keepdims=keepdims)


@defop(saves=("x", "out"), name="amin", **_REDUCTION)
def _amin(xp, x, *, axis=None, keepdims=False, in_shape=None):
    return xp.min(x, axis=axis, keepdims=keepdims)


# NumPy's names for the same two, for rules (`xp.max(g, axis)`)
@defop(saves=("x", "out"), name="max", **_REDUCTION)
def _max_op(xp, x, *, axis=None, keepdims=False, in_shape=None):
    return xp.max(x, axis=axis, keepdims=keepdims)


@defop(saves=("x", "out"), name="min", **_REDUCTION)
def _min_op(xp, x, *, axis=None, keepdims=False, in_shape=None):
    return xp.min(x, axis=axis, keepdims=keepdims)


def _torch_extreme(torch_name):
    return lambda torch, x, axis=None, keepdims=False: getattr(torch, torch_name)(
        x, dim=_torch_dim(axis) if axis is not None else (), keepdim=keepdims
    )


for _op, _torch_name in ((_amax, "amax"), (_amin, "amin"), (_max_op, "amax"), (_min_op, "amin")):
    _op.vjp(_extreme_rule)
    _op.sample(_reduce_samples)
    _op.reference(_torch_extreme(_torch_name))


# non-differentiable reductions, NumPy's signatures
@defop(differentiable=False)
def _argmax(xp, x, *, axis=None, keepdims=False):
    return xp.argmax(x, axis=axis, keepdims=keepdims)


@defop(differentiable=False)
def _argmin(xp, x, *, axis=None, keepdims=False):
    return xp.argmin(x, axis=axis, keepdims=keepdims)


@defop(differentiable=False)
def _all(xp, x, *, axis=None, keepdims=False):
    return xp.all(x, axis=axis, keepdims=keepdims)


@defop(differentiable=False)
def _any(xp, x, *, axis=None, keepdims=False):
    return xp.any(x, axis=axis, keepdims=keepdims)


# ------------------------------------------------------------ public functions
def _dim_error(name, dim, ndim):
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    return IndexError(
        f"{name}(): Dimension out of range (expected to be in range of [{lo}, {hi}], but got "
        f"{dim}); the tensor has {ndim} dimension{'s' if ndim != 1 else ''}"
    )


def _one_dim(name, d, ndim):
    if isinstance(d, Tensor):
        d = d.item()
    if isinstance(d, (bool, float)) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{name}(): dim must be an int or a tuple of ints, got {d!r}")
    n = builtins.max(ndim, 1)
    if not -n <= d < n:
        raise _dim_error(name, d, ndim)
    return int(d) % n


def _dims(name, x, dim, axis):
    """PyTorch's dim (or NumPy's axis) as the internal ops want it: None (every dimension),
    an int or a tuple of non-negative ints. A 0-d tensor accepts dim 0 and -1."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}(): got both dim={dim!r} and axis={axis!r}; pass only one")
        dim = axis
    if dim is None:
        return None
    ndim = x.ndim
    if isinstance(dim, (tuple, list)):
        if not dim:
            return None  # an empty tuple reduces every dimension, as in PyTorch
        dims = tuple(_one_dim(name, d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{name}(): dim {dim!r} names a dimension more than once")
        return dims if ndim else None
    d = _one_dim(name, dim, ndim)
    return d if ndim else None


def _refuse_empty(name, x, d):
    """A max/min/argmax over no element has no value: PyTorch's errors, not NumPy's ("zero-size
    array to reduction operation maximum which has no identity")."""
    shape = tuple(x.shape)
    if 0 not in shape:
        return
    if d is None:
        raise RuntimeError(
            f"{name}(): expected a reduction dim for an empty tensor (shape {shape}); "
            "pass dim= (over a non-empty dimension)"
        )
    for k in d if isinstance(d, tuple) else (d,):
        if shape[k] == 0:
            raise IndexError(
                f"{name}(): expected reduction dim {k} to have non-zero size (shape {shape})"
            )


def _keep(keepdim, keepdims):
    return bool(keepdims) if keepdims is not None else bool(keepdim)


def _cast(x, dtype):
    if dtype is None:
        return x
    from .elementwise import astype

    return astype(x, dtype, copy=False)


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):  # noqa: A001
    """Sum over `dim` (int or tuple; None or () for all), optionally as `dtype` first.

    >>> tg.tensor([[1, 2], [3, 4]]).sum(dim=0)
    tensor([4, 6])
    """
    d = _dims("sum", input, dim, axis)
    return _sum(_cast(input, dtype), d, keepdims=_keep(keepdim, keepdims))


def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    """Arithmetic mean over `dim`. Integer tensors need `dtype=` (as in PyTorch)."""
    d = _dims("mean", input, dim, axis)
    x = _cast(input, dtype)
    if not dtypes.is_floating(x.dtype):
        raise RuntimeError(
            f"mean(): could not infer the output dtype: the input is {x.dtype}; pass a floating "
            "dtype, e.g. mean(x, dtype=tg.float32), or convert first (x.float())"
        )
    return _mean(x, d, keepdims=_keep(keepdim, keepdims))


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
    """Product over `dim`; the gradient is exact where elements are zero."""
    d = _dims("prod", input, dim, axis)
    return _prod(_cast(input, dtype), d, keepdims=_keep(keepdim, keepdims))


def amax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Maximum over `dim` (all when omitted); tied maxima share the gradient equally."""
    d = _dims("amax", input, dim, axis)
    _refuse_empty("amax", input, d)
    return _amax(input, d, keepdims=_keep(keepdim, keepdims))


def amin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Minimum over `dim` (all when omitted); tied minima share the gradient equally."""
    d = _dims("amin", input, dim, axis)
    _refuse_empty("amin", input, d)
    return _amin(input, d, keepdims=_keep(keepdim, keepdims))


def _arg_extreme(op, what, input, dim, keepdim, axis, keepdims):
    d = _dims(what, input, dim, axis)
    if isinstance(d, tuple):
        raise TypeError(f"{what}(): dim must be a single int, not a tuple")
    _refuse_empty(what, input, d)
    # keepdim without dim keeps every dimension as size 1, as PyTorch ((2, 3) -> (1, 1))
    return op(input, axis=d, keepdims=_keep(keepdim, keepdims))


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the (first) maximum, over the flattened tensor when `dim` is None."""
    return _arg_extreme(_argmax, "argmax", input, dim, keepdim, axis, keepdims)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the (first) minimum, over the flattened tensor when `dim` is None."""
    return _arg_extreme(_argmin, "argmin", input, dim, keepdim, axis, keepdims)


# named as PyTorch's torch.return_types are, so the repr reads `max(values=..., indices=...)`;
# mypy wants a namedtuple named after its variable, hence the ignore
MaxResult = namedtuple("max", ["values", "indices"])  # type: ignore[name-match]
MinResult = namedtuple("min", ["values", "indices"])  # type: ignore[name-match]


def _extreme_public(name, values_op, index_op, pair_fn, result):
    def fn(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if isinstance(dim, Tensor):
            return pair_fn(input, dim)  # max(x, y): elementwise
        if dim is None and axis is None:
            _refuse_empty(name, input, None)
            return values_op(input)
        d = _dims(name, input, dim, axis)
        if isinstance(d, tuple):
            raise TypeError(f"{name}(): dim must be a single int; for several use a{name}()")
        _refuse_empty(name, input, d)
        keep = _keep(keepdim, keepdims)
        indices = index_op(input, axis=d, keepdims=keep and d is not None)
        return result(values_op(input, d, keepdims=keep), indices)

    fn.__name__ = name
    return fn


def _maximum(a, b):
    from .elementwise import maximum

    return maximum(a, b)


def _minimum(a, b):
    from .elementwise import minimum

    return minimum(a, b)


max = _extreme_public("max", _amax, _argmax, _maximum, MaxResult)  # noqa: A001
min = _extreme_public("min", _amin, _argmin, _minimum, MinResult)  # noqa: A001
max.__doc__ = """max(x) -> the largest value; max(x, dim, keepdim=False) -> (values, indices);
max(x, other) -> elementwise maximum. Tied maxima share the gradient equally."""
min.__doc__ = """min(x) -> the smallest value; min(x, dim, keepdim=False) -> (values, indices);
min(x, other) -> elementwise minimum. Tied minima share the gradient equally."""


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where every element along `dim` is non-zero (a bool tensor)."""
    d = _dims("all", input, dim, axis)
    return _all(input, axis=d, keepdims=_keep(keepdim, keepdims))


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where some element along `dim` is non-zero (a bool tensor)."""
    d = _dims("any", input, dim, axis)
    return _any(input, axis=d, keepdims=_keep(keepdim, keepdims))


__all__ = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any"]
