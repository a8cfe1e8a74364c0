"""Shape ops: reshape, views, transpose/permute, concatenation, splitting, padding."""
from __future__ import annotations

__all__: list[str] = []
