"""tg.distributed: data parallel over MPI; world size 1 without it."""
from __future__ import annotations

__all__: list[str] = []
