"""RNN, LSTM, GRU (the cell loop in Python: a dynamic graph)."""
from __future__ import annotations

__all__: list[str] = []
