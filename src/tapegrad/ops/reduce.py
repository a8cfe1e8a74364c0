"""Reductions: sum mean prod amax amin max min argmax argmin var std logsumexp norm cumsum all any."""
from __future__ import annotations

__all__: list[str] = []
