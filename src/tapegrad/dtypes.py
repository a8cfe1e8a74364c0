"""dtype names and rules: what a Python value becomes, which dtypes can carry gradients."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

float16 = half = np.dtype("float16")
float32 = np.dtype("float32")
float64 = double = np.dtype("float64")
int8 = np.dtype("int8")
int16 = short = np.dtype("int16")
int32 = np.dtype("int32")
int64 = long = np.dtype("int64")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
_NAMES: dict[str, np.dtype[Any]] = {
    "float16": float16,
    "half": float16,
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "long": int64,
    "int": int32,
    "uint8": uint8,
    "bool": bool_,
}
_BFLOAT16_UNSET = object()
_bfloat16: Any = _BFLOAT16_UNSET


def _load_bfloat16() -> Any:
    """bfloat16 where ml_dtypes is installed (it ships with JAX), else None. Imported on first
    use: ml_dtypes registers its ufuncs at import, which costs more than `import numpy`."""
    global _bfloat16
    if _bfloat16 is _BFLOAT16_UNSET:
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover - depends on the environment
            _bfloat16 = None
        else:
            _bfloat16 = np.dtype(ml_dtypes.bfloat16)
            _NAMES["bfloat16"] = _bfloat16
    return _bfloat16


def __getattr__(name: str) -> Any:
    if name == "bfloat16":
        return _load_bfloat16()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_default = threading.local()


def get_default_dtype() -> np.dtype:
    """The dtype Python floats become (float32 unless `set_default_dtype` changed it)."""
    return getattr(_default, "dtype", float32)


def set_default_dtype(dtype) -> None:
    """Make Python floats become `dtype` (float16, float32 or float64) in this thread."""
    dt = as_dtype(dtype)
    if not is_floating(dt):
        raise TypeError(f"set_default_dtype: {dt} is not a floating dtype; use float32 or float64")
    _default.dtype = dt


def as_dtype(dtype) -> np.dtype:
    """A NumPy dtype from a dtype, a name ('float32'), a Python type or a NumPy type."""
    if isinstance(dtype, str):
        if dtype == "bfloat16":
            _load_bfloat16()
        try:
            return _NAMES[dtype]
        except KeyError:
            raise TypeError(f"unknown dtype {dtype!r}; known: {sorted(_NAMES)}") from None
    if dtype is float:
        return get_default_dtype()
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}") from None


def is_floating(dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def result_array(data: Any, dtype: Any = None) -> np.ndarray:
    """`data` as a NumPy array with tapegrad's rules: Python floats take the default dtype,
    Python ints int64, bools bool; arrays keep their dtype unless `dtype` is given."""
    if isinstance(data, np.ndarray):
        arr = data
    else:
        try:
            arr = np.asarray(data)
        except ValueError as e:  # ragged nesting: NumPy's message is about its internals
            raise ValueError(
                f"cannot make a tensor from {type(data).__name__} {data!r:.80}: nested "
                f"sequences must have the same length at each level ({e})"
            ) from None
        # the default dtype only when none is asked for: tensor([0.1], dtype=float64) must
        # not pass through float32 (0.10000000149...)
        if arr.dtype == np.float64 and not isinstance(data, np.generic) and dtype is None:
            arr = arr.astype(get_default_dtype())
        elif arr.dtype.kind in "iu" and not isinstance(data, np.generic) and arr.dtype != np.uint8:
            arr = arr.astype(int64)
    if arr.dtype.kind == "c":
        raise TypeError(
            f"cannot make a tensor from complex data (dtype {arr.dtype}): tapegrad supports "
            "real dtypes only; pass the real and imaginary parts as two tensors (z.real, z.imag)"
        )
    if arr.dtype.kind in "OUSVMm":  # objects, strings, bytes, records, dates: not numbers
        raise TypeError(
            f"cannot make a tensor from {type(data).__name__} {data!r:.80} (dtype "
            f"{arr.dtype}); give numbers, bools, nested lists of them or a numeric array"
        )
    if dtype is not None:
        arr = arr.astype(as_dtype(dtype), copy=False)
    return arr
