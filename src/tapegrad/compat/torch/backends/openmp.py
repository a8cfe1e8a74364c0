"""`torch.backends.openmp`: tapegrad's CPU threads are those of NumPy's BLAS."""

from __future__ import annotations


def is_available() -> bool:
    """False: tapegrad itself does not use OpenMP (see torch.set_num_threads)."""
    return False
