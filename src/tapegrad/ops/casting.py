"""Copies, dtype and device casts and in-place writes: clone, astype (and float() double()
... type()), to_device (behind `Tensor.to()`), fill_, zero_, copy_.

`astype` is an op of the table because the engine casts gradients with `.astype(dtype)` on
arrays and tensors alike; its rule passes the gradient through and the engine casts it back
to the input's dtype.

    >>> tg.tensor([1.5, 2.5]).long()
    tensor([1, 2])
"""

from __future__ import annotations

from .. import backend, dtypes
from ..tensor import Tensor
from .registry import apply_inplace, defop


@defop(name="astype", backward_name="ToCopyBackward")
def _astype(xp, x, *, dtype):
    return x.astype(dtype)


@_astype.vjp
def _(xp, g, dtype):
    return (g,)  # the engine casts it back to the input's dtype


_astype.sample(lambda rng: [((rng.standard_normal((3, 4)),), {"dtype": dtypes.float64})])
_astype.reference(lambda torch, x, dtype: x.to(getattr(torch, str(dtype))))


@defop(name="clone")
def _clone(xp, x):
    return x.copy()


@_clone.vjp
def _(xp, g):
    return (g,)


_clone.sample(
    lambda rng: [((rng.standard_normal((3, 4)),), {}), ((rng.standard_normal((2, 1, 3)),), {})]
)
_clone.reference(lambda torch, x: x.clone())


def clone(input):
    """A copy that owns its storage; gradients flow back to `input`."""
    return _clone(input)


def astype(input, dtype, copy=True):
    """`input` converted to `dtype` (differentiable between floating dtypes). With copy=False
    a tensor that already has `dtype` is returned as is."""
    dt = dtypes.as_dtype(dtype)
    if not copy and dt == input.dtype:
        return input
    return _astype(input, dtype=dt)


def _caster(dt, name):
    def method(self):
        return self if self._data.dtype == dt else _astype(self, dtype=dt)

    method.__name__ = name
    method.__doc__ = f"This tensor as {dt} (itself when it already is)."
    return method


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def _type(self, dtype=None):
    """With no argument, the type name ('tapegrad.FloatTensor'); else a cast to `dtype`."""
    if dtype is None:
        return "tapegrad." + _TYPE_NAMES.get(str(self.dtype), str(self.dtype))
    return astype(self, dtype, copy=False)


# ------------------------------------------------------------ devices
@defop(name="to_device", backward_name="ToCopyBackward")
def _to_device(xp, x, *, device, source):
    return backend.to_device(x, device)


@_to_device.vjp
def _(xp, g, device, source):
    return (xp.to_device(g, device=source, source=device),)


_to_device.sample(
    lambda rng: [((rng.standard_normal((2, 3)),), {"device": "cpu", "source": "cpu"})]
)


def to_device(input: Tensor, device: str) -> Tensor:
    """`input` on `device` (a normalized name: "cpu", "cuda"); the gradient goes back to
    the input's device. `Tensor.to()` calls this."""
    return _to_device(input, device=device, source=input.device)


# ------------------------------------------------------------ in-place writes
@defop(name="fill")
def _fill(xp, x, value):
    return xp.full_like(x, value)


@_fill.vjp
def _(xp, g):
    return None, g  # the engine sums g down to the value's shape


_fill.sample(lambda rng: [((rng.standard_normal((3, 4)), rng.standard_normal(())), {})])
_fill.reference(lambda torch, x, v: torch.zeros_like(x) + v)


@defop(name="copy_from", backward_name="CopyBackwards")
def _copy_from(xp, x, src):
    out = xp.empty_like(x)
    out[...] = src
    return out


@_copy_from.vjp
def _(xp, g):
    return None, g


_copy_from.sample(lambda rng: [((rng.standard_normal((3, 4)), rng.standard_normal((4,))), {})])


def _fill_(self, value):
    """Fill this tensor with `value` (a number or a one-element tensor), in place."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            f"fill_ only supports a 0-dimension value tensor, but got one with shape {value.shape}"
        )
    return apply_inplace(_fill, self, value)


def _zero_(self):
    """Fill this tensor with zeros, in place."""
    return apply_inplace(_fill, self, 0)


def _copy_(self, src, non_blocking=False):
    """Copy `src` (broadcast to this tensor's shape, cast to its dtype) into this tensor.
    Recorded when `src` requires grad: the gradient flows to `src`."""
    shape = src.shape if isinstance(src, Tensor) else getattr(src, "shape", ())
    tail = self.shape[self.ndim - len(shape) :] if len(shape) <= self.ndim else None
    if tail is None or any(s not in (1, d) for s, d in zip(shape, tail, strict=True)):
        raise RuntimeError(
            f"copy_: the source of shape {tuple(shape)} can't be broadcast to the destination's "
            f"shape {self.shape}"
        )
    return apply_inplace(_copy_from, self, src)


__all__ = ["clone", "astype"]
