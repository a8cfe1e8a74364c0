"""tg.linalg: inv det slogdet solve norm."""
from __future__ import annotations

__all__: list[str] = []
