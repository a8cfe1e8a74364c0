"""`torch.autograd.function`: Function, FunctionCtx, once_differentiable."""

from __future__ import annotations

from ....autograd.function import Function, FunctionCtx, once_differentiable  # noqa: F401

__all__ = ["Function", "FunctionCtx", "once_differentiable"]
