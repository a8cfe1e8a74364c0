"""`torch.nn.parameter`: tapegrad.nn.parameter (Parameter, UninitializedParameter,
UninitializedBuffer)."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.nn.parameter)", "tapegrad.nn.parameter"
)
