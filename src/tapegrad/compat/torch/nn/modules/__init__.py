"""`torch.nn.modules`: where PyTorch's layer classes live; the facade has `lazy`
(LazyModuleMixin), the layers themselves are in `torch.nn`."""

from __future__ import annotations

from . import lazy  # noqa: F401
