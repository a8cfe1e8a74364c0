"""`torch.optim.lr_scheduler`: tapegrad.optim.lr_scheduler."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.optim.lr_scheduler)", "tapegrad.optim.lr_scheduler"
)
