"""Elementwise ops (unary math, activations, clamp, maximum/minimum, where)."""
from __future__ import annotations

__all__: list[str] = []
