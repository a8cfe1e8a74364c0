"""`mx.random`: seed, and the legacy samplers of `mx.nd.random`."""

from __future__ import annotations

from .ndarray.random import normal, randint, randn, seed, uniform  # noqa: F401

__all__ = ["seed", "uniform", "normal", "randn", "randint"]
