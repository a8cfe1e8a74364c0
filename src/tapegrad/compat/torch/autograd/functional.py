"""`torch.autograd.functional`: vjp jvp jacobian hessian hvp vhp (tapegrad's)."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.autograd.functional)", "tapegrad.autograd.functional"
)
