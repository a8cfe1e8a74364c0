"""`torch.backends.mkldnn`: PyTorch's oneDNN kernels, which tapegrad does not use."""

from __future__ import annotations

enabled = False


def is_available() -> bool:
    """False: tapegrad's CPU ops are NumPy's."""
    return False
