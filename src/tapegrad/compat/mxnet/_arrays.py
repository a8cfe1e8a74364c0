"""Array creation with MXNet's defaults, for `mx.nd` and `mx.np` (each passes its class).

Defaults set here: arrays made from Python numbers are float32 (MXNet's default dtype,
integers included); every creation function takes `ctx=` (and `device=`). The results are
the caller's array class (`cls`): `mx.nd.NDArray` or `mx.np.ndarray`.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor, as_class
from .._numpy_style import _shape, repeat_elements
from .context import device_of, placed

_F32 = dtypes.float32


def _dtype(dtype, default=_F32):
    return default if dtype is None else dtypes.as_dtype(dtype)


def bind(fn, cls: type):
    """`fn` with its `cls` argument fixed: the creation function of one facade module."""

    @functools.wraps(fn)
    def made(*args, **kwargs):
        return fn(*args, cls=cls, **kwargs)

    return made


def array(obj, dtype=None, ctx=None, *, device=None, keep_array_dtype=True, cls=Tensor):
    """A new array holding a copy of `obj`.

    Python numbers and lists become float32 (MXNet's default), whatever their kind; NumPy
    arrays and tensors keep their dtype (`mx.np`) unless `keep_array_dtype=False` (`mx.nd`,
    where everything but an NDArray becomes float32).
    """
    dev = device_of(device if device is not None else ctx)
    if isinstance(obj, Tensor):
        t = creation.tensor(obj, dtype=dtype, device=dev)
    elif isinstance(obj, np.ndarray) and dtype is None and keep_array_dtype:
        t = creation.tensor(obj, device=dev)
    else:
        arr = np.asarray(obj)
        if dtype is None:
            dtype = _F32 if arr.dtype.kind in "iuf" or not keep_array_dtype else None
        t = creation.tensor(arr, dtype=dtype, device=dev)
    return placed(as_class(t, cls), device if device is not None else ctx)


def zeros(shape, dtype=None, ctx=None, *, order="C", device=None, cls=Tensor, **_):
    t = creation.zeros(_shape(shape), dtype=_dtype(dtype), device=device_of(device or ctx))
    return placed(as_class(t, cls), device or ctx)


def ones(shape, dtype=None, ctx=None, *, order="C", device=None, cls=Tensor, **_):
    t = creation.ones(_shape(shape), dtype=_dtype(dtype), device=device_of(device or ctx))
    return placed(as_class(t, cls), device or ctx)


def empty(shape, dtype=None, ctx=None, *, order="C", device=None, cls=Tensor, **_):
    """Zeros (tapegrad never hands out uninitialized memory)."""
    return zeros(shape, dtype, ctx, device=device, cls=cls)


def full(shape, fill_value, dtype=None, ctx=None, *, order="C", device=None, cls=Tensor, **_):
    t = creation.full(
        _shape(shape), fill_value, dtype=_dtype(dtype), device=device_of(device or ctx)
    )
    return placed(as_class(t, cls), device or ctx)


def arange(
    start, stop=None, step=1, dtype=None, ctx=None, *, repeat=1, device=None, cls=Tensor, **_
):
    """Values from `start` to `stop` by `step`, float32 unless `dtype` (as MXNet)."""
    t = creation.arange(start, stop, step, dtype=_dtype(dtype), device=device_of(device or ctx))
    t = as_class(t, cls)
    return repeat_elements(t, int(repeat)) if repeat != 1 else t


def linspace(
    start, stop, num=50, endpoint=True, dtype=None, ctx=None, *, device=None, cls=Tensor, **_
):
    arr = np.linspace(start, stop, int(num), endpoint=endpoint)
    return as_class(creation.tensor(arr, dtype=_dtype(dtype), device=device_of(device or ctx)), cls)


def eye(N, M=None, k=0, dtype=None, ctx=None, *, device=None, cls=Tensor, **_):
    t = creation.tensor(np.eye(N, M, k), dtype=_dtype(dtype), device=device_of(device or ctx))
    return as_class(t, cls)


def zeros_like(a, dtype=None, *, cls=Tensor, **_):
    return as_class(creation.zeros_like(a, dtype=dtype), cls)


def ones_like(a, dtype=None, *, cls=Tensor, **_):
    return as_class(creation.ones_like(a, dtype=dtype), cls)


def full_like(a, fill_value, dtype=None, *, cls=Tensor, **_):
    return as_class(creation.full_like(a, fill_value, dtype=dtype), cls)
