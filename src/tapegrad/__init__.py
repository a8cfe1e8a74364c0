"""tapegrad: reverse-mode autograd on NumPy with PyTorch, MXNet and MegEngine recording.

    >>> import tapegrad as tg
    >>> x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x ** 2).sum().backward()
    >>> x.grad
    tensor([2., 4., 6.])
"""
from __future__ import annotations

from . import ops  # noqa: F401  (registers the op table, attaches Tensor methods)
from .autograd.engine_api import tensor_backward as _tensor_backward
from .tensor import Tensor

Tensor.backward = _tensor_backward

from . import autograd, autodiff, compat, data, distributed, func, linalg, nn, optim, utils, viz  # noqa: E402,F401,I001
from .autograd.modes import *  # noqa: E402,F401,F403
from .creation import *  # noqa: E402,F401,F403
from .dtypes import (  # noqa: E402,F401
    bfloat16, bool_, double, float16, float32, float64, get_default_dtype, half, int8, int16,
    int32, int64, long, set_default_dtype, short, uint8,
)
from .io import *  # noqa: E402,F401,F403
from .ops.arith import *  # noqa: E402,F401,F403
from .ops.compare import *  # noqa: E402,F401,F403
from .ops.elementwise import *  # noqa: E402,F401,F403
from .ops.index import *  # noqa: E402,F401,F403
from .ops.linalg import *  # noqa: E402,F401,F403
from .ops.matrix import *  # noqa: E402,F401,F403
from .ops.pairwise import *  # noqa: E402,F401,F403
from .ops.reduce import *  # noqa: E402,F401,F403
from .ops.shape import *  # noqa: E402,F401,F403
from .ops.sorting import *  # noqa: E402,F401,F403
from .random import manual_seed, seed  # noqa: E402,F401

bool = bool_  # noqa: A001  (tg.bool, as in PyTorch; the builtin is untouched elsewhere)
float = float32  # noqa: A001
int = int32  # noqa: A001
__version__ = "0.1.0"
