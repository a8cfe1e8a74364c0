"""Core layers: Linear, activations, Dropout, normalisation, Embedding, Flatten, Identity."""
from __future__ import annotations

__all__: list[str] = []
