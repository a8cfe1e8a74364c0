"""`torch.backends.mps`: Apple's Metal backend, which tapegrad does not have."""

from __future__ import annotations


def is_available() -> bool:
    """False: tapegrad runs on the CPU (NumPy) or a CUDA GPU (CuPy)."""
    return False


def is_built() -> bool:
    """False: there is no Metal backend in tapegrad."""
    return False
