"""tg.nn.functional: activations, losses, normalisation, dropout, embedding."""
from __future__ import annotations

__all__: list[str] = []
