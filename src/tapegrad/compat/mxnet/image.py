"""`mx.image`: decoding and the basic HWC image operations MXNet code calls.

`imdecode` / `imread` decode with Pillow when it is installed (tapegrad itself does not
need it; without it they raise and say so). `imresize`, `resize_short`, `fixed_crop`,
`center_crop` and `color_normalize` work on HWC NDArrays (NumPy underneath; bilinear by
default, nearest neighbour with interp=0, as OpenCV's).
"""

from __future__ import annotations

import io as _io

import numpy as np

from .._facade import facade_getattr
from .gluon.data.vision.transforms import _resize
from .ndarray import array

__all__ = [
    "imdecode",
    "imread",
    "imresize",
    "resize_short",
    "fixed_crop",
    "center_crop",
    "color_normalize",
]


def _pil():
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            "mx.image.imdecode / imread need Pillow to decode image files "
            "(pip install pillow); the other mx.image functions do not"
        ) from None
    return Image


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """The image in the bytes `buf` as an HWC uint8 NDArray (flag=0: one gray channel;
    `to_rgb=False` gives BGR, as OpenCV)."""
    image = _pil().open(_io.BytesIO(bytes(buf)))
    values = np.asarray(image.convert("L" if flag == 0 else "RGB"))
    if flag == 0:
        values = values[..., None]
    elif not to_rgb:
        values = values[..., ::-1]
    return array(np.ascontiguousarray(values), dtype="uint8")


def imread(filename, flag=1, to_rgb=True, out=None):
    """The image file `filename` decoded (see imdecode)."""
    with open(filename, "rb") as f:
        return imdecode(f.read(), flag, to_rgb)


def _values(src) -> np.ndarray:
    return src.asnumpy() if hasattr(src, "asnumpy") else np.asarray(src)


def imresize(src, w, h, interp=1):
    """`src` (HWC) resized to width `w` and height `h`."""
    v = _values(src)
    return array(_resize(v, int(h), int(w), interp == 0), dtype=v.dtype)


def resize_short(src, size, interp=2):
    """`src` resized so its shorter side is `size` (the aspect ratio kept)."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        return imresize(src, size, int(round(h * size / w)), interp)
    return imresize(src, int(round(w * size / h)), size, interp)


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The (w, h) window of `src` at (x0, y0), resized to `size` (w, h) when given."""
    v = _values(src)[y0 : y0 + h, x0 : x0 + w]
    out = array(np.ascontiguousarray(v), dtype=v.dtype)
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, size[0], size[1], interp)
    return out


def center_crop(src, size, interp=2):
    """(the middle `size` = (w, h) window of `src`, its (x0, y0, w, h))."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = size
    x0, y0 = max((w - new_w) // 2, 0), max((h - new_h) // 2, 0)
    cw, ch = min(new_w, w), min(new_h, h)
    return fixed_crop(src, x0, y0, cw, ch, size, interp), (x0, y0, cw, ch)


def color_normalize(src, mean, std=None):
    """(src - mean) / std, per channel (the last axis)."""
    out = src.astype("float32") - array(mean)
    return out / array(std) if std is not None else out


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.image)",
    {},
    {
        "ImageIter": "RecordIO image iterators are not supported; use "
        "gluon.data.DataLoader with gluon.data.vision transforms",
        "ImageDetIter": "not supported",
        "CreateAugmenter": "use gluon.data.vision.transforms",
    },
)
