"""Parameter: the leaf tensor a Module registers (exported from nn.module too)."""

from __future__ import annotations

import numpy as np

from .. import backend, dtypes
from ..engine.versions import bump_version
from ..tensor import Tensor, _init

__all__ = ["Parameter", "UninitializedBuffer", "UninitializedParameter"]


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


def _rebuild_shared_parameter(where, requires_grad, grad_req):
    """A Parameter on the shared memory `where` names (tapegrad.shared_memory's reducer)."""
    from ..shared_memory import rebuild_shared

    p = Parameter(np.zeros(0), requires_grad=requires_grad, grad_req=grad_req)
    p._data = rebuild_shared(*where)  # the memory itself, not a copy
    return p


def _rebuild_parameter(arr, requires_grad, grad_req, is_lazy=False):
    p = Parameter(arr, requires_grad=requires_grad, grad_req=grad_req)
    p.is_lazy = is_lazy
    return p


_UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes."
)


def _uninitialized_use(what: str, kind: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
        f"are using a `LazyModule` or explicitly manipulating `{kind}` objects. When using "
        "LazyModules Call `forward` with a dummy batch to initialize the parameters before "
        "calling tapegrad functions"
    )


class UninitializedParameter(Parameter):
    """A parameter without a shape yet, as torch.nn.parameter.UninitializedParameter: a lazy
    layer (`tg.nn.LazyLinear`, ...) creates it and `materialize`s it at its first call, when
    the input gives the shape; it is then a plain `Parameter` (the class changes in place, so
    references to it stay valid).

    Its shape and size can't be read before that (RuntimeError, as PyTorch).

    >>> p = tg.nn.parameter.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None) -> None:
        super().__init__(None, requires_grad=requires_grad)
        if dtype is not None or device is not None:
            dt = dtypes.as_dtype(dtype) if dtype is not None else self._data.dtype
            xp = backend.namespace(backend.normalize_device(device or "cpu"))
            self._data = xp.zeros((0,), dtype=dt)

    def materialize(self, shape, device=None, dtype=None) -> None:  # type: ignore[override]
        """Give it zeros of `shape` (its dtype and device unless given); it becomes a
        `Parameter`. The layer then initializes the values."""
        Parameter.materialize(self, shape, dtype=dtype, device=device)
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def size(self, dim=None):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def numel(self):
        raise _uninitialized_use("numel", "tg.nn.parameter.UninitializedParameter")

    def __reduce_ex__(self, protocol):
        return (UninitializedParameter, (self.requires_grad,))


class UninitializedBuffer(Tensor):
    """A buffer without a shape yet (a lazy BatchNorm's running statistics), as
    torch.nn.parameter.UninitializedBuffer; `materialize(shape)` makes it a plain Tensor.

    >>> b = tg.nn.parameter.UninitializedBuffer()
    >>> b.materialize((3,))
    >>> type(b).__name__, b.shape
    ('Tensor', (3,))
    """

    __slots__ = ()  # Tensor's own layout, so that `materialize` can make it a Tensor in place
    is_lazy = True  # what load_state_dict and the lazy layers test (a Tensor reads False)

    def __init__(self, requires_grad=False, device=None, dtype=None) -> None:
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
        xp = backend.namespace(backend.normalize_device(device or "cpu"))
        _init(self, xp.zeros((0,), dtype=dt))
        if requires_grad:
            self.requires_grad_(True)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give it zeros of `shape` (its dtype and device unless given); it becomes a Tensor."""
        dt = dtypes.as_dtype(dtype) if dtype is not None else self._data.dtype
        xp = backend.namespace(backend.normalize_device(device or self.device))
        self._data = xp.zeros(tuple(shape), dtype=dt)
        bump_version(self)
        self.__class__ = Tensor  # type: ignore[assignment]

    @property
    def shape(self):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def size(self, dim=None):
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def numel(self):
        raise _uninitialized_use("numel", "tg.nn.parameter.UninitializedBuffer")

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    def __reduce_ex__(self, protocol):
        return (UninitializedBuffer, (self.requires_grad,))
