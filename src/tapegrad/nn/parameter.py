"""Parameter: the leaf tensor a Module registers (exported from nn.module too)."""

from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..engine.versions import bump_version
from ..tensor import Tensor, _init

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor that a Module registers as one of its parameters.

    Args:
        data: a Tensor (storage is shared) or array-like; None gives an *uninitialized*
            parameter whose shape a lazy layer sets at its first call.
        requires_grad: join the ambient (PyTorch) tape. Default True.
        grad_req: "add" (accumulate, PyTorch's default), "write" (overwrite, MXNet's) or
            "null" (no gradient).

    >>> p = tg.nn.Parameter(tg.zeros(2))
    >>> p.requires_grad, p.grad_req
    (True, 'add')
    """

    def __init__(self, data=None, requires_grad=True, grad_req="add"):
        if data is None:
            arr = np.zeros((0,), dtype=dtypes.get_default_dtype())
            self.is_lazy = True
        else:
            arr = data._data if isinstance(data, Tensor) else dtypes.result_array(data, None)
            self.is_lazy = False
        _init(self, arr)
        self.grad_req = grad_req
        if requires_grad and grad_req != "null":
            self.requires_grad_(True)

    def materialize(self, shape, dtype=None, device=None) -> None:
        """Give an uninitialized parameter its storage (zeros of `shape`); layers then init it."""
        dt = dtypes.as_dtype(dtype) if dtype is not None else self._data.dtype
        xp = backend.namespace(backend.normalize_device(device or self.device))
        self._data = xp.zeros(tuple(shape), dtype=dt)
        bump_version(self)
        self.is_lazy = False

    def __repr__(self) -> str:
        if self.is_lazy:
            return "<UninitializedParameter>"
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        return (
            _rebuild_parameter,
            (self.asnumpy(), self.requires_grad, self._grad_req, self.is_lazy),
        )


def _rebuild_parameter(arr, requires_grad, grad_req, is_lazy=False):
    p = Parameter(arr, requires_grad=requires_grad, grad_req=grad_req)
    p.is_lazy = is_lazy
    return p
