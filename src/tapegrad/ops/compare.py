"""Comparisons and logical ops: never differentiable."""
from __future__ import annotations

__all__: list[str] = []
