"""Floor 3: the op table. Importing it registers every op and attaches Tensor's methods."""
from __future__ import annotations

from ..engine import backward as _engine
from ..tensor import Tensor, _wrap
from .registry import OPS, Op, apply_inplace, defop, nondifferentiable
from .xp import T, array_helper, array_ns

_engine.configure(T, _wrap, Tensor)

# registration order: each module may use ops of the ones before it in its rules
from . import arith  # noqa: E402,F401,I001
from . import elementwise, compare, reduce, shape, index, linalg  # noqa: E402,F401
from . import nn_ops, conv  # noqa: E402,F401
from . import sorting, matrix, pairwise  # noqa: E402,F401
from .tensor_methods import install as _install_tensor_methods  # noqa: E402,I001

_install_tensor_methods(Tensor)  # after every op module: the one place Tensor gets its methods

__all__ = ["OPS", "Op", "T", "apply_inplace", "array_helper", "array_ns", "defop",
           "nondifferentiable"]
