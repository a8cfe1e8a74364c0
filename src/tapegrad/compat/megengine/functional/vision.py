"""`F.vision`: `interpolate` (nearest and bilinear resizing of NCHW tensors).

>>> import tapegrad.compat.megengine.functional as F
>>> F.vision.interpolate(mge.tensor(np.ones((1, 1, 2, 2))), scale_factor=2).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

import numpy as np

from ..._facade import facade_getattr

__all__ = ["interpolate"]


def interpolate(inp, size=None, scale_factor=None, mode="bilinear", align_corners=None):
    """Resize the last two axes of `inp` (N, C, H, W) to `size` or by `scale_factor`.

    Modes: "nearest", "bilinear" (and "linear" for 3-D inputs). Differentiable in `inp`.
    The resizing is tapegrad.nn.functional.interpolate's, with the scale taken from the
    output size (MegEngine's rule).
    """
    from ....nn.functional_resample import interpolate as resize

    spatial = inp.shape[2:]
    if size is None:
        if scale_factor is None:
            raise ValueError("interpolate: give size or scale_factor")
        sf = (scale_factor,) * len(spatial) if np.isscalar(scale_factor) else scale_factor
        size = tuple(int(np.floor(n * f)) for n, f in zip(spatial, sf))
    size = (int(size),) * len(spatial) if np.isscalar(size) else tuple(int(s) for s in size)
    mode = mode.lower()
    if mode == "nearest":
        return resize(inp, size=size, mode="nearest")
    if mode in ("bilinear", "linear"):
        linear = {1: "linear", 2: "bilinear", 3: "trilinear"}.get(len(spatial))
        if linear is None:
            raise ValueError(
                f"interpolate: {mode} resizing takes 3-D to 5-D inputs, got shape {inp.shape}"
            )
        return resize(inp, size=size, mode=linear, align_corners=bool(align_corners))
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
