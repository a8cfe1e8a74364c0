"""Linear algebra ops: matmul dot outer einsum tensordot inv det slogdet solve."""
from __future__ import annotations

__all__: list[str] = []
