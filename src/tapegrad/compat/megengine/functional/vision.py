"""`F.vision`: `interpolate` (nearest and bilinear resizing of NCHW tensors).

>>> import tapegrad.compat.megengine.functional as F
>>> F.vision.interpolate(mge.tensor(np.ones((1, 1, 2, 2))), scale_factor=2).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

import numpy as np

from ..._facade import facade_getattr

__all__ = ["interpolate"]


def _tg():
    import tapegrad

    return tapegrad


def _source(out_n: int, in_n: int, align_corners: bool) -> np.ndarray:
    if align_corners:
        return np.linspace(0.0, in_n - 1.0, out_n) if out_n > 1 else np.zeros(1)
    return np.clip((np.arange(out_n) + 0.5) * (in_n / out_n) - 0.5, 0.0, in_n - 1.0)


def _linear_along(x, axis: int, out_n: int, align_corners: bool):
    tg = _tg()
    in_n = x.shape[axis]
    src = _source(out_n, in_n, align_corners)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, in_n - 1)
    frac = (src - lo).astype(np.dtype(x.dtype))
    shape = [1] * x.ndim
    shape[axis] = out_n
    a = tg.index_select(x, axis, tg.tensor(lo))
    b = tg.index_select(x, axis, tg.tensor(hi))
    return a + (b - a) * tg.tensor(frac.reshape(shape))


def interpolate(inp, size=None, scale_factor=None, mode="bilinear", align_corners=None):
    """Resize the last two axes of `inp` (N, C, H, W) to `size` or by `scale_factor`.

    Modes: "nearest", "bilinear" (and "linear" for 3-D inputs). Differentiable in `inp`.
    """
    tg = _tg()
    spatial = inp.shape[2:]
    if size is None:
        if scale_factor is None:
            raise ValueError("interpolate: give size or scale_factor")
        sf = (scale_factor,) * len(spatial) if np.isscalar(scale_factor) else scale_factor
        size = tuple(int(np.floor(n * f)) for n, f in zip(spatial, sf))
    size = (int(size),) * len(spatial) if np.isscalar(size) else tuple(int(s) for s in size)
    mode = mode.lower()
    if mode == "nearest":
        out = inp
        for axis, (n_in, n_out) in enumerate(zip(spatial, size), start=2):
            idx = np.minimum(np.floor(np.arange(n_out) * (n_in / n_out)), n_in - 1)
            out = tg.index_select(out, axis, tg.tensor(idx.astype(np.int64)))
        return out
    if mode in ("bilinear", "linear"):
        out = inp
        for axis, n_out in enumerate(size, start=2):
            out = _linear_along(out, axis, n_out, bool(align_corners))
        return out
    raise ValueError(f"interpolate: mode {mode!r} is not supported; use 'nearest' or 'bilinear'")


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (F.vision)",
    {},
    {
        "nms": "not provided",
        "roi_align": "not provided",
        "roi_pooling": "not provided",
        "warp_perspective": "not provided",
        "remap": "not provided",
    },
)
