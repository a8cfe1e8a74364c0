"""PyTorch's legacy tensor types: `torch.FloatTensor([1, 2])`, `torch.LongTensor(3, 4)`,
`isinstance(t, torch.FloatTensor)`, `t.type(torch.DoubleTensor)`.

Each type is a class whose call makes an ordinary tapegrad tensor of its dtype: from data
(a list, an array, a tensor), or zero-filled from sizes (PyTorch leaves those uninitialized;
zeros are one valid choice of "uninitialized").
"""
from __future__ import annotations

import numpy as np

from ... import creation
from ...tensor import Tensor

__all__ = ["LEGACY_TYPES"]


class _LegacyTensorType(type):
    """The metaclass: calling the type makes a tensor, isinstance checks the dtype."""

    dtype: np.dtype

    def __call__(cls, *args, device=None):
        if not args:
            return creation.zeros(0, dtype=cls.dtype, device=device or "cpu")
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return creation.zeros(*[int(a) for a in args], dtype=cls.dtype,
                                  device=device or "cpu")
        if len(args) == 1 and type(args[0]).__name__ == "Size":  # torch.Size: a shape
            return creation.zeros(*args[0], dtype=cls.dtype, device=device or "cpu")
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}(): expected sizes (ints) or one sequence of data, "
                            f"got {len(args)} arguments")
        data = args[0]
        if isinstance(data, Tensor):
            return data.to(dtype=cls.dtype)
        return creation.tensor(data, dtype=cls.dtype, device=device or "cpu")

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _make(name: str, dtype: str) -> type:
    doc = f"`torch.{name}(data)` or `torch.{name}(*sizes)`: a {dtype} tensor (legacy API)."
    return _LegacyTensorType(name, (), {"dtype": np.dtype(dtype), "__doc__": doc})


LEGACY_TYPES = {
    name: _make(name, dtype) for name, dtype in [
        ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
        ("ByteTensor", "uint8"), ("CharTensor", "int8"), ("ShortTensor", "int16"),
        ("IntTensor", "int32"), ("LongTensor", "int64"), ("BoolTensor", "bool"),
    ]
}
