"""`F.vision`: `interpolate` (nearest and bilinear resizing of NCHW tensors), and `flip` and
`rot90` of NHWC images.

>>> import tapegrad.compat.megengine.functional as F
>>> F.vision.interpolate(mge.tensor(np.ones((1, 1, 2, 2))), scale_factor=2).shape
(1, 1, 4, 4)
"""

from __future__ import annotations

import numpy as np

from ..._facade import facade_getattr

__all__ = ["flip", "interpolate", "rot90"]


def _nhwc(what: str, inp):
    import tapegrad as tg

    if not isinstance(inp, tg.Tensor):
        inp = tg.tensor(inp)
    if inp.ndim != 4:
        raise ValueError(
            f"F.vision.{what}: expected a 4-D NHWC image batch, got shape {tuple(inp.shape)}; "
            "add the missing axes (x[None] for one image, x[..., None] for one channel)"
        )
    return inp


def flip(inp, vertical: bool = True, horizontal: bool = True):
    """MegEngine's `F.vision.flip`: NHWC images reversed top-bottom (`vertical`, the H axis)
    and/or left-right (`horizontal`, the W axis); differentiable.

    >>> import tapegrad.compat.megengine.functional as F
    >>> x = mge.tensor(np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1))
    >>> F.vision.flip(x).numpy()[0, :, :, 0].tolist()
    [[3.0, 2.0], [1.0, 0.0]]
    """
    inp = _nhwc("flip", inp)
    axes = tuple(a for a, on in ((1, vertical), (2, horizontal)) if on)
    return inp.clone() if not axes else inp.flip(axes)


def rot90(inp, clockwise: bool = True):
    """MegEngine's `F.vision.rot90`: NHWC images turned a quarter turn, clockwise by default
    (the result is NWHC); differentiable.

    >>> import tapegrad.compat.megengine.functional as F
    >>> x = mge.tensor(np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1))
    >>> F.vision.rot90(x).numpy()[0, :, :, 0].tolist()
    [[2.0, 0.0], [3.0, 1.0]]
    """
    inp = _nhwc("rot90", inp)
    # clockwise: new row i is old column i read bottom-up; counterclockwise: old column
    # W-1-i read top-down
    if clockwise:
        return inp.flip(1).permute(0, 2, 1, 3)
    return inp.flip(2).permute(0, 2, 1, 3)


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
