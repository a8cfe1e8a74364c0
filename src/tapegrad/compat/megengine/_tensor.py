"""`mge.Tensor`, `mge.Parameter`, `mge.tensor`: the MegEngine facade's array types.

`mge.Tensor` is a `tapegrad.Tensor` subclass whose methods follow MegEngine 1.13 (where
they differ from `tg.Tensor`, which keeps PyTorch's meaning): `size` is the element count
(an int), `numpy()` is a copy that works whatever records the tensor, `set_value`,
`reset_zero`, `name`, `transpose(*pattern)` (reversed when no pattern), `T`, `max`/`min`
(values only). An op on
`mge.Tensor`s returns an `mge.Tensor`; `.grad` and `detach()` are `mge.Tensor`s.
In-place operators rebind, as in MegEngine (`y *= y` is `y = y * y`: a new tensor, the
old one and its recorded history unchanged).
MegEngine makes Python floats and float64 arrays float32, Python ints and int64 arrays
int32. Its tensors are not tracked by anything until a GradManager attaches them (no
`requires_grad`).

    >>> x = mge.tensor([1.0, 2.0], name="x")
    >>> x.size, x.name, x.numpy().tolist()
    (2, 'x', [1.0, 2.0])
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...nn.parameter import Parameter as _CoreParameter
from ...tensor import Tensor as _CoreTensor
from ...tensor import as_class, write_data

__all__ = ["tensor", "Tensor", "Parameter"]


def _mge_array(data, dtype):
    if isinstance(data, _CoreTensor):
        return data.detach() if dtype is None else data.detach().astype(dtype)
    arr = np.asarray(0.0 if data is None else data)
    if dtype is None:
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
    return arr


def _device(device):
    if device is None:
        return "cpu"
    name = str(device).lower()
    if name.startswith(("xpu", "gpu", "cuda")):
        from ... import backend

        try:
            backend.cupy()
        except RuntimeError:
            if name.startswith("xpu"):  # MegEngine's "any device": fall back to the CPU
                return "cpu"
            raise
        return "cuda"
    return "cpu"


def _rebinding(name: str):
    """`x op= y` for mge.Tensor: a new tensor, never in place (MegEngine rebinds)."""
    binary = getattr(_CoreTensor, f"__{name}__")

    def inplace(self, other):
        return binary(self, other)

    inplace.__name__ = f"__i{name}__"
    inplace.__doc__ = f"`x {name}= y` rebinds x to a new tensor (MegEngine), never in place."
    return inplace


class Tensor(_CoreTensor):
    """MegEngine's Tensor: `mge.Tensor([1.0, 2.0])` (a copy, float32 / int32 by default)."""

    __slots__ = ("_name",)
    # the class the core gives this tensor's gradients and detached copies (set below the
    # class; tensor.array_class_of reads it)
    _array_class: ClassVar[type[Tensor]]

    def __init__(
        self, data=None, dtype=None, device=None, is_const=False, no_cache=False, name=None
    ):
        super().__init__(_mge_array(data, dtype), dtype=dtype, device=_device(device))
        self._name = name

    def __repr__(self) -> str:
        """MegEngine's form: the values at four digits, `dtype=` unless float32, the device.

        >>> mge.tensor([1.0, 2.5]), mge.tensor([1, 2])
        (Tensor([1.  2.5], device=cpu), Tensor([1 2], dtype=int32, device=cpu))
        """
        with np.printoptions(precision=4, suppress=False):
            text = f"{type(self).__name__}({self.numpy()}"
        if self.dtype != np.float32:
            text += f", dtype={self.dtype.name}"
        return f"{text}, device={self.device})"

    @property
    def name(self):
        """The tensor's name (None unless given)."""
        return getattr(self, "_name", None)  # unset on tensors an op made

    @name.setter
    def name(self, value) -> None:
        self._name = value

    @property
    def size(self) -> int:  # type: ignore[override]  # MegEngine's size is an int, not a method
        """The number of elements (MegEngine's `size`: an int, not PyTorch's `size()`)."""
        return math.prod(self.shape)

    @property
    def _tuple_shape(self) -> tuple:
        """The shape as a plain tuple (MegEngine's own tests read this private name)."""
        return tuple(self.shape)

    def numpy(self):
        """A NumPy copy of the values (whatever records this tensor)."""
        return self.asnumpy()

    def set_value(self, value):
        """Overwrite the values in place (same shape; never recorded); returns self."""
        value = value if isinstance(value, _CoreTensor) else np.asarray(value)
        if tuple(value.shape) != self.shape:
            raise ValueError(
                f"set_value: the value has shape {tuple(value.shape)}, the tensor {self.shape}"
            )
        write_data(self, value.detach() if isinstance(value, _CoreTensor) else value)
        return self

    def reset_zero(self) -> None:
        """Set every value to zero, in place."""
        write_data(self, 0)

    def transpose(self, *pattern):
        """Permute the axes by `pattern` (reversed when none is given)."""
        import tapegrad as tg

        if len(pattern) == 1 and not isinstance(pattern[0], int):
            pattern = tuple(pattern[0])
        return tg.permute(self, pattern or tuple(range(self.ndim))[::-1])

    def max(self, axis=None, keepdims=False):  # noqa: A003
        """The maximum over `axis` (every axis when None): values only, as MegEngine."""
        from .._numpy_style import amax

        return amax(self, axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):  # noqa: A003
        """The minimum over `axis` (every axis when None): values only, as MegEngine."""
        from .._numpy_style import amin

        return amin(self, axis, keepdims=keepdims)

    @property
    def T(self):  # noqa: N802 - MegEngine's name
        """The axes reversed."""
        return self.transpose()

    __iadd__ = _rebinding("add")
    __isub__ = _rebinding("sub")
    __imul__ = _rebinding("mul")
    __itruediv__ = _rebinding("truediv")
    __ifloordiv__ = _rebinding("floordiv")
    __imod__ = _rebinding("mod")
    __ipow__ = _rebinding("pow")
    __imatmul__ = _rebinding("matmul")
    __iand__ = _rebinding("and")
    __ior__ = _rebinding("or")
    __ixor__ = _rebinding("xor")


Tensor._array_class = Tensor


class Parameter(Tensor, _CoreParameter):
    """A module parameter: an `mge.Tensor` that modules register (a `tapegrad.nn.Parameter`
    that no tape tracks until a GradManager attaches it, as in MegEngine). Its `.grad`
    and `detach()` are `mge.Tensor`s."""

    __slots__ = ()

    def __init__(self, value, dtype=None, device=None, is_const=False, no_cache=False, name=None):
        if isinstance(value, _CoreParameter) and dtype is None and device is None:
            source = value  # a core layer's parameter: share its storage
        else:
            source = tensor(value, dtype or "float32", device)
        _CoreParameter.__init__(self, source, requires_grad=False)
        self._name = name

    def __reduce_ex__(self, protocol):
        # pickling and deepcopy give an mge.Parameter back (the core's would give its own)
        return (_rebuild_parameter, (self.asnumpy(), self.grad_req, self.name))


Parameter._array_class = Tensor


def _rebuild_parameter(values, grad_req, name):
    p = Parameter(values, dtype=values.dtype, name=name)
    p.grad_req = grad_req
    return p


# MegEngine's `tensor` is the class itself (`mge.tensor([1.0])` makes one, and
# `isinstance(x, mge.tensor)` asks whether x is one)
tensor = Tensor


def from_core(t: _CoreTensor) -> _CoreTensor:
    """A core tensor nothing records as an `mge.Tensor` (sharing storage); others as they are."""
    if type(t) is _CoreTensor and not t.requires_grad:
        return as_class(t, Tensor)
    return t
