"""Convolution and pooling ops (one GEMM per call, forward and backward)."""
from __future__ import annotations

__all__: list[str] = []
