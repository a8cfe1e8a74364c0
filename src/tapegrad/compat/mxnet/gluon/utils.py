"""`mx.gluon.utils`: split_and_load (one device: the whole batch), clip_global_norm."""
from __future__ import annotations

import math

from ....tensor import Tensor, write_data
from ..._facade import facade_getattr

__all__ = ["split_and_load", "split_data", "clip_global_norm"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """`num_slice` parts of `data` along `batch_axis`."""
    from .. import _arrays

    if num_slice == 1:
        return [data]
    return _arrays.split(data, num_slice, batch_axis)


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
        raise ValueError(f"clip_global_norm: the norm is {total}")
    scale = max_norm / (total + 1e-8)
    if scale < 1.0:
        for a in arrays:
            write_data(a, a.detach() * scale)
    return total


__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.gluon.utils)", {},
                             {"download": "tapegrad does not download files"})
