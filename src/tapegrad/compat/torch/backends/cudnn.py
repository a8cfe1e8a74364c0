"""`torch.backends.cudnn`: tapegrad's GPU path is CuPy; the flags are accepted and kept."""

from __future__ import annotations

enabled = True  # PyTorch's default; tapegrad's GPU convolutions don't consult it
benchmark = False  # one algorithm per op: there is nothing to autotune
deterministic = False  # tapegrad's CPU ops are deterministic either way
allow_tf32 = True


def is_available() -> bool:
    """True when a GPU is usable (through CuPy)."""
    from ..cuda import is_available as gpu

    return gpu()


def version() -> int | None:
    """None: tapegrad does not link cuDNN itself."""
    return None
