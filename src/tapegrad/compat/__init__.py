"""Facades that run MXNet, MegEngine and PyTorch code on tapegrad."""
from __future__ import annotations

__all__: list[str] = []
