"""MXNet record scope: record pause train_mode predict_mode attach_grad mark_variables."""
from __future__ import annotations

__all__: list[str] = []
