"""Making tensors: from data, filled, ranges and random."""

from __future__ import annotations

import operator

import numpy as np

from . import backend, dtypes
from .random import resolve
from .tensor import Tensor, _wrap

__all__ = [
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "rand",
    "randn",
    "randint",
    "normal",
    "uniform",
    "rand_like",
    "randn_like",
    "randperm",
]


def _finish(arr, dtype, device, requires_grad) -> Tensor:
    if dtype is not None:
        arr = arr.astype(dtypes.as_dtype(dtype), copy=False)
    t = _wrap(backend.to_device(arr, backend.normalize_device(device)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:  # operator.index: 2.5 is refused, not truncated (PyTorch raises TypeError too)
        shape = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"sizes must be integers, got {size!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def tensor(data, dtype=None, requires_grad=False, device="cpu", *, ctx=None) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, scalars, arrays or a Tensor).

    Python floats become float32 (the default dtype), ints int64, bools bool; NumPy arrays
    keep their dtype unless `dtype` is given.

    >>> tg.tensor([[1, 2], [3, 4]]).dtype
    dtype('int64')
    """
    if isinstance(data, Tensor):
        data = data._data
    arr = dtypes.result_array(data, dtype)
    arr = np.array(arr, copy=True) if type(arr) is np.ndarray else arr.copy()
    return _finish(arr, dtype, ctx if ctx is not None else device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """A tensor sharing memory with `data` when it is already an array of the right dtype."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (device or dtype) else data
    return _finish(dtypes.result_array(data, dtype), None, device, False)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with the NumPy array `arr`."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(arr).__name__}")
    return _wrap(arr)


def _filled(fill, size, dtype, device, requires_grad):
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    xp = backend.namespace(backend.normalize_device(device))
    t = _wrap(xp.full(_shape(size), fill, dtype=dt))
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, dtype=None, device="cpu", requires_grad=False, ctx=None) -> Tensor:
    """A tensor of zeros: `zeros(2, 3)` or `zeros((2, 3))`."""
    return _filled(0, size, dtype, ctx or device, requires_grad)


def ones(*size, dtype=None, device="cpu", requires_grad=False, ctx=None) -> Tensor:
    """A tensor of ones: `ones(2, 3)` or `ones((2, 3))`."""
    return _filled(1, size, dtype, ctx or device, requires_grad)


def empty(*size, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """An uninitialised tensor (zeros here: NumPy's empty memory is never shown to users)."""
    return _filled(0, size, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A tensor filled with `fill_value`; the dtype follows the value (float -> default)."""
    if dtype is None:
        dtype = dtypes.result_array(fill_value).dtype
    return _filled(
        fill_value,
        (size,) if isinstance(size, (tuple, list)) else (size,),
        dtype,
        device,
        requires_grad,
    )


def _like(t, dtype):
    return dtypes.as_dtype(dtype) if dtype is not None else t.dtype


def zeros_like(t, dtype=None, requires_grad=False, device=None) -> Tensor:
    """Zeros of `t`'s shape, with its dtype and device unless given."""
    return _filled(0, t.shape, _like(t, dtype), device or t.device, requires_grad)


def ones_like(t, dtype=None, requires_grad=False, device=None) -> Tensor:
    """Ones of `t`'s shape, with its dtype and device unless given."""
    return _filled(1, t.shape, _like(t, dtype), device or t.device, requires_grad)


def empty_like(t, dtype=None, requires_grad=False, device=None) -> Tensor:
    """An uninitialised (zero) tensor of `t`'s shape, dtype and device unless given."""
    return _filled(0, t.shape, _like(t, dtype), device or t.device, requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad=False, device=None) -> Tensor:
    """`fill_value` in `t`'s shape, with its dtype and device unless given.

    >>> tg.full_like(tg.zeros(2), 7.0, device="cpu")
    tensor([7., 7.])
    """
    return _filled(fill_value, t.shape, _like(t, dtype), device or t.device, requires_grad)


def arange(start, end=None, step=1, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Values from `start` to `end` (exclusive) by `step`; ints give int64, floats float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    arr = np.arange(start, end, step)
    if dtype is None:
        dtype = dtypes.get_default_dtype() if arr.dtype.kind == "f" else dtypes.int64
    return _finish(arr, dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end` inclusive."""
    if int(steps) < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {steps}")
    arr = np.linspace(start, end, int(steps))
    return _finish(arr, dtype or dtypes.get_default_dtype(), device, requires_grad)


def eye(n, m=None, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """An `n` x `m` matrix (square when `m` is None) with ones on the diagonal."""
    return _finish(np.eye(n, m), dtype or dtypes.get_default_dtype(), device, requires_grad)


def _random(arr, dtype, device, requires_grad, what="random"):
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if dt.kind != "f":  # casting the samples would give integer garbage
        raise RuntimeError(
            f"{what}: samples a floating dtype, not {dt}; use randint() for integers, or "
            "convert afterwards (.long())"
        )
    return _finish(arr, dt, device, requires_grad)


def rand(*size, generator=None, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Uniform on [0, 1), from this thread's generator (`tg.manual_seed`) or `generator`
    (a `tg.Generator`)."""
    rng = resolve("rand", generator)
    return _random(rng.random(_shape(size)), dtype, device, requires_grad, "rand")


def randn(*size, generator=None, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """Standard normal samples, from this thread's generator (`tg.manual_seed`) or
    `generator` (a `tg.Generator`)."""
    rng = resolve("randn", generator)
    return _random(rng.standard_normal(_shape(size)), dtype, device, requires_grad, "randn")


def randint(
    low, high=None, size=(), *, generator=None, dtype=None, device="cpu", requires_grad=False
) -> Tensor:
    """Integers in [low, high) (int64 unless `dtype`); PyTorch's `randint(high, size)` form
    too, with low 0.

    >>> tg.randint(3, (2, 2)).shape, tg.randint(5, 8, (3,)).shape
    ((2, 2), (3,))
    """
    if isinstance(high, (tuple, list)) and size == ():  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if requires_grad:
        raise RuntimeError("randint: only floating tensors can require gradients")
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be greater than low ({low})")
    rng = resolve("randint", generator)
    arr = rng.integers(low, high, size=_shape((size,) if isinstance(size, int) else size))
    return _finish(arr, dtype or dtypes.int64, device, False)


def randperm(n, *, generator=None, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless `dtype`), from this thread's generator.

    >>> sorted(tg.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if int(n) < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    arr = resolve("randperm", generator).permutation(int(n))
    return _finish(arr, dtype or dtypes.int64, device, requires_grad)


def normal(
    mean=0.0, std=1.0, size=(), *, generator=None, dtype=None, device="cpu", requires_grad=False
) -> Tensor:
    """Normal samples with the given mean and standard deviation."""
    if std < 0:
        raise ValueError(f"normal: std must be non-negative, got {std}")
    rng = resolve("normal", generator)
    arr = rng.normal(mean, std, size=_shape((size,) if isinstance(size, int) else size))
    return _random(arr, dtype, device, requires_grad, "normal")


def uniform(
    low=0.0, high=1.0, size=(), *, generator=None, dtype=None, device="cpu", requires_grad=False
) -> Tensor:
    """Uniform samples on [low, high)."""
    rng = resolve("uniform", generator)
    arr = rng.uniform(low, high, size=_shape((size,) if isinstance(size, int) else size))
    return _random(arr, dtype, device, requires_grad, "uniform")


def rand_like(t, dtype=None) -> Tensor:
    """Uniform samples on [0, 1) with the shape and device of `t` (and its dtype
    unless `dtype`)."""
    return rand(t.shape, dtype=_like(t, dtype), device=t.device)


def randn_like(t, dtype=None) -> Tensor:
    """Standard normal samples with the shape and device of `t` (and its dtype
    unless `dtype`)."""
    return randn(t.shape, dtype=_like(t, dtype), device=t.device)
