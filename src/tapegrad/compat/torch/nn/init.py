"""`torch.nn.init`: tapegrad.nn.init (uniform_, normal_, xavier_*, kaiming_*, zeros_ ...)."""

from __future__ import annotations

from ..._facade import forward_getattr

__getattr__ = forward_getattr(__name__, "the PyTorch facade (torch.nn.init)", "tapegrad.nn.init")
