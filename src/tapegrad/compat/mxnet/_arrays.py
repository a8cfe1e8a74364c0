"""What `mx.np` and `mx.nd` share: array creation with MXNet's defaults, and the functions
where NumPy (which MXNet follows) and PyTorch (which the core follows) disagree.

Defaults set here: arrays made from Python numbers are float32 (MXNet's default dtype,
integers included); every creation function takes `ctx=` (and `device=`).
Semantics mapped here, each a composition of core ops (no new derivative rules):
`transpose(axes)` permutes (reversing by default), `split(x, sections | indices)`,
`repeat` repeats elements (NumPy's, PyTorch's `repeat_interleave`), `flip(axis=None)`
flips every axis, `std`/`var` use `ddof=0`, `max`/`min` return values only, `pad` takes
NumPy's `pad_width`.
"""
from __future__ import annotations

import numpy as np

from ... import creation, dtypes
from ...tensor import Tensor
from .context import device_of

_F32 = dtypes.float32


def _core():
    import tapegrad

    return tapegrad


def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _dtype(dtype, default=_F32):
    return default if dtype is None else dtypes.as_dtype(dtype)


def array(obj, dtype=None, ctx=None, *, device=None, keep_array_dtype=True) -> Tensor:
    """A new array holding a copy of `obj`.

    Python numbers and lists become float32 (MXNet's default), whatever their kind; NumPy
    arrays and tensors keep their dtype (`mx.np`) unless `keep_array_dtype=False` (`mx.nd`,
    where everything but an NDArray becomes float32).
    """
    dev = device_of(device if device is not None else ctx)
    if isinstance(obj, Tensor):
        return creation.tensor(obj, dtype=dtype, device=dev)
    if isinstance(obj, np.ndarray) and dtype is None and keep_array_dtype:
        return creation.tensor(obj, device=dev)
    arr = np.asarray(obj)
    if dtype is None:
        dtype = _F32 if arr.dtype.kind in "iuf" or not keep_array_dtype else None
    return creation.tensor(arr, dtype=dtype, device=dev)


def zeros(shape, dtype=None, ctx=None, *, order="C", device=None, **_) -> Tensor:
    return creation.zeros(_shape(shape), dtype=_dtype(dtype), device=device_of(device or ctx))


def ones(shape, dtype=None, ctx=None, *, order="C", device=None, **_) -> Tensor:
    return creation.ones(_shape(shape), dtype=_dtype(dtype), device=device_of(device or ctx))


def empty(shape, dtype=None, ctx=None, *, order="C", device=None, **_) -> Tensor:
    return creation.zeros(_shape(shape), dtype=_dtype(dtype), device=device_of(device or ctx))


def full(shape, fill_value, dtype=None, ctx=None, *, order="C", device=None, **_) -> Tensor:
    return creation.full(_shape(shape), fill_value, dtype=_dtype(dtype),
                         device=device_of(device or ctx))


def arange(start, stop=None, step=1, dtype=None, ctx=None, *, repeat=1, device=None,
           **_) -> Tensor:
    """Values from `start` to `stop` by `step`, float32 unless `dtype` (as MXNet)."""
    t = creation.arange(start, stop, step, dtype=_dtype(dtype), device=device_of(device or ctx))
    if repeat != 1:
        t = repeat_elements(t, int(repeat))
    return t


def linspace(start, stop, num=50, endpoint=True, dtype=None, ctx=None, *, device=None,
             **_) -> Tensor:
    arr = np.linspace(start, stop, int(num), endpoint=endpoint)
    return creation.tensor(arr, dtype=_dtype(dtype), device=device_of(device or ctx))


def eye(N, M=None, k=0, dtype=None, ctx=None, *, device=None, **_) -> Tensor:
    return creation.tensor(np.eye(N, M, k), dtype=_dtype(dtype), device=device_of(device or ctx))


def zeros_like(a, dtype=None, **_) -> Tensor:
    return creation.zeros_like(a, dtype=dtype)


def ones_like(a, dtype=None, **_) -> Tensor:
    return creation.ones_like(a, dtype=dtype)


def full_like(a, fill_value, dtype=None, **_) -> Tensor:
    return creation.full_like(a, fill_value, dtype=dtype)


# ---------------------------------------------------------------- NumPy-semantics functions
def transpose(a, axes=None) -> Tensor:
    """Permute the axes (NumPy): reversed when `axes` is None."""
    axes = tuple(range(a.ndim))[::-1] if axes is None or axes == () else tuple(axes)
    return _core().permute(a, axes)


def batch_matmul(a, b, transpose_a=False, transpose_b=False) -> Tensor:
    """a @ b batched over the leading axes, either operand's last two axes swapped first
    (`mx.nd.batch_dot`, `mge.functional.matmul`)."""
    tg = _core()
    if transpose_a:
        a = tg.swapaxes(a, -1, -2)
    if transpose_b:
        b = tg.swapaxes(b, -1, -2)
    return tg.matmul(a, b)


def split(ary, indices_or_sections, axis=0) -> list:
    """NumPy's split: an int gives that many equal parts, a list gives split indices."""
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(
                f"split: axis {axis} of length {n} does not divide into {k} equal sections; "
                "pass split indices (a list) for unequal parts"
            )
        sizes = [n // k] * k
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:], strict=False)]
    return list(_core().split(ary, sizes, dim=axis))


def repeat_elements(a, repeats, axis=None) -> Tensor:
    """NumPy's repeat: each element `repeats` times (PyTorch's repeat_interleave)."""
    tg = _core()
    if axis is None:
        a = tg.reshape(a, (-1,))
        axis = 0
    axis = axis % a.ndim
    if not isinstance(repeats, (int, np.integer)):
        raise TypeError(
            f"repeat: only an integer number of repeats is supported, got {type(repeats).__name__}"
        )
    r = int(repeats)
    shape = a.shape
    expanded = tg.unsqueeze(a, axis + 1)
    target = shape[: axis + 1] + (r,) + shape[axis + 1:]
    out_shape = shape[:axis] + (shape[axis] * r,) + shape[axis + 1:]
    return tg.reshape(tg.broadcast_to(expanded, target), out_shape)


def flip(m, axis=None) -> Tensor:
    """NumPy's flip: every axis when `axis` is None."""
    if axis is None:
        axis = tuple(range(m.ndim))
    elif isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    return _core().flip(m, tuple(axis))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Tensor:
    """NumPy's std: population standard deviation (`ddof=0`) unless told otherwise."""
    return _core().std(a, dim=axis, correction=ddof, keepdim=keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Tensor:
    """NumPy's var: population variance (`ddof=0`) unless told otherwise."""
    return _core().var(a, dim=axis, correction=ddof, keepdim=keepdims)


def amax(a, axis=None, out=None, keepdims=False) -> Tensor:
    """The maximum over `axis` (values only, as NumPy)."""
    return _core().amax(a, dim=() if axis is None else axis, keepdim=keepdims)


def amin(a, axis=None, out=None, keepdims=False) -> Tensor:
    """The minimum over `axis` (values only, as NumPy)."""
    return _core().amin(a, dim=() if axis is None else axis, keepdim=keepdims)


def pad(x, pad_width, mode="constant", constant_values=0, **_) -> Tensor:
    """NumPy's pad: `pad_width` is ((before, after), ...) per axis, first axis first."""
    nd = x.ndim
    if isinstance(pad_width, (int, np.integer)):
        pairs = [(int(pad_width),) * 2] * nd
    else:
        pw = [tuple(p) if isinstance(p, (tuple, list)) else (p, p) for p in pad_width]
        pairs = pw * nd if len(pw) == 1 else pw
    if len(pairs) != nd:
        raise ValueError(f"pad: pad_width has {len(pairs)} entries for an array of {nd} axes")
    flat = []
    for before, after in reversed(pairs):  # PyTorch's order: last axis first
        flat += [int(before), int(after)]
    if mode != "constant":
        raise ValueError(f"pad: mode {mode!r} is not supported by the MXNet facade; use 'constant'")
    return _core().pad(x, flat, mode="constant", value=constant_values)


def concatenate(seq, axis=0, out=None) -> Tensor:
    """Join arrays along an existing axis (None: flatten them first, as NumPy)."""
    tg = _core()
    if axis is None:
        seq = [tg.reshape(a, (-1,)) for a in seq]
        axis = 0
    return tg.cat(list(seq), dim=axis)


def stack(arrays, axis=0, out=None) -> Tensor:
    return _core().stack(list(arrays), dim=axis)


def clip(a, a_min, a_max, out=None) -> Tensor:
    return _core().clamp(a, a_min, a_max)


def reshape(a, newshape, reverse=False, order="C") -> Tensor:
    if reverse:
        raise ValueError("reshape(reverse=True) is not supported by the MXNet facade")
    return _core().reshape(a, _shape(newshape) if not isinstance(newshape, int) else (newshape,))


# ---------------------------------------------------------------- ndarray methods MXNet has
def _attach_methods() -> None:
    """Give Tensor the MXNet-only array methods it lacks (never replacing an existing one)."""
    from .context import context_of

    def context(self):
        return context_of(self.device)

    def as_in_context(self, ctx):
        """This array on `ctx` (itself when it is already there)."""
        return self.to(device_of(ctx))

    def copyto(self, other):
        """A copy on a context, or copied into the array `other` (returned)."""
        if isinstance(other, Tensor):
            other._data[...] = self._data
            other._version[0] += 1
            return other
        return creation.tensor(self, device=device_of(other))

    def wait_to_read(self):
        """Nothing to wait for: tapegrad runs eagerly."""

    def asscalar(self):
        return self.item()

    def same(self):
        return self

    def mx_copy(self):
        return creation.tensor(self)

    def expand_dims(self, axis):
        return _core().unsqueeze(self, axis)

    methods = {
        "context": property(context), "ctx": property(context), "as_in_context": as_in_context,
        "as_in_ctx": as_in_context, "copyto": copyto, "wait_to_read": wait_to_read,
        "asscalar": asscalar, "as_np_ndarray": same, "as_nd_ndarray": same, "copy": mx_copy,
        "expand_dims": expand_dims,
    }
    for name, fn in methods.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)


_attach_methods()
