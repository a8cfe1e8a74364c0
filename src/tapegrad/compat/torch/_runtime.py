"""Process-wide settings a PyTorch script makes at its top: threads and the default device.

    >>> from tapegrad.compat.torch import get_num_threads, set_default_device
    >>> get_num_threads() >= 1
    True
    >>> set_default_device("cpu")  # the only default tapegrad has
"""
from __future__ import annotations

import os

__all__ = ["set_num_threads", "get_num_threads", "set_default_device", "get_default_device"]

_limits: list[object] = []  # the threadpoolctl limiter in force (kept referenced)


def set_num_threads(num_threads: int) -> None:
    """Use `num_threads` threads in NumPy's BLAS/OpenMP pools (tapegrad's CPU threads)."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {num_threads!r}")
    from threadpoolctl import threadpool_limits

    _limits[:] = [threadpool_limits(limits=num_threads)]


def get_num_threads() -> int:
    """The threads NumPy's BLAS uses (the CPU count when no thread pool is loaded)."""
    from threadpoolctl import threadpool_info

    counts = [int(pool["num_threads"]) for pool in threadpool_info()]
    return max(counts) if counts else (os.cpu_count() or 1)


def set_default_device(device) -> None:
    """Accepts the CPU, where tapegrad creates tensors; a GPU default is not supported (create
    on the CPU and move with `.to(device)`)."""
    from . import device as _device

    if device is not None and _device(device).type != "cpu":
        raise NotImplementedError(
            f"set_default_device({str(device)!r}): tapegrad always creates tensors on the CPU; "
            "pass device= to the creation function or move tensors with .to(device)"
        )


def get_default_device():
    """`torch.device("cpu")`."""
    from . import device as _device

    return _device("cpu")
