"""`mge.tensor`, `mge.Tensor`, `mge.Parameter` with MegEngine's dtype defaults.

MegEngine makes Python floats and float64 arrays float32, Python ints and int64 arrays
int32. Its tensors are not tracked by anything until a GradManager attaches them (no
`requires_grad`), so `.numpy()` always works: that is tapegrad's plain tensor.
"""
from __future__ import annotations

import numpy as np

from ... import creation
from ...tensor import Tensor as _CoreTensor

__all__ = ["tensor", "Tensor", "Parameter"]


def _mge_array(data, dtype):
    if isinstance(data, _CoreTensor):
        return data if dtype is None else data.astype(dtype)
    arr = np.asarray(data)
    if dtype is None:
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
    return arr


def tensor(data=None, dtype=None, device=None, is_const=False, no_cache=False, name=None):
    """A new tensor holding a copy of `data` (float32 / int32 by default, as MegEngine)."""
    return creation.tensor(_mge_array(data, dtype), dtype=dtype, device=_device(device))


def _device(device):
    if device is None:
        return "cpu"
    name = str(device).lower()
    if name.startswith(("xpu", "gpu", "cuda")):
        from ... import backend

        try:
            backend.cupy()
        except RuntimeError:
            if name.startswith("xpu"):  # MegEngine's "any device": fall back to the CPU
                return "cpu"
            raise
        return "cuda"
    return "cpu"


class _TensorType(type):
    """`mge.Tensor(data)` makes a tensor; `isinstance(t, mge.Tensor)` holds for every
    tapegrad tensor (there is one tensor type)."""

    def __call__(cls, data=None, dtype=None, device=None, is_const=False, no_cache=False,
                 name=None):
        return tensor(data, dtype, device)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _CoreTensor)

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, _CoreTensor)


class Tensor(metaclass=_TensorType):
    """MegEngine's Tensor: `mge.Tensor([1.0, 2.0])` (see `tensor`)."""


def Parameter(value, dtype=None, device=None, is_const=False, no_cache=False,  # noqa: N802
              name=None):
    """A module parameter (a `tapegrad.nn.Parameter` that no tape tracks until a
    GradManager attaches it, as in MegEngine)."""
    from ...nn.module import Parameter as _CoreParameter

    return _CoreParameter(tensor(value, dtype or "float32", device), requires_grad=False)
