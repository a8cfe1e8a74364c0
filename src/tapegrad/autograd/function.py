"""Custom differentiable functions: tg.autograd.Function (PyTorch ctx style and MXNet instance style)."""
from __future__ import annotations

__all__: list[str] = []
