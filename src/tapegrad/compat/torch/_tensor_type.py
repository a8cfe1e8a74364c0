"""`torch.Tensor` as the facade shows it: the core tensor class, with PyTorch's constructor.

Calling `torch.Tensor(...)` is PyTorch's legacy constructor, not `tg.Tensor(data)`: data (a
list, an array) becomes a tensor of the *default* dtype (float32 unless
`torch.set_default_dtype` changed it) whatever the data's own type, `torch.Tensor(2, 3)` or
`torch.Tensor(torch.Size([2, 3]))` makes a tensor of that shape (PyTorch leaves it
uninitialized; here it is zeros), `torch.Tensor()` an empty one, and `torch.Tensor(t)` of a
tensor gives an alias of `t` (a view: same storage, dtype and graph). The facade's
`torch.Size` is a plain tuple, so `torch.Tensor(x.size())` reads it as data, as PyTorch reads
any tuple; pass the sizes unpacked (`torch.Tensor(*x.size())`).

Everything else is the core class: every tapegrad tensor is an instance of `torch.Tensor`,
`torch.Tensor.add` is the core method, and `class T(torch.Tensor)` subclasses the core tensor
(calling such a subclass runs the core constructor, or the subclass's own).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor as _CoreTensor

__all__ = ["Tensor"]


def _legacy_new(args: tuple[Any, ...], device: Any) -> _CoreTensor:
    dtype = dtypes.get_default_dtype()
    dev = device if device is not None else "cpu"
    if not args:
        return creation.zeros(0, dtype=dtype, device=dev)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return creation.zeros(*[int(a) for a in args], dtype=dtype, device=dev)
    if len(args) == 1 and type(args[0]).__name__ == "Size":  # torch.Size: a shape
        return creation.zeros(*args[0], dtype=dtype, device=dev)
    if len(args) != 1:
        raise TypeError(
            f"torch.Tensor(): expected sizes (ints) or one sequence of data, got {len(args)} "
            "arguments; use torch.tensor(data, dtype=...) to choose the dtype"
        )
    data = args[0]
    if isinstance(data, _CoreTensor):
        return data.view_as(data)  # PyTorch: an alias of it (same storage, dtype and graph)
    if isinstance(data, (bool, int, float, complex, np.number)):
        raise TypeError(
            f"torch.Tensor(): a single number {data!r} is not a size or a sequence; use "
            "torch.tensor(number) for a 0-d tensor or torch.Tensor([number]) for a 1-element one"
        )
    return creation.tensor(data, dtype=dtype, device=dev)


class _TensorType(type):
    """The metaclass: every core tensor is an instance; calling the facade class itself is
    PyTorch's legacy constructor."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is Tensor:
            return isinstance(obj, _CoreTensor)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is Tensor:
            return issubclass(sub, _CoreTensor)
        return type.__subclasscheck__(cls, sub)

    def __call__(cls, *args: Any, device: Any = None, **kwargs: Any) -> Any:
        if cls is Tensor:
            if kwargs:
                raise TypeError(
                    f"torch.Tensor(): unexpected keyword arguments {sorted(kwargs)}; only "
                    "device= is accepted (use torch.tensor(data, dtype=..., requires_grad=...))"
                )
            return _legacy_new(args, device)
        if device is not None:
            kwargs["device"] = device
        return type.__call__(cls, *args, **kwargs)

    def __repr__(cls) -> str:
        return "<class 'torch.Tensor'>" if cls is Tensor else type.__repr__(cls)


class Tensor(_CoreTensor, metaclass=_TensorType):
    """`torch.Tensor`: the type of every tensor; `torch.Tensor(data)` makes a default-dtype
    tensor (see the module docstring)."""

    __slots__ = ()
