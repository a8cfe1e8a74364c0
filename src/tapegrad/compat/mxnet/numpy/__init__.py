"""`mx.np`: MXNet's NumPy-compatible API; its arrays are `mx.np.ndarray`s.

`ndarray` is a subclass of `mx.nd.NDArray` (as in MXNet) whose methods follow
`mxnet.numpy` (see `numpy.multiarray`); creation defaults to float32 and accepts `ctx=`;
functions follow NumPy's signatures (`axis=`, `keepdims=`), also where PyTorch differs
(`transpose`, `split`, `repeat`, `flip`, `std`/`var`, `max`/`min`, `pad`, `dot`), and
`reshape`/`transpose` return copies, as `mxnet.numpy` does.

    >>> from tapegrad.compat import mxnet as mx
    >>> x = mx.np.array([1, 2, 3])      # float32, as in MXNet
    >>> x.attach_grad()
"""

from __future__ import annotations

import numpy as _onp

from ..._facade import core_aliases, facade_dir, facade_getattr
from ..._numpy_style import (  # noqa: F401
    amax,
    amin,
    clip,
    concatenate,
    dsplit,
    flip,
    hsplit,
    pad,
    split,
    stack,
    std,
    var,
    vsplit,
)
from ..._numpy_style import reshape as _reshape
from ..._numpy_style import transpose as _transpose
from .. import _arrays
from . import linalg, random  # noqa: F401
from .multiarray import ndarray

arange = _arrays.bind(_arrays.arange, ndarray)
array = _arrays.bind(_arrays.array, ndarray)
empty = _arrays.bind(_arrays.empty, ndarray)
eye = _arrays.bind(_arrays.eye, ndarray)
full = _arrays.bind(_arrays.full, ndarray)
full_like = _arrays.bind(_arrays.full_like, ndarray)
linspace = _arrays.bind(_arrays.linspace, ndarray)
ones = _arrays.bind(_arrays.ones, ndarray)
ones_like = _arrays.bind(_arrays.ones_like, ndarray)
zeros = _arrays.bind(_arrays.zeros, ndarray)
zeros_like = _arrays.bind(_arrays.zeros_like, ndarray)


def reshape(a, newshape, order="C"):
    """A copy of `a` with NumPy's new shape (mxnet.numpy's reshape always copies)."""
    import tapegrad as tg

    return tg.clone(_reshape(a, newshape, order))


def transpose(a, axes=None):
    """A copy of `a` with its axes permuted (reversed by default); never a view, as in
    mxnet.numpy."""
    import tapegrad as tg

    return tg.clone(_transpose(a, axes))


float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
int8 = _onp.int8
int32 = _onp.int32
int64 = _onp.int64
uint8 = _onp.uint8
bool_ = _onp.bool_
pi = _onp.pi
e = _onp.e
inf = _onp.inf
nan = _onp.nan
newaxis = None

max = amax  # noqa: A001  NumPy's max returns the values only
min = amin  # noqa: A001


def repeat(a, repeats, axis=None):
    """NumPy's repeat: each element `repeats` times along `axis` (flattened when None)."""
    from ..._numpy_style import repeat_elements

    return repeat_elements(a, repeats, axis)


def dot(a, b, out=None):
    """NumPy's dot: inner product of vectors, matrix product of 2-D arrays, and for N-D the
    sum over the last axis of `a` and the second-to-last of `b`."""
    import tapegrad as tg

    if not isinstance(a, tg.Tensor) or not isinstance(b, tg.Tensor) or a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return tg.matmul(a, b)
    return tg.tensordot(a, b, dims=([a.ndim - 1], [b.ndim - 2]))


def tensordot(a, b, axes=2):
    """NumPy's tensordot (`axes`: a count, or two lists of axes)."""
    import tapegrad as tg

    return tg.tensordot(a, b, dims=axes)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (over the flattened array when None, as NumPy)."""
    import tapegrad as tg

    if axis is None:
        a, axis = tg.reshape(a, (-1,)), 0
    return tg.cumsum(a, dim=axis)


def squeeze(a, axis=None):
    import tapegrad as tg

    if axis is None:
        return tg.squeeze(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for ax in sorted((x % a.ndim for x in axes), reverse=True):
        a = tg.squeeze(a, ax)
    return a


def shape(a):
    return a.shape


def size(a, axis=None):
    return a.numel() if axis is None else a.shape[axis]


def ndim(a):
    return a.ndim


ALIASES = core_aliases(
    # elementwise
    "abs",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "sqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sign",
    "floor",
    "ceil",
    "round",
    "maximum",
    "minimum",
    "where",
    "add",
    # reductions (NumPy's axis=/keepdims= are accepted by the core)
    "sum",
    "mean",
    "prod",
    "argmax",
    "argmin",
    "all",
    "any",
    # linear algebra and shapes
    "matmul",
    "einsum",
    "outer",
    "expand_dims",
    "swapaxes",
    "moveaxis",
    "broadcast_to",
    "tile",
    absolute="abs",
    negative="neg",
    around="round",
    power="pow",
    subtract="sub",
    multiply="mul",
    divide="div",
    true_divide="div",
    # comparisons (never differentiable)
    equal="eq",
    not_equal="ne",
    greater="gt",
    greater_equal="ge",
    less="lt",
    less_equal="le",
)
HINTS = {
    "asnumpy": "arrays have an .asnumpy() method",
    "save": "use tapegrad.save(dict_of_arrays, path)",
    "load": "use tapegrad.load(path)",
    "sort": "not provided (no differentiable sort in tapegrad yet); use .asnumpy() and NumPy",
    "unique": "not provided; use numpy.unique(x.asnumpy())",
    "fft": "not provided by tapegrad",
}
__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.np)", ALIASES, HINTS)
__dir__ = facade_dir(__name__, ALIASES)
