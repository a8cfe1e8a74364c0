"""`torch.nn.utils.parametrize` (tapegrad.nn.utils.parametrize)."""

from __future__ import annotations

from ...._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.nn.utils.parametrize)",
    "tapegrad.nn.utils.parametrize",
)
