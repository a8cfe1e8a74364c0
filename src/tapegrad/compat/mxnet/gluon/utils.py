"""`mx.gluon.utils`: split_and_load (one device: the whole batch), clip_global_norm."""

from __future__ import annotations

import math
import warnings

from ....tensor import Tensor, write_data
from ..._facade import facade_getattr

__all__ = ["split_and_load", "split_data", "clip_global_norm"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`num_slice` parts of `data` along `batch_axis` (views).

    With `even_split=True` the axis must divide evenly (ValueError otherwise); with False
    the first `size % num_slice` parts are one longer (as numpy.array_split), and an axis
    shorter than `num_slice` gives one part per entry, as MXNet's.
    """
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise ValueError(
            f"split_data: data with shape {tuple(data.shape)} cannot be split evenly into "
            f"{num_slice} slices along axis {batch_axis}; use a batch size that's a multiple "
            "of the number of slices, or pass even_split=False"
        )
    if num_slice == 1:
        return [data]
    if size < num_slice:
        num_slice = size
    step, longer = divmod(size, num_slice)
    bounds = [i * step + min(i, longer) for i in range(num_slice + 1)]
    head = (slice(None),) * batch_axis
    return [data[head + (slice(bounds[i], bounds[i + 1]),)] for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """One slice per context; tapegrad has one device per process, so usually the batch."""
    from .. import _arrays
    from ..context import device_of

    if not isinstance(data, Tensor):
        data = _arrays.array(data)
    if not isinstance(ctx_list, (list, tuple)):
        ctx_list = [ctx_list]
    parts = split_data(data, len(ctx_list), batch_axis, even_split)
    return [p.to(device_of(c)) for p, c in zip(parts, ctx_list, strict=False)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale the arrays in place so their joint 2-norm is at most `max_norm`; returns the
    norm before clipping."""
    total = math.sqrt(sum(float((a.asnumpy().astype("float64") ** 2).sum()) for a in arrays))
    if check_isfinite and not math.isfinite(total):
        warnings.warn(
            f"clip_global_norm: nan or inf is detected (the norm is {total}); the "
            "clipped values are undefined",
            UserWarning,
            stacklevel=2,
        )
    scale = max_norm / (total + 1e-8)
    if scale < 1.0:
        for a in arrays:
            write_data(a, a.detach() * scale)
    return total


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.utils)",
    {},
    {"download": "tapegrad does not download files"},
)
