"""`mx.gluon.data.vision.transforms`: image transforms (HWC images in, as MXNet's).

Each transform is a Block (callable on one image, HWC, or a batch, NHWC): `ToTensor`
gives CHW float32 in [0, 1], `Normalize` subtracts a per-channel mean and divides by a
per-channel std (CHW), `Resize` resizes bilinearly (or by nearest neighbour with
interpolation=0), `CenterCrop` crops the middle, `RandomFlipLeftRight` /
`RandomFlipTopBottom` flip with probability 0.5 (tapegrad's generator), `Cast` converts.
"""

from __future__ import annotations

import numpy as np

from ...block import Block, HybridBlock, Sequential

__all__ = [
    "Compose",
    "Cast",
    "ToTensor",
    "Normalize",
    "Resize",
    "CenterCrop",
    "RandomFlipLeftRight",
    "RandomFlipTopBottom",
]


def _values(x) -> np.ndarray:
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _array(values, like):
    """`values` as the facade array type of `like` (NDArray unless `like` is mx.np)."""
    from .... import ndarray
    from ....numpy.multiarray import ndarray as np_ndarray

    arr = ndarray.array(values, dtype=values.dtype)
    return arr.as_np_ndarray() if isinstance(like, np_ndarray) else arr


class Compose(Sequential):
    """The transforms applied one after the other."""

    def __init__(self, transforms) -> None:
        super().__init__(prefix="")
        for t in transforms:
            if isinstance(t, Block):
                self.add(t)
            elif callable(t):
                from ...nn import Lambda

                self.add(Lambda(t))
            else:
                raise TypeError(f"Compose: {t!r} is neither a Block nor a function")


class Cast(HybridBlock):
    """The image converted to `dtype` (float32 by default)."""

    def __init__(self, dtype="float32") -> None:
        super().__init__(prefix="")
        self._dtype = dtype

    def forward(self, x):
        return x.astype(self._dtype)


class ToTensor(HybridBlock):
    """HWC (or NHWC) values in [0, 255] -> CHW (NCHW) float32 in [0, 1]."""

    def __init__(self) -> None:
        super().__init__(prefix="")

    def forward(self, x):
        v = _values(x).astype(np.float32) / 255.0
        if v.ndim not in (3, 4):
            raise ValueError(
                f"ToTensor: expected an HWC image or an NHWC batch, got shape {v.shape}"
            )
        return _array(np.ascontiguousarray(np.moveaxis(v, -1, -3)), x)


class Normalize(HybridBlock):
    """(x - mean) / std per channel, for CHW (or NCHW) input; mean and std are a number or
    one per channel."""

    def __init__(self, mean=0.0, std=1.0) -> None:
        super().__init__(prefix="")
        self._mean, self._std = np.asarray(mean, np.float32), np.asarray(std, np.float32)

    def forward(self, x):
        shape = (-1, 1, 1)
        mean = self._mean.reshape(shape) if self._mean.ndim else self._mean
        std = self._std.reshape(shape) if self._std.ndim else self._std
        return (x - _array(mean, x)) / _array(std, x)


def _resize(v: np.ndarray, height: int, width: int, nearest: bool) -> np.ndarray:
    h, w = v.shape[-3], v.shape[-2]
    ys = (np.arange(height) + 0.5) * h / height - 0.5
    xs = (np.arange(width) + 0.5) * w / width - 0.5
    if nearest:  # OpenCV's INTER_NEAREST (what MXNet calls): floor(i * scale)
        yi = np.minimum(np.arange(height) * h // height, h - 1)
        xi = np.minimum(np.arange(width) * w // width, w - 1)
        return v[..., yi, :, :][..., xi, :]
    y0 = np.clip(np.floor(ys), 0, h - 1).astype(int)
    x0 = np.clip(np.floor(xs), 0, w - 1).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy = np.clip(ys - y0, 0, 1)[:, None, None]
    wx = np.clip(xs - x0, 0, 1)[None, :, None]
    f = v.astype(np.float64)
    top = f[..., y0, :, :][..., x0, :] * (1 - wx) + f[..., y0, :, :][..., x1, :] * wx
    bottom = f[..., y1, :, :][..., x0, :] * (1 - wx) + f[..., y1, :, :][..., x1, :] * wx
    out = top * (1 - wy) + bottom * wy
    return np.round(out).astype(v.dtype) if v.dtype.kind in "iu" else out.astype(v.dtype)


class Resize(Block):
    """Resize an HWC image (or NHWC batch) to `size` ((width, height), or an int for
    both); `keep_ratio=True` with an int scales the shorter side to it."""

    def __init__(self, size, keep_ratio=False, interpolation=1) -> None:
        super().__init__(prefix="")
        self._size, self._keep, self._nearest = size, keep_ratio, interpolation == 0

    def forward(self, x):
        v = _values(x)
        h, w = v.shape[-3], v.shape[-2]
        if isinstance(self._size, int):
            if self._keep:
                scale = self._size / min(h, w)
                width, height = round(w * scale), round(h * scale)
            else:
                width = height = self._size
        else:
            width, height = self._size
        return _array(_resize(v, int(height), int(width), self._nearest), x)


class CenterCrop(Block):
    """The middle (width, height) of an HWC image (an int: a square)."""

    def __init__(self, size, interpolation=1) -> None:
        super().__init__(prefix="")
        self._size = (size, size) if isinstance(size, int) else tuple(size)

    def forward(self, x):
        v = _values(x)
        width, height = self._size
        h, w = v.shape[-3], v.shape[-2]
        if height > h or width > w:
            v = _resize(v, max(h, height), max(w, width), False)
            h, w = v.shape[-3], v.shape[-2]
        top, left = (h - height) // 2, (w - width) // 2
        return _array(np.ascontiguousarray(v[..., top : top + height, left : left + width, :]), x)


class _RandomFlip(Block):
    _axis = -2

    def __init__(self) -> None:
        super().__init__(prefix="")

    def forward(self, x):
        import tapegrad as tg

        if float(tg.rand(()).item()) < 0.5:
            return _array(np.ascontiguousarray(np.flip(_values(x), self._axis)), x)
        return x


class RandomFlipLeftRight(_RandomFlip):
    """Flip the width axis of an HWC image with probability 0.5."""


class RandomFlipTopBottom(_RandomFlip):
    """Flip the height axis of an HWC image with probability 0.5."""

    _axis = -3
