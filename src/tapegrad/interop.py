"""DLPack import: `tg.from_dlpack(x)` makes a tensor that shares memory with `x` (a NumPy
array, a PyTorch tensor, a CuPy array, or anything else with `__dlpack__`).

(Exporting, `Tensor.__dlpack__`/`__dlpack_device__`, is not there yet: until then hand a
tensor over with `np.from_dlpack(t.numpy())` or `torch.from_numpy(t.numpy())`, which share
memory too.)
"""
from __future__ import annotations

import numpy as np

from . import backend
from .tensor import Tensor, _wrap

__all__ = ["from_dlpack"]

_CPU, _CUDA = 1, 2  # DLPack device types (DLDeviceType)


def from_dlpack(x) -> Tensor:
    """A tensor on the same memory as `x` (zero copy): a write through either shows in both.

    `x` is any object with `__dlpack__` and `__dlpack_device__`: NumPy arrays and PyTorch
    CPU tensors give CPU tensors, CuPy arrays and PyTorch CUDA tensors give CUDA tensors
    (with CuPy installed). A PyTorch tensor that requires grad must be `.detach()`ed first.

    >>> a = np.arange(3.0)
    >>> t = tg.from_dlpack(a); t[0] = 7.0
    >>> float(a[0])
    7.0
    """
    if isinstance(x, Tensor):
        return x
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        hint = (" (a bare DLPack capsule, e.g. from torch.utils.dlpack.to_dlpack: pass the "
                "tensor itself instead)" if type(x).__name__ == "PyCapsule" else "")
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ (a NumPy array, a "
                        f"PyTorch tensor, a CuPy array), got {type(x).__name__}{hint}")
    device_type = int(x.__dlpack_device__()[0])
    try:
        if device_type == _CPU:
            arr = np.from_dlpack(x)
        elif device_type == _CUDA:
            arr = backend.cupy().from_dlpack(x)
        else:
            raise TypeError(f"from_dlpack: {type(x).__name__} lives on DLPack device type "
                            f"{device_type}; tapegrad holds CPU (1) and CUDA (2) memory only")
    except (RuntimeError, BufferError) as e:
        msg = str(e)
        if "requires grad" in msg or "require gradient" in msg:
            raise RuntimeError("from_dlpack: the PyTorch tensor requires grad, so it can't be "
                               "shared; pass x.detach() (tapegrad then tracks its own "
                               "gradients)") from None
        raise RuntimeError(f"from_dlpack: {type(x).__name__} refused to export its memory "
                           f"({msg})") from None
    return _wrap(arr)
