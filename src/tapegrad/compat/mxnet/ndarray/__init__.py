"""`mx.nd`: MXNet's legacy NDArray API; its arrays are `mx.nd.NDArray`s.

`NDArray` is a `tapegrad.Tensor` subclass whose methods follow MXNet (`size` is an int,
`reshape` takes MXNet's codes, ...: see `ndarray.ndarray`). Everything made here is
float32 unless told otherwise (NumPy arrays included, as `mx.nd.array` does); legacy
argument names are kept (`shape=`, `ctx=`, `dim=` of `concat`, `num_outputs=` of
`split`, whose default axis is 1).

    >>> from tapegrad.compat import mxnet as mx
    >>> a = mx.nd.random.normal(shape=1)
    >>> a.attach_grad()
"""

from __future__ import annotations

import math

from ..._facade import core_aliases, facade_dir, facade_getattr
from ..._numpy_style import amax, amin, batch_matmul, repeat_elements
from ..._numpy_style import flip as _flip
from ..._numpy_style import split as _split
from ..._numpy_style import transpose as _transpose
from .. import _arrays, _shape_codes
from . import random, sparse  # noqa: F401
from .ndarray import NDArray, _axes


# MXNet's legacy positional order is (shape, ctx, dtype), not mx.np's (shape, dtype, ...)
def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """Zeros of `shape` (float32 unless `dtype`)."""
    _dense(stype, "zeros")
    return _arrays.zeros(shape, dtype, ctx, cls=NDArray, **kwargs)


def ones(shape, ctx=None, dtype=None, **kwargs):
    """Ones of `shape` (float32 unless `dtype`)."""
    return _arrays.ones(shape, dtype, ctx, cls=NDArray, **kwargs)


def empty(shape, ctx=None, dtype=None, stype=None):
    """Zeros of `shape` (tapegrad never hands out uninitialized memory)."""
    _dense(stype, "empty")
    return _arrays.empty(shape, dtype, ctx, cls=NDArray)


def full(shape, val, ctx=None, dtype=None, out=None):
    """`val` everywhere, of `shape`."""
    return _arrays.full(shape, val, dtype, ctx, cls=NDArray)


def _dense(stype, where):
    if stype not in (None, "default"):
        raise ValueError(
            f"nd.{where}: stype {stype!r} is not supported; only dense "
            "('default') storage exists in tapegrad"
        )


def _tg():
    import tapegrad

    return tapegrad


def array(source_array, ctx=None, dtype=None):
    """A float32 copy of `source_array` (an NDArray keeps its dtype)."""
    return _arrays.array(
        source_array,
        dtype=dtype,
        ctx=ctx,
        keep_array_dtype=isinstance(source_array, NDArray),
        cls=NDArray,
    )


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=None):
    return _arrays.arange(start, stop, step, dtype=dtype, ctx=ctx, repeat=repeat, cls=NDArray)


def zeros_like(data, **kwargs):
    return _arrays.zeros_like(data, cls=NDArray)


def ones_like(data, **kwargs):
    return _arrays.ones_like(data, cls=NDArray)


def dot(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """Matrix product (of the last axis of `lhs` and the first of `rhs` for N-D inputs)."""
    tg = _tg()
    if transpose_a:
        lhs = _transpose(lhs)
    if transpose_b:
        rhs = _transpose(rhs)
    if lhs.ndim <= 2 and rhs.ndim <= 2:
        return tg.matmul(lhs, rhs)
    return tg.tensordot(lhs, rhs, dims=([lhs.ndim - 1], [0]))


def batch_dot(lhs, rhs, transpose_a=False, transpose_b=False):
    return batch_matmul(lhs, rhs, transpose_a, transpose_b)


def transpose(data, axes=()):
    """Permute the axes (reversed when `axes` is empty)."""
    return _transpose(data, axes or None)


def split(data, num_outputs, axis=1, squeeze_axis=False):
    """`num_outputs` equal parts along `axis` (default 1, as MXNet); one part is returned bare."""
    parts = _split(data, int(num_outputs), axis)
    if squeeze_axis:
        parts = [_tg().squeeze(p, axis) for p in parts]
    return parts[0] if len(parts) == 1 else parts


def concat(*data, dim=1):
    """Join arrays along `dim` (default 1, as MXNet)."""
    return _tg().cat(list(data), dim=dim)


def stack(*data, axis=0):
    return _tg().stack(list(data), dim=axis)


def repeat(data, repeats, axis=None):
    return repeat_elements(data, repeats, axis)


def flip(data, axis):
    return _flip(data, axis)


def reshape(data, shape, reverse=False):
    """A view with a new shape; MXNet's codes 0, -1, -2, -3, -4 allowed (see NDArray.reshape)."""
    return _tg().reshape(data, _shape_codes.infer(data.shape, tuple(shape), reverse))


def flatten(data):
    """Collapse every axis but the first: shape (N, ...) -> (N, prod(...)), as MXNet."""
    return _tg().reshape(data, (data.shape[0], -1))


Flatten = flatten


def sum(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    axes = _axes(axis, exclude, data.ndim)
    return (
        _tg().sum(data)
        if axes is None and not keepdims
        else _tg().sum(
            data, dim=axes if axes is not None else tuple(range(data.ndim)), keepdim=keepdims
        )
    )


def mean(data, axis=None, keepdims=False, exclude=False):
    axes = _axes(axis, exclude, data.ndim)
    return (
        _tg().mean(data)
        if axes is None and not keepdims
        else _tg().mean(
            data, dim=axes if axes is not None else tuple(range(data.ndim)), keepdim=keepdims
        )
    )


def max(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return amax(data, _axes(axis, exclude, data.ndim), keepdims=keepdims)


def min(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return amin(data, _axes(axis, exclude, data.ndim), keepdims=keepdims)


def _into(result, out):
    """MXNet's `out=`: write the result into `out` (in place, unrecorded) and return it."""
    if out is None:
        return result
    from ....tensor import write_data

    write_data(out, result)
    return out


def clip(data, a_min, a_max, out=None):
    """`data` clipped into [a_min, a_max] (into `out` when given)."""
    return _into(_tg().clamp(data, a_min, a_max), out)


def square(data, out=None):
    """`data ** 2` (into `out` when given)."""
    return _into(_tg().square(data), out)


def softmax(data, axis=-1, temperature=None, **_):
    if temperature:
        data = data / temperature
    return _tg().nn.functional.softmax(data, dim=axis)


def log_softmax(data, axis=-1, temperature=None, **_):
    if temperature:
        data = data / temperature
    return _tg().nn.functional.log_softmax(data, dim=axis)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    oh = _tg().nn.functional.one_hot(indices.astype("int64"), depth).astype(dtype)
    if on_value != 1.0 or off_value != 0.0:
        oh = oh * (on_value - off_value) + off_value
    return oh


def add_n(*args):
    out = args[0]
    for a in args[1:]:
        out = out + a
    return out


def Activation(data, act_type):  # noqa: N802 - MXNet's operator name
    """relu, sigmoid, tanh, softrelu (softplus) or softsign."""
    from ..gluon.nn.activations import activation_fn

    return activation_fn(act_type)(data)


def FullyConnected(data, weight, bias=None, num_hidden=None, no_bias=False, flatten=True):  # noqa: N802
    """`data @ weight.T + bias`, flattening `data` to 2-D first unless `flatten=False`."""
    tg = _tg()
    if flatten and data.ndim > 2:
        data = tg.reshape(data, (data.shape[0], -1))
    return tg.nn.functional.linear(data, weight, None if no_bias else bias)


def Dropout(data, p=0.5, mode="training", **_):  # noqa: N802
    """Dropout that follows autograd.is_training() (or always drops with mode='always')."""
    from ..autograd import is_training

    train = mode == "always" or is_training()
    return _tg().nn.functional.dropout(data, p=p, training=train)


def waitall():
    """Nothing to wait for: tapegrad runs eagerly."""


def relu(data):
    return _tg().relu(data)


# ------------------------------------------------------------------ unary math, MXNet's names
def tan(data):
    return _tg().tan(data)


def sinh(data):
    return _tg().sinh(data)


def cosh(data):
    return _tg().cosh(data)


def arcsin(data):
    return _tg().asin(data)


def arccos(data):
    return _tg().acos(data)


def arctan(data):
    return _tg().atan(data)


def arcsinh(data):
    return _tg().asinh(data)


def arccosh(data):
    return _tg().acosh(data)


def arctanh(data):
    return _tg().atanh(data)


def radians(data):
    """Degrees to radians (`data * pi / 180`)."""
    return data * (math.pi / 180.0)


def degrees(data):
    """Radians to degrees (`data * 180 / pi`)."""
    return data * (180.0 / math.pi)


def log2(data):
    return _tg().log2(data)


def log10(data):
    return _tg().log(data) * (1.0 / math.log(10.0))


def cbrt(data):
    """The real cube root (negative for negative input)."""
    tg = _tg()
    return tg.sign(data) * tg.abs(data) ** (1.0 / 3.0)


def rcbrt(data):
    """1 / cbrt(data)."""
    return 1.0 / cbrt(data)


def LeakyReLU(
    data,
    act_type="leaky",
    slope=0.25,
    gamma=None,
    lower_bound=0.125,  # noqa: N802
    upper_bound=0.334,
):
    """leaky (slope), elu (slope), selu, gelu or prelu (`gamma`: the learned slopes)."""
    tg = _tg()
    f = tg.nn.functional
    if act_type == "leaky":
        return f.leaky_relu(data, slope)
    if act_type == "elu":
        return f.elu(data, slope)
    if act_type == "selu":
        return f.selu(data)
    if act_type == "gelu":
        return f.gelu(data)
    if act_type == "prelu":
        if gamma is None:
            raise ValueError("LeakyReLU(act_type='prelu') needs gamma= (the slopes)")
        if data.ndim > 1 and gamma.ndim == 1 and gamma.shape[0] > 1:
            gamma = tg.reshape(gamma, (1, -1) + (1,) * (data.ndim - 2))
        return tg.where(data > 0, data, data * gamma)
    raise ValueError(
        f"LeakyReLU: act_type {act_type!r} is not one of leaky, elu, selu, gelu, "
        "prelu (rrelu is not provided)"
    )


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, **kwargs):
    """Samples from U[low, high) (`mx.nd.random.uniform`)."""
    return random.uniform(low, high, shape, dtype=dtype, ctx=ctx, **kwargs)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, **kwargs):
    """Samples from N(loc, scale**2) (`mx.nd.random.normal`)."""
    return random.normal(loc, scale, shape, dtype=dtype, ctx=ctx, **kwargs)


def reset_arrays(*arrays, num_arrays=None) -> None:
    """Set every array to zeros, in place (MXNet's fast reset of gradient buffers)."""
    from ....tensor import write_data

    if num_arrays is not None and num_arrays != len(arrays):
        raise ValueError(f"reset_arrays: num_arrays={num_arrays} but {len(arrays)} arrays given")
    for a in arrays:
        write_data(a, 0)


def save(fname, data) -> None:
    """Write an NDArray, a list of NDArrays or a dict of name -> NDArray to `fname`
    (tapegrad's file format; `nd.load` reads it back in the same structure)."""
    from .... import io

    if isinstance(data, NDArray):
        data = [data]
    if not isinstance(data, (list, tuple, dict)):
        raise TypeError(
            f"nd.save: data must be an NDArray, a list or a dict of NDArrays, got "
            f"{type(data).__name__}"
        )
    io.save(data if isinstance(data, dict) else list(data), fname)


def load(fname, ctx=None):
    """What `nd.save` wrote: a list or a dict of NDArrays."""
    from .... import io

    loaded = io.load(fname)
    if isinstance(loaded, dict):
        return {k: array(v, ctx=ctx) for k, v in loaded.items()}
    return [array(v, ctx=ctx) for v in loaded]


def sigmoid(data):
    return _tg().sigmoid(data)


ALIASES = core_aliases(
    "exp",
    "log",
    "sqrt",
    "abs",
    "sign",
    "tanh",
    "sin",
    "cos",
    "log1p",
    "expm1",
    "reciprocal",
    "rsqrt",
    "floor",
    "ceil",
    "round",
    "maximum",
    "minimum",
    "where",
    "prod",
    "argmax",
    "argmin",
    "norm",
    "expand_dims",
    "broadcast_to",
    "swapaxes",
    "tile",
    negative="neg",
    power="pow",
    broadcast_add="add",
    broadcast_sub="sub",
    broadcast_mul="mul",
    broadcast_div="div",
    broadcast_maximum="maximum",
    broadcast_minimum="minimum",
    elemwise_add="add",
    elemwise_sub="sub",
    elemwise_mul="mul",
    elemwise_div="div",
)
# MXNet's mx.nd.np / mx.nd.npx: the NumPy-style ops, which a Gluon 1.x `hybrid_forward(F, ...)`
# reaches as F.np / F.npx under @use_np
ALIASES.update(np="tapegrad.compat.mxnet.numpy:", npx="tapegrad.compat.mxnet.numpy_extension:")
HINTS = {
    "Convolution": "use mx.gluon.nn.Conv2D, or tapegrad.nn.functional.conv2d",
    "Pooling": "use mx.gluon.nn.MaxPool2D, or tapegrad.nn.functional.max_pool2d",
    "BatchNorm": "use mx.gluon.nn.BatchNorm",
    "sparse": "sparse storage does not exist in tapegrad; use dense arrays",
    "contrib": "MXNet's contrib operators are not provided",
    "sort": "not provided; use .asnumpy() and NumPy",
    "topk": "not provided; use .asnumpy() and NumPy",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.nd)", ALIASES, HINTS)
__dir__ = facade_dir(__name__, ALIASES)
