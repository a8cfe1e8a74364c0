"""tg.autograd.graph: to_dot."""
from __future__ import annotations

__all__: list[str] = []
