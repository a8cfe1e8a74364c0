"""`torch.nn.modules.lazy`: tapegrad.nn.lazy (LazyModuleMixin and the lazy layers)."""

from __future__ import annotations

from ...._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.nn.modules.lazy)", "tapegrad.nn.lazy"
)
