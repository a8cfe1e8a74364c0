"""Neural-network ops: softmax/log_softmax, fused losses, normalisation, dropout, embedding."""
from __future__ import annotations

__all__: list[str] = []
