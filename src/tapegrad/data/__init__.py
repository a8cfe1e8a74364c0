"""tg.data: datasets and loaders."""
from __future__ import annotations

__all__: list[str] = []
