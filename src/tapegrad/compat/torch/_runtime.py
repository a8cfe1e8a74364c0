"""Process-wide settings a PyTorch script makes at its top: threads and the default device.

>>> from tapegrad.compat.torch import get_num_threads, set_default_device
>>> get_num_threads() >= 1
True
>>> set_default_device("cpu")  # the only default tapegrad has
"""

from __future__ import annotations

from ...threads import get_num_threads
from ...threads import set_num_threads as _set_blas_threads

__all__ = ["set_num_threads", "get_num_threads", "set_default_device", "get_default_device"]


def set_num_threads(num_threads: int) -> None:
    """Use `num_threads` threads in NumPy's BLAS pools (`tg.set_num_threads`); a bad count is
    a RuntimeError, as in PyTorch."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {num_threads!r}")
    _set_blas_threads(num_threads)


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
