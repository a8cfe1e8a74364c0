"""`megengine.autodiff.grad_manager`: where MegEngine defines GradManager
(`from megengine.autodiff.grad_manager import GradManager`); the same class as
`mge.autodiff.GradManager` (tapegrad's, docs/recording.md)."""

from __future__ import annotations

from ....autograd.grad_manager import GradManager

__all__ = ["GradManager"]
