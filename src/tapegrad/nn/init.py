"""tg.nn.init: parameter initialisation."""
from __future__ import annotations

__all__: list[str] = []
