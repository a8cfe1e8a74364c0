"""MegEngine GradManager on the tape mask."""
from __future__ import annotations

__all__: list[str] = []
