"""Python operators and the methods that need only the arithmetic ops."""
from __future__ import annotations

from ..tensor import Tensor
from .arith import _add, _div, _mul, _neg, _pow, _sub
from .registry import OPS, apply_inplace


def _attach_operators() -> None:
    def __add__(self, other):
        return _add(self, other)

    def __radd__(self, other):
        return _add(other, self)

    def __sub__(self, other):
        return _sub(self, other)

    def __rsub__(self, other):
        return _sub(other, self)

    def __mul__(self, other):
        return _mul(self, other)

    def __rmul__(self, other):
        return _mul(other, self)

    def __truediv__(self, other):
        return _div(self, other)

    def __rtruediv__(self, other):
        return _div(other, self)

    def __pow__(self, other):
        return _pow(self, other)

    def __rpow__(self, other):
        return _pow(other, self)

    def __neg__(self):
        return _neg(self)

    def __pos__(self):
        return self

    def __iadd__(self, other):
        return apply_inplace(_add, self, other)

    def __isub__(self, other):
        return apply_inplace(_sub, self, other)

    def __imul__(self, other):
        return apply_inplace(_mul, self, other)

    def __itruediv__(self, other):
        return apply_inplace(_div, self, other)

    for fn in (__add__, __radd__, __sub__, __rsub__, __mul__, __rmul__, __truediv__,
               __rtruediv__, __pow__, __rpow__, __neg__, __pos__, __iadd__, __isub__,
               __imul__, __itruediv__):
        setattr(Tensor, fn.__name__, fn)


def inplace_method(op_name: str):
    """`t.<op>_(...)`: the op applied in place (see registry.apply_inplace)."""
    op = OPS[op_name]

    def method(self, *args, **params):
        return apply_inplace(op, self, *args, **params)

    method.__name__ = op_name + "_"
    method.__doc__ = f"In-place {op_name}: writes the result into this tensor and returns it."
    return method


def _add_(self, other, *, alpha=1):
    """In-place self + alpha * other (PyTorch's `p.add_(g, alpha=-lr)`)."""
    return apply_inplace(_add, self, other if alpha == 1 else other * alpha)


def _sub_(self, other, *, alpha=1):
    """In-place self - alpha * other."""
    return apply_inplace(_sub, self, other if alpha == 1 else other * alpha)


_attach_operators()
for _name in ("mul", "div", "neg", "pow"):
    setattr(Tensor, _name + "_", inplace_method(_name))
Tensor.add_, Tensor.sub_ = _add_, _sub_
