"""`torch.optim.swa_utils`: tapegrad.optim.swa_utils."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.optim.swa_utils)", "tapegrad.optim.swa_utils"
)
