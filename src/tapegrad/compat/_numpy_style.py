"""The functions where NumPy (which MXNet's `mx.np` and MegEngine's `F` follow) and PyTorch
(which the core follows) disagree, each a composition of core ops (no new derivative rules).

`transpose(axes)` permutes (reversing by default), `split(x, sections | indices)`,
`repeat_elements` repeats elements (NumPy's `repeat`, PyTorch's `repeat_interleave`),
`flip(axis=None)` flips every axis, `std`/`var` use `ddof=0`, `amax`/`amin` return values
only, `pad` takes NumPy's `pad_width`. Shared by the MXNet and MegEngine facades; the
results have the class of their inputs (the dispatcher's rule).
"""

from __future__ import annotations

import numpy as np


def _core():
    import tapegrad

    return tapegrad


def _shape(shape) -> tuple:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def transpose(a, axes=None):
    """Permute the axes (NumPy): reversed when `axes` is None."""
    axes = tuple(range(a.ndim))[::-1] if axes is None or axes == () else tuple(axes)
    return _core().permute(a, axes)


def batch_matmul(a, b, transpose_a=False, transpose_b=False):
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


def hsplit(ary, indices_or_sections) -> list:
    """NumPy's hsplit: `split` along axis 1 (axis 0 of a 1-D array)."""
    return split(ary, indices_or_sections, axis=1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections) -> list:
    """NumPy's vsplit: `split` along axis 0 of an array of at least 2 dimensions."""
    if ary.ndim < 2:
        raise ValueError(f"vsplit only works on arrays of 2 or more dimensions, got {ary.ndim}")
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections) -> list:
    """NumPy's dsplit: `split` along axis 2 of an array of at least 3 dimensions."""
    if ary.ndim < 3:
        raise ValueError(f"dsplit only works on arrays of 3 or more dimensions, got {ary.ndim}")
    return split(ary, indices_or_sections, axis=2)


def repeat_elements(a, repeats, axis=None):
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
    target = shape[: axis + 1] + (r,) + shape[axis + 1 :]
    out_shape = shape[:axis] + (shape[axis] * r,) + shape[axis + 1 :]
    return tg.reshape(tg.broadcast_to(expanded, target), out_shape)


def flip(m, axis=None):
    """NumPy's flip: every axis when `axis` is None."""
    if axis is None:
        axis = tuple(range(m.ndim))
    elif isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    return _core().flip(m, tuple(axis))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """NumPy's std: population standard deviation (`ddof=0`) unless told otherwise."""
    return _core().std(a, dim=axis, correction=ddof, keepdim=keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """NumPy's var: population variance (`ddof=0`) unless told otherwise."""
    return _core().var(a, dim=axis, correction=ddof, keepdim=keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    """The maximum over `axis` (values only, as NumPy)."""
    return _core().amax(a, dim=() if axis is None else axis, keepdim=keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    """The minimum over `axis` (values only, as NumPy)."""
    return _core().amin(a, dim=() if axis is None else axis, keepdim=keepdims)


def pad(x, pad_width, mode="constant", constant_values=0, **_):
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


def concatenate(seq, axis=0, out=None):
    """Join arrays along an existing axis (None: flatten them first, as NumPy)."""
    tg = _core()
    if axis is None:
        seq = [tg.reshape(a, (-1,)) for a in seq]
        axis = 0
    return tg.cat(list(seq), dim=axis)


def stack(arrays, axis=0, out=None):
    return _core().stack(list(arrays), dim=axis)


def clip(a, a_min, a_max, out=None):
    return _core().clamp(a, a_min, a_max)


def reshape(a, newshape, order="C"):
    """NumPy's reshape (one -1 inferred); a view where the core can make one."""
    if order != "C":
        raise ValueError(f"reshape: order={order!r} is not supported; only 'C'")
    return _core().reshape(a, _shape(newshape))
