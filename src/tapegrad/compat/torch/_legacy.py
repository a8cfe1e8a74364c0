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

__all__ = [
    "LEGACY_TYPES",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "ByteTensor",
    "CharTensor",
    "ShortTensor",
    "IntTensor",
    "LongTensor",
    "BoolTensor",
]


class _LegacyTensorType(type):
    """The metaclass: calling the type makes a tensor, isinstance checks the dtype."""

    dtype: np.dtype

    def __call__(cls, *args, device=None):
        if not args:
            return creation.zeros(0, dtype=cls.dtype, device=device or "cpu")
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return creation.zeros(*[int(a) for a in args], dtype=cls.dtype, device=device or "cpu")
        if len(args) == 1 and type(args[0]).__name__ == "Size":  # torch.Size: a shape
            return creation.zeros(*args[0], dtype=cls.dtype, device=device or "cpu")
        if len(args) != 1:
            raise TypeError(
                f"{cls.__name__}(): expected sizes (ints) or one sequence of data, "
                f"got {len(args)} arguments"
            )
        data = args[0]
        if isinstance(data, Tensor):
            return data.to(dtype=cls.dtype)
        return creation.tensor(data, dtype=cls.dtype, device=device or "cpu")

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


class FloatTensor(metaclass=_LegacyTensorType):
    """`torch.FloatTensor(data)` or `torch.FloatTensor(*sizes)`: a float32 tensor (legacy API)."""

    dtype = np.dtype("float32")


class DoubleTensor(metaclass=_LegacyTensorType):
    """`torch.DoubleTensor(data)` or `torch.DoubleTensor(*sizes)`: a float64 tensor (legacy API)."""

    dtype = np.dtype("float64")


class HalfTensor(metaclass=_LegacyTensorType):
    """`torch.HalfTensor(data)` or `torch.HalfTensor(*sizes)`: a float16 tensor (legacy API)."""

    dtype = np.dtype("float16")


class ByteTensor(metaclass=_LegacyTensorType):
    """`torch.ByteTensor(data)` or `torch.ByteTensor(*sizes)`: a uint8 tensor (legacy API)."""

    dtype = np.dtype("uint8")


class CharTensor(metaclass=_LegacyTensorType):
    """`torch.CharTensor(data)` or `torch.CharTensor(*sizes)`: a int8 tensor (legacy API)."""

    dtype = np.dtype("int8")


class ShortTensor(metaclass=_LegacyTensorType):
    """`torch.ShortTensor(data)` or `torch.ShortTensor(*sizes)`: a int16 tensor (legacy API)."""

    dtype = np.dtype("int16")


class IntTensor(metaclass=_LegacyTensorType):
    """`torch.IntTensor(data)` or `torch.IntTensor(*sizes)`: a int32 tensor (legacy API)."""

    dtype = np.dtype("int32")


class LongTensor(metaclass=_LegacyTensorType):
    """`torch.LongTensor(data)` or `torch.LongTensor(*sizes)`: a int64 tensor (legacy API)."""

    dtype = np.dtype("int64")


class BoolTensor(metaclass=_LegacyTensorType):
    """`torch.BoolTensor(data)` or `torch.BoolTensor(*sizes)`: a bool tensor (legacy API)."""

    dtype = np.dtype("bool")


LEGACY_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        ByteTensor,
        CharTensor,
        ShortTensor,
        IntTensor,
        LongTensor,
        BoolTensor,
    )
}
