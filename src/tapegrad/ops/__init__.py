"""Floor 3: the op table. Importing it registers every op and attaches Tensor's methods."""
from __future__ import annotations

from ..engine import backward as _engine
from ..tensor import Tensor, _wrap
from . import arith  # noqa: F401  (registration)
from .registry import OPS, Op, apply_inplace, defop, nondifferentiable
from .xp import T, array_helper, array_ns

_engine.configure(T, _wrap, Tensor)

__all__ = ["OPS", "Op", "T", "apply_inplace", "array_helper", "array_ns", "defop", "nondifferentiable"]

from . import methods  # noqa: E402,F401  (attaches operators to Tensor)
