"""`torch.accelerator` (PyTorch 2.6+): the current accelerator, here a CUDA GPU through
CuPy when one is usable, else none (the CPU is not an accelerator).

    >>> import tapegrad.compat.torch as torch
    >>> device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() \\
    ...     else torch.device("cpu")
"""

from __future__ import annotations

from . import cuda


def is_available() -> bool:
    """True when a GPU is usable through CuPy."""
    return cuda.is_available()


def device_count() -> int:
    """How many accelerators tapegrad can use (0 or 1)."""
    return cuda.device_count()


def current_accelerator(check_available: bool = False):
    """`torch.device("cuda")` when a GPU is usable, else None."""
    if not is_available():
        return None
    from . import device

    return device("cuda")


def current_device_index() -> int:
    """0 on a GPU; -1 when there is no accelerator (as PyTorch)."""
    return 0 if is_available() else -1


current_device_idx = current_device_index


def set_device_index(device) -> None:
    """Accepts device 0 (tapegrad uses one GPU per process)."""
    index = getattr(device, "index", device)
    if index not in (None, 0):
        raise RuntimeError(
            f"set_device_index: tapegrad uses one GPU per process (device 0), got {device!r}"
        )


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    """Wait for queued GPU work (nothing to wait for on the CPU)."""
    cuda.synchronize(device)
