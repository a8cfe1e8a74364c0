"""Indexing: getitem/setitem (basic, advanced, boolean), gather, scatter_add, index_select, masked_fill."""
from __future__ import annotations

__all__: list[str] = []
