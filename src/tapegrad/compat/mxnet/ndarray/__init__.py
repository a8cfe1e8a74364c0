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

from ..._facade import core_aliases, facade_dir, facade_getattr
from ..._numpy_style import amax, amin, batch_matmul, repeat_elements
from ..._numpy_style import flip as _flip
from ..._numpy_style import split as _split
from ..._numpy_style import transpose as _transpose
from .. import _arrays, _shape_codes
from . import random  # noqa: F401
from .ndarray import NDArray, _axes

empty = _arrays.bind(_arrays.empty, NDArray)
full = _arrays.bind(_arrays.full, NDArray)
ones = _arrays.bind(_arrays.ones, NDArray)
zeros = _arrays.bind(_arrays.zeros, NDArray)


def _tg():
    import tapegrad

    return tapegrad


def array(source_array, ctx=None, dtype=None):
    """A float32 copy of `source_array` (an NDArray keeps its dtype)."""
    return _arrays.array(source_array, dtype=dtype, ctx=ctx,
                         keep_array_dtype=isinstance(source_array, NDArray), cls=NDArray)


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
    return _tg().sum(data) if axes is None and not keepdims else _tg().sum(
        data, dim=axes if axes is not None else tuple(range(data.ndim)), keepdim=keepdims)


def mean(data, axis=None, keepdims=False, exclude=False):
    axes = _axes(axis, exclude, data.ndim)
    return _tg().mean(data) if axes is None and not keepdims else _tg().mean(
        data, dim=axes if axes is not None else tuple(range(data.ndim)), keepdim=keepdims)


def max(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return amax(data, _axes(axis, exclude, data.ndim), keepdims=keepdims)


def min(data, axis=None, keepdims=False, exclude=False):  # noqa: A001
    return amin(data, _axes(axis, exclude, data.ndim), keepdims=keepdims)


def clip(data, a_min, a_max):
    return _tg().clamp(data, a_min, a_max)


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


def sigmoid(data):
    return _tg().sigmoid(data)


ALIASES = core_aliases(
    "exp", "log", "sqrt", "square", "abs", "sign", "tanh", "sin", "cos", "log1p", "expm1",
    "reciprocal", "rsqrt", "floor", "ceil", "round", "maximum", "minimum", "where", "prod",
    "argmax", "argmin", "norm", "expand_dims", "broadcast_to", "swapaxes", "tile", negative="neg",
    power="pow", broadcast_add="add", broadcast_sub="sub", broadcast_mul="mul",
    broadcast_div="div", broadcast_maximum="maximum", broadcast_minimum="minimum",
    elemwise_add="add", elemwise_sub="sub", elemwise_mul="mul", elemwise_div="div",
)
HINTS = {
    "Convolution": "use mx.gluon.nn.Conv2D, or tapegrad.nn.functional.conv2d",
    "Pooling": "use mx.gluon.nn.MaxPool2D, or tapegrad.nn.functional.max_pool2d",
    "BatchNorm": "use mx.gluon.nn.BatchNorm",
    "save": "use tapegrad.save(dict_of_arrays, path)",
    "load": "use tapegrad.load(path)",
    "sparse": "sparse storage does not exist in tapegrad; use dense arrays",
    "contrib": "MXNet's contrib operators are not provided",
    "sort": "not provided; use .asnumpy() and NumPy",
    "topk": "not provided; use .asnumpy() and NumPy",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.nd)", ALIASES, HINTS)
__dir__ = facade_dir(__name__, ALIASES)
