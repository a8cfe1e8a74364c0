"""tg.func: grad and value_and_grad transforms."""
from __future__ import annotations

__all__: list[str] = []
