"""`mx.nd.NDArray`: the MXNet facade's array type, a `tapegrad.Tensor` with MXNet's methods.

What follows MXNet 1.9.1 here (and differs from `tg.Tensor`, which keeps PyTorch's
meaning): `size` is the element count (an int), `reshape` takes MXNet's special codes,
`transpose(axes)` / `T` permute all axes, `max`/`min` return values only, `split` takes a
number of outputs, `repeat` repeats elements, `flatten()` keeps the first axis,
`asscalar`, `context`/`ctx`, `as_in_context`, `copyto`, `copy`, `wait_to_read`,
`as_np_ndarray`, and `backward(out_grad=None, retain_graph=False, train_mode=True)`.
Everything else is the core Tensor's. An op on NDArrays returns an NDArray, and
`.grad` and `detach()` are NDArrays.
"""

from __future__ import annotations

import math
from typing import ClassVar

from ....tensor import Tensor, as_class, write_data
from ..._numpy_style import amax, amin, repeat_elements, split, transpose
from .. import _shape_codes
from ..context import context_of, device_of, placed


def _tg():
    import tapegrad

    return tapegrad


class NDArray(Tensor):
    """MXNet's n-dimensional array (`mx.nd.array([1, 2])`: float32, as MXNet).

    >>> x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    >>> x.size, x.reshape((0, -1, 1)).shape, x.T.shape
    (6, (2, 3, 1), (3, 2))
    """

    __slots__ = ("_ctx_id",)  # the device id of an explicit ctx= (context.py), else unset
    # the class the core gives this array's gradients and detached copies (set below the
    # class; tensor.array_class_of reads it)
    _array_class: ClassVar[type[NDArray]]

    @property
    def size(self) -> int:  # type: ignore[override]  # MXNet's size is an int, not a method
        """The number of elements (MXNet's `size`: an int, not PyTorch's `size()`)."""
        return math.prod(self.shape)

    def __repr__(self) -> str:
        """MXNet's form: the values, then the class, the shape and the context.

        >>> mx.nd.array([[1, 2, 3], [4, 5, 6]])
        <BLANKLINE>
        [[1. 2. 3.]
         [4. 5. 6.]]
        <NDArray 2x3 @cpu(0)>
        """
        shape = "x".join(str(n) for n in self.shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape} @{self.context}>"

    __str__ = __repr__  # MXNet prints an NDArray the same way

    @property
    def context(self):
        """The device, as an MXNet Context (`cpu(0)`, `gpu(0)`)."""
        return context_of(self.device, getattr(self, "_ctx_id", 0))

    ctx = context

    def as_in_context(self, context):
        """This array on `context` (itself when it is already there); recorded."""
        if context == self.context:
            return self
        moved = self.to(device_of(context))
        if moved is self:  # the same kind of device, another id: a copy, as MXNet's
            moved = _tg().clone(self)
        return placed(moved, context)

    as_in_ctx = as_in_context

    def copyto(self, other):
        """Copy the values into the array `other` (returned), or to a new array on the
        Context `other`."""
        if isinstance(other, Tensor):
            if other.shape != self.shape:
                raise ValueError(
                    f"copyto: shape {self.shape} does not match the target's {other.shape}"
                )
            write_data(other, self.detach())
            return other
        copied = as_class(_tg().tensor(self.detach(), device=device_of(other)), type(self))
        return placed(copied, other)

    def copy(self):
        """A copy of the values (recorded, as MXNet's copy)."""
        return _tg().clone(self)

    def wait_to_read(self) -> None:
        """Nothing to wait for: tapegrad runs eagerly."""

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar."""
        if self.size != 1:
            raise ValueError(
                f"asscalar: the array has shape {self.shape} ({self.size} elements); only a "
                "one-element array is a scalar"
            )
        return self.asnumpy().reshape(-1)[0]

    def as_np_ndarray(self):
        """The same values as an `mx.np.ndarray` (sharing storage when nothing records it)."""
        from ..numpy.multiarray import ndarray

        return _as_array_type(self, ndarray)

    def as_nd_ndarray(self):
        """The same values as an `mx.nd.NDArray` (sharing storage when nothing records it)."""
        return _as_array_type(self, NDArray)

    # MXNet's signature (out_grad first), not PyTorch's that the core Tensor has
    def backward(  # type: ignore[override]
        self, out_grad=None, retain_graph=False, train_mode=True
    ) -> None:
        """Backpropagate from this array into the `.grad` of the marked variables."""
        from ..autograd import backward

        backward(
            [self],
            None if out_grad is None else [out_grad],
            retain_graph=retain_graph,
            train_mode=train_mode,
        )

    def reshape(self, *shape, **kwargs):
        """A view with a new shape, MXNet's special codes allowed: 0 copies an input
        dimension, -1 is inferred, -2 copies the rest, -3 merges two dimensions, -4 splits
        one into the next two values; `reverse=True` reads them right to left."""
        reverse = kwargs.pop("reverse", False)
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        elif len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        return _tg().reshape(self, _shape_codes.infer(self.shape, tuple(shape), reverse))

    @property
    def T(self):  # noqa: N802 - MXNet's name
        """Axes reversed (the array itself when it has fewer than 2)."""
        return self if self.ndim < 2 else transpose(self)

    def transpose(self, *axes, **kwargs):
        """Permute the axes (`axes=` or positional; reversed when none are given)."""
        axes = kwargs.pop(
            "axes", axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        )
        if kwargs:
            raise TypeError(f"transpose: unexpected arguments {sorted(kwargs)}")
        return transpose(self, tuple(axes) or None)

    def max(self, axis=None, keepdims=False, exclude=False):  # noqa: A003
        """The maximum over `axis` (values only, as MXNet)."""
        return amax(self, _axes(axis, exclude, self.ndim), keepdims=keepdims)

    def min(self, axis=None, keepdims=False, exclude=False):  # noqa: A003
        """The minimum over `axis` (values only, as MXNet)."""
        return amin(self, _axes(axis, exclude, self.ndim), keepdims=keepdims)

    def sum(self, axis=None, keepdims=False, exclude=False):  # noqa: A003
        """The sum over `axis` (every axis but `axis` with exclude=True; all when None)."""
        from . import sum as nd_sum

        return nd_sum(self, axis, keepdims, exclude)

    def mean(self, axis=None, keepdims=False, exclude=False):
        """The mean over `axis` (every axis but `axis` with exclude=True; all when None)."""
        from . import mean as nd_mean

        return nd_mean(self, axis, keepdims, exclude)

    def split(self, num_outputs, axis=1, squeeze_axis=False):
        """`num_outputs` equal parts along `axis` (default 1); one part is returned bare."""
        parts = split(self, int(num_outputs), axis)
        if squeeze_axis:
            parts = [_tg().squeeze(p, axis) for p in parts]
        return parts[0] if len(parts) == 1 else parts

    def repeat(self, repeats, axis=None):
        """Each element `repeats` times along `axis` (flattened when None)."""
        return repeat_elements(self, repeats, axis)

    def expand_dims(self, axis):
        """A new axis of length 1 at `axis`."""
        return _tg().unsqueeze(self, axis)

    def zeros_like(self):
        """Zeros of this array's shape, dtype and class."""
        return as_class(_tg().zeros_like(self), type(self))

    def ones_like(self):
        """Ones of this array's shape, dtype and class."""
        return as_class(_tg().ones_like(self), type(self))

    def broadcast_like(self, other):
        """Broadcast to the shape of `other`."""
        return _tg().broadcast_to(self, other.shape)

    def softmax(self, axis=-1):
        """Softmax over `axis` (default the last, as MXNet)."""
        return _tg().nn.functional.softmax(self, dim=axis)

    def log_softmax(self, axis=-1):
        """Log-softmax over `axis` (default the last, as MXNet)."""
        return _tg().nn.functional.log_softmax(self, dim=axis)

    def flatten(self, inplace=False):
        """Collapse every axis but the first: (N, ...) -> (N, prod(...))."""
        return _tg().reshape(self, (self.shape[0] if self.ndim else 1, -1))

    def squeeze(self, axis=None, inplace=False):
        """The array without its size-1 axes (or only `axis`); `inplace` is accepted (the
        result is a view either way)."""
        if axis is None:
            return _tg().squeeze(self)
        return _tg().squeeze(self, axis)

    @property
    def stype(self) -> str:
        """The storage type: always "default" (dense; sparse storage is not provided)."""
        return "default"

    def tostype(self, stype):
        """Only dense storage exists: "default" returns the array itself."""
        if stype != "default":
            raise ValueError(
                f"tostype: stype {stype!r} is not supported; only dense "
                "('default') storage exists in tapegrad"
            )
        return self

    def slice(self, begin, end, step=()):  # noqa: A003 - MXNet's method name
        """The sub-array from `begin` to `end` (tuples, one entry per leading axis; None
        means the whole axis), by `step`, as MXNet's `slice` operator."""
        step = tuple(step) if step else (None,) * len(begin)
        index = tuple(builtins_slice(b, e, s) for b, e, s in zip(begin, end, step, strict=False))
        return self[index]

    def take(self, indices, axis=0, mode="clip"):
        """The entries at integer `indices` along `axis` (indices clipped into range, or
        wrapped with mode="wrap", as MXNet)."""
        tg = _tg()
        n = self.shape[axis]
        idx = indices.asnumpy() if isinstance(indices, Tensor) else indices
        import numpy as np

        idx = np.asarray(idx).astype(np.int64)
        idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, n - 1)
        flat = tg.index_select(self, axis, tg.tensor(idx.reshape(-1)))
        return tg.reshape(flat, self.shape[:axis] + idx.shape + self.shape[axis + 1 :])


builtins_slice = slice
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
NDArray._array_class = NDArray  # .grad, detach() and .data of an NDArray are NDArrays


def _axes(axis, exclude, ndim):
    if axis is None or axis == ():
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if exclude:
        keep = {a % ndim for a in axes}
        axes = tuple(a for a in range(ndim) if a not in keep)
    return axes


def _as_array_type(t: Tensor, cls: type) -> Tensor:
    if type(t) is cls:
        return t
    if not t.requires_grad:  # on no tape (record scope included)
        return as_class(t, cls)
    if issubclass(cls, type(t)):
        # recorded: an identity the dispatcher types as `cls` (the more derived class)
        # (recorded on t's tapes even outside record(): a create_graph gradient is)
        from ....autograd.record import _RecordingStateScope

        with _RecordingStateScope(True, None):
            return t + as_class(_tg().zeros((), dtype=t.dtype, device=t.device), cls)
    return t  # a recorded mx.np.ndarray already is an NDArray
