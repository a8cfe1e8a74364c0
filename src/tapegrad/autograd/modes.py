"""Recording modes: no_grad enable_grad set_grad_enabled inference_mode."""
from __future__ import annotations

__all__: list[str] = []
