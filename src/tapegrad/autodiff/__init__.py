"""tg.autodiff: MegEngine-style GradManager."""
from __future__ import annotations

__all__: list[str] = []
