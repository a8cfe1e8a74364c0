"""`megengine.device`: how many devices of a kind there are, and the default device.

    >>> from tapegrad.compat.megengine.device import get_device_count
    >>> get_device_count("cpu") >= 1
    True

tapegrad computes on the CPU (NumPy) and, with CuPy, on CUDA GPUs; "gpu" and "cuda"
count the GPUs CuPy sees (0 without CuPy).
"""

from __future__ import annotations

import os

from . import get_default_device, is_cuda_available, set_default_device  # noqa: F401

__all__ = ["get_device_count", "is_cuda_available", "set_default_device", "get_default_device"]


def get_device_count(device_type: str) -> int:
    """The number of devices of `device_type`: "cpu" (the logical CPUs), "gpu" / "cuda"."""
    kind = str(device_type).lower()
    if kind in ("gpu", "cuda"):
        if not is_cuda_available():
            return 0
        from ... import backend

        return int(backend.cupy().cuda.runtime.getDeviceCount())
    if kind in ("cpu", "xpu"):
        return os.cpu_count() or 1
    raise ValueError(f"get_device_count: unknown device type {device_type!r}; use 'cpu' or 'gpu'")
