"""tg.optim: optimizers and learning-rate schedulers."""
from __future__ import annotations

__all__: list[str] = []
