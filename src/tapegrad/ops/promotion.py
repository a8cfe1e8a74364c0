"""What an op's result is: its dtype when NumPy promotes where PyTorch would not (and the
mixed float dtypes PyTorch refuses), and its tensor class when the inputs are a facade's
arrays. Used by the dispatcher (registry.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..tensor import Tensor


def result_type(cls: type[Tensor], other: type[Tensor], what: str) -> type[Tensor]:
    """The most derived of two tensor classes: a facade's array type wins over `Tensor`.
    A parameter class counts as its array class (`tensor.array_class`): `p * 2` is a
    Tensor, not a Parameter, as in PyTorch."""
    other = getattr(other, "_array_class", Tensor)
    if issubclass(other, cls):
        return other
    if issubclass(cls, other):
        return cls
    raise TypeError(
        f"{what}: can't combine a {cls.__module__}.{cls.__qualname__} with a "
        f"{other.__module__}.{other.__qualname__} in one op (arrays of two different "
        "frameworks); convert one of them first, e.g. with tg.tensor(x) or the facade's array()"
    )


FLOAT64 = np.dtype(np.float64)


def drop_unasked_float64(out: Any, arrays: list[Any], params: dict[str, Any]) -> Any:
    """Undo NumPy's promotion to float64 that no input asked for, as PyTorch does: int64
    with float32 gives float32, an int tensor with a Python float or int / int gives the
    default dtype. A float64 input or a `dtype=` parameter keeps float64."""
    for a in arrays:  # the float64 graph (gradcheck): leave after one look
        if getattr(a, "dtype", None) is FLOAT64:
            return out
    if "dtype" in params:
        return out
    target = None
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if dt is not None and dt.kind == "f":
            if dt == FLOAT64:
                return out
            if target is None or dt.itemsize > target.itemsize:
                target = dt
    if target is None:
        target = dtypes.get_default_dtype()
    return out if target == FLOAT64 else out.astype(target)


def weak_scalar(a: Any) -> Any:
    """NumPy scalars and 0-d arrays act like Python numbers (weak: they never promote a
    float32 tensor to float64)."""
    if isinstance(a, (np.generic, np.ndarray)) and np.ndim(a) == 0:
        return a.item()
    return a


def check_same_float(what: str, *arrays: Any) -> None:
    """Refuse floating arrays of different dtypes where PyTorch does (matmul, linear, conv):
    NumPy would silently compute in the wider one (a float64 batch through a float32 layer)."""
    floats = [
        a.dtype
        for a in arrays
        if a is not None and getattr(a, "dtype", None) is not None and a.dtype.kind == "f"
    ]
    if len(set(floats)) > 1:
        raise RuntimeError(
            f"{what}: expected all operands to have the same dtype, but got "
            f"{', '.join(str(d) for d in floats)}; convert first, e.g. "
            "x.to(weight.dtype) or model.double()"
        )
