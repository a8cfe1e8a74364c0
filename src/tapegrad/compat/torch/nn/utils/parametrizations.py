"""`torch.nn.utils.parametrizations` (tapegrad.nn.utils.parametrizations)."""

from __future__ import annotations

from ...._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils.parametrizations)",
    "tapegrad.nn.utils.parametrizations",
)
