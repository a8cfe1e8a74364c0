"""Array backends: NumPy on the CPU, CuPy on a GPU. The only module that imports CuPy."""

from __future__ import annotations

from typing import Any

import numpy as np

_cupy = None
_cupy_error: str | None = None


def cupy():
    """The CuPy module, or a RuntimeError that says how to get it."""
    global _cupy, _cupy_error
    if _cupy is None and _cupy_error is None:
        try:
            import cupy as cp

            cp.cuda.runtime.getDeviceCount()
            _cupy = cp
            _ARRAY_MODULES[cp.ndarray] = cp
        except Exception as e:  # ImportError, or CUDA present but no device/driver
            _cupy_error = f"{type(e).__name__}: {e}"
    if _cupy is None:
        from .utils.hints import install_hint

        raise RuntimeError(
            f"device='cuda' needs CuPy and a GPU: {install_hint('cuda')}, on a machine with "
            f"CUDA ({_cupy_error})"
        )
    return _cupy


# array type -> its namespace; the dispatcher reads this once per op
_ARRAY_MODULES: dict[type, object] = {np.ndarray: np}


def array_module(arr: Any) -> Any:
    """numpy or cupy, whichever owns `arr`."""
    return _ARRAY_MODULES.get(type(arr), np)


def normalize_device(device) -> str:
    """'cpu' or 'cuda' from 'cpu', 'cuda', 'cuda:0', 'gpu' (MXNet), or a Device-like object."""
    if device is None:
        return "cpu"
    name = str(getattr(device, "type", device)).lower()
    if name.startswith(("cuda", "gpu")):
        return "cuda"
    if name.startswith("cpu"):
        return "cpu"
    raise ValueError(f"unknown device {device!r}; use 'cpu' or 'cuda'")


def device_of(arr) -> str:
    return "cpu" if type(arr) is np.ndarray else "cuda"


def namespace(device: str):
    return np if device == "cpu" else cupy()


def to_device(arr, device: str):
    """Copy `arr` to `device` (no copy when it is already there)."""
    if device_of(arr) == device:
        return arr
    if device == "cpu":
        return arr.get()
    return cupy().asarray(arr)
