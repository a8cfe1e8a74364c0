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

__version__ = "0.1.0"
