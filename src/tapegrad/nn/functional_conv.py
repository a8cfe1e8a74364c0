"""tg.nn.functional: convolution and pooling."""
from __future__ import annotations

__all__: list[str] = []
