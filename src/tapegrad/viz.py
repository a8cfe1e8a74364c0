"""tg.viz.draw: render a graph with Graphviz."""
from __future__ import annotations

__all__: list[str] = []
