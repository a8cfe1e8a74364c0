"""`megengine.data.transform`: per-sample transforms (`Compose`, `ToMode`, `Normalize`...).

A transform's `apply(sample)` changes the fields that `order` names (default: the first
field is the "image", the rest pass through). Images are NumPy arrays, HWC.

    >>> from tapegrad.compat.megengine.data import transform as T
    >>> t = T.Compose([T.Normalize(mean=1.0, std=2.0), T.ToMode("CHW")])
    >>> img, label = t.apply((np.full((4, 5, 3), 3.0, dtype="float32"), 7))
    >>> img.shape, float(img[0, 0, 0]), label
    ((3, 4, 5), 1.0, 7)
"""

from __future__ import annotations

import numpy as np

from ...._facade import facade_getattr

__all__ = [
    "Transform",
    "VisionTransform",
    "PseudoTransform",
    "Compose",
    "ToMode",
    "Normalize",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "Lambda",
    "Pad",
    "CenterCrop",
    "RandomCrop",
    "BrightnessTransform",
    "ContrastTransform",
    "SaturationTransform",
    "ColorJitter",
]


class Transform:
    """Base: `apply(sample)`, and `apply_batch(samples)` (each sample in turn)."""

    def apply(self, input):  # noqa: A002
        """The transformed sample."""
        raise NotImplementedError

    def apply_batch(self, inputs):
        """Each sample transformed, in order."""
        return tuple(self.apply(x) for x in inputs)


class PseudoTransform(Transform):
    """Changes nothing."""

    def apply(self, input):  # noqa: A002
        """The sample unchanged."""
        return input


class VisionTransform(Transform):
    """A transform of the "image" field(s); `order` names the sample's fields."""

    def __init__(self, order=None) -> None:
        self.order = ("image",) if order is None else tuple(order)

    def apply(self, input):  # noqa: A002
        """The sample with each field that `order` calls "image" transformed."""
        fields = input if isinstance(input, tuple) else (input,)
        out = list(fields)
        for i, kind in enumerate(self.order[: len(fields)]):
            if kind == "image":
                out[i] = self._apply_image(fields[i])
        return tuple(out) if isinstance(input, tuple) else out[0]

    def _apply_image(self, image):
        raise NotImplementedError


class Compose(Transform):
    """Apply `transforms` in order."""

    def __init__(
        self, transforms=None, batch_compose=False, shuffle_indices=None, order=None
    ) -> None:
        self.transforms = list(transforms or [])

    def apply(self, input):  # noqa: A002
        """The sample passed through every transform in turn."""
        for t in self.transforms:
            input = t.apply(input)
        return input


class ToMode(VisionTransform):
    """Convert an HWC image to `mode` "CHW" (or keep "HWC")."""

    def __init__(self, mode="CHW", order=None) -> None:
        super().__init__(order)
        if mode not in ("CHW", "HWC"):
            raise ValueError(f"ToMode: mode {mode!r} is not supported; use 'CHW' or 'HWC'")
        self.mode = mode

    def _apply_image(self, image):
        image = np.asarray(image)
        if self.mode == "HWC":
            return image
        if image.ndim == 2:  # a grey image: one channel
            image = image[..., None]
        return np.ascontiguousarray(image.transpose(2, 0, 1))


class Normalize(VisionTransform):
    """`(image - mean) / std`, per channel (the last axis of an HWC image)."""

    def __init__(self, mean=0.0, std=1.0, order=None) -> None:
        super().__init__(order)
        self.mean = np.asarray(mean, dtype=np.float32)
        self.std = np.asarray(std, dtype=np.float32)

    def _apply_image(self, image):
        return ((np.asarray(image, dtype=np.float32) - self.mean) / self.std).astype(np.float32)


class _RandomFlip(VisionTransform):
    _axis = 1

    def __init__(self, prob=0.5, *, order=None) -> None:
        super().__init__(order)
        self.prob = prob

    def _apply_image(self, image):
        return np.flip(image, self._axis).copy() if np.random.random() < self.prob else image


class RandomHorizontalFlip(_RandomFlip):
    """Flip the image left-right with probability `prob`."""

    _axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Flip the image upside down with probability `prob`."""

    _axis = 0


class Lambda(VisionTransform):
    """Apply `func` to the image."""

    def __init__(self, func, order=None) -> None:
        super().__init__(order)
        self.func = func

    def _apply_image(self, image):
        return self.func(image)


def _pad(image, size, value):
    """An HWC `image` padded with the per-channel `value`: `size` an int (every side), two
    ints (bottom, right) or four (top, bottom, left, right), as MegEngine's `pad`; a float
    `value` makes the image float32."""
    image = np.asarray(image)
    if image.ndim != 3:
        raise ValueError(f"Pad: the image must be HWC (3 dims), got {image.ndim} dims")
    if isinstance(size, (int, np.integer)):
        top = bottom = left = right = int(size)
    elif len(size) == 2:
        top, bottom, left, right = 0, int(size[0]), 0, int(size[1])
    elif len(size) == 4:
        top, bottom, left, right = (int(s) for s in size)
    else:
        raise ValueError(f"Pad: size must be an int, 2 or 4 ints; got {size!r}")
    fill = np.asarray(value)
    dtype = np.float32 if fill.dtype.kind == "f" else image.dtype
    h, w, c = image.shape
    out = np.empty((h + top + bottom, w + left + right, c), dtype=dtype)
    out[...] = np.broadcast_to(fill, (c,)).astype(dtype)  # one value per channel
    out[top : top + h, left : left + w] = image
    return out


class Pad(VisionTransform):
    """Pad the image by `size` (an int: every side; (bottom, right); or (top, bottom, left,
    right)) with `value` (one per channel, or one for all).

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> T.Pad(1, value=[5, 6, 7]).apply(np.zeros((2, 2, 3), dtype="uint8"))[0, 0].tolist()
        [5, 6, 7]
    """

    def __init__(self, size=0, value=0, mask_value=0, *, order=None) -> None:
        super().__init__(order)
        self.size = size
        self.value = value
        self.mask_value = mask_value

    def _apply_image(self, image):
        return _pad(image, self.size, self.value)


class CenterCrop(VisionTransform):
    """The central `output_size` (h, w, or one int for both) of the image; the offsets are
    rounded halves of the margins. Raises when the image is smaller.

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> img = np.arange(25, dtype="uint8").reshape(5, 5, 1)
        >>> T.CenterCrop(3).apply(img)[..., 0].tolist()[0]
        [6, 7, 8]
    """

    def __init__(self, output_size, *, order=None) -> None:
        super().__init__(order)
        self.output_size = (
            (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
        )

    def _apply_image(self, image):
        th, tw = self.output_size
        h, w = image.shape[:2]
        if th > h or tw > w:
            raise ValueError(
                f"CenterCrop: output_size {self.output_size} is bigger than the image ({h}, {w})"
            )
        x, y = int(round((w - tw) / 2.0)), int(round((h - th) / 2.0))
        return image[y : y + th, x : x + tw]


class RandomCrop(VisionTransform):
    """A random `output_size` crop of the image padded by `padding_size` (as `Pad`) with
    `padding_value`; an image still smaller than `output_size` is padded at the bottom and
    right up to it first.

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> T.RandomCrop((6, 4), padding_size=1).apply(np.ones((3, 3, 3), "uint8")).shape
        (6, 4, 3)
    """

    def __init__(
        self,
        output_size,
        padding_size=0,
        padding_value=(0, 0, 0),
        padding_maskvalue=0,
        *,
        order=None,
    ) -> None:
        super().__init__(order)
        self.output_size = (
            (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
        )
        self.padding_size = padding_size
        self.padding_value = padding_value
        self.padding_maskvalue = padding_maskvalue

    def _apply_image(self, image):
        image = _pad(image, self.padding_size, self.padding_value)
        th, tw = self.output_size
        h, w = image.shape[:2]
        if th > h or tw > w:
            image = _pad(image, (max(th - h, 0), max(tw - w, 0)), self.padding_value)
        x = np.random.randint(0, max(0, w - tw) + 1)
        y = np.random.randint(0, max(0, h - th) + 1)
        return image[y : y + th, x : x + tw]


def _gray(image):
    """The grey level of a BGR float image, (H, W, 1): OpenCV's BGR2GRAY weights."""
    return (image[..., :3] @ np.float32([0.114, 0.587, 0.299]))[..., None]


class _Jitter(VisionTransform):
    _what = ""

    def __init__(self, value, *, order=None) -> None:
        super().__init__(order)
        if value < 0:
            raise ValueError(f"{type(self).__name__}: value must be non-negative, got {value!r}")
        self.value = value

    def _apply_image(self, image):
        if self.value == 0:
            return image
        dtype = image.dtype
        image = np.asarray(image, dtype=np.float32)
        alpha = np.float32(np.random.uniform(max(0, 1 - self.value), 1 + self.value))
        return self._blend(image, alpha).clip(0, 255).astype(dtype)

    def _blend(self, image, alpha):
        raise NotImplementedError


class BrightnessTransform(_Jitter):
    """Scale a BGR image by a factor drawn from [max(0, 1 - value), 1 + value] (clipped to
    0..255, the dtype kept; 0 leaves it as it is).

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> img = np.full((2, 2, 3), 100, dtype="uint8")
        >>> 0 <= int(T.BrightnessTransform(0.5).apply(img).max()) - 50 <= 100
        True
    """

    def _blend(self, image, alpha):
        return image * alpha


class ContrastTransform(_Jitter):
    """Blend a BGR image with its mean grey level: `alpha * image + (1 - alpha) * mean`,
    alpha drawn from [max(0, 1 - value), 1 + value].

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> img = np.full((2, 2, 3), 100, dtype="uint8")
        >>> out = T.ContrastTransform(0.5).apply(img)  # a flat image stays flat
        >>> int(out.max()) - int(out.min()), abs(int(out.max()) - 100) <= 1  # (uint8 cast)
        (0, True)
    """

    def _blend(self, image, alpha):
        return image * alpha + _gray(image).mean() * (1 - alpha)


class SaturationTransform(_Jitter):
    """Blend a BGR image with its grey version, pixel by pixel: `alpha * image + (1 -
    alpha) * gray`, alpha drawn from [max(0, 1 - value), 1 + value].

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> img = np.full((1, 1, 3), 60, dtype="uint8")
        >>> out = T.SaturationTransform(0.5).apply(img).ravel()  # grey stays grey
        >>> [abs(int(v) - 60) <= 1 for v in out]  # (to within the uint8 cast)
        [True, True, True]
    """

    def _blend(self, image, alpha):
        return image * alpha + _gray(image) * (1 - alpha)


class ColorJitter(VisionTransform):
    """Brightness, contrast and saturation jitter of a BGR image (each as its transform; 0
    leaves that one out), in a random order per sample. `hue` needs OpenCV's HSV
    conversion and is not provided (only 0).

        >>> from tapegrad.compat.megengine.data import transform as T
        >>> img = np.full((2, 2, 3), 90, dtype="uint8")
        >>> T.ColorJitter().apply(img) is img  # nothing to jitter
        True
    """

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, *, order=None) -> None:
        super().__init__(order)
        if hue != 0:
            raise NotImplementedError(
                "ColorJitter: hue jitter needs OpenCV's HSV conversion and is not provided; "
                "pass hue=0 (or write it as a Lambda)"
            )
        self.transforms = [
            cls(value, order=order)
            for cls, value in (
                (BrightnessTransform, brightness),
                (ContrastTransform, contrast),
                (SaturationTransform, saturation),
            )
            if value != 0
        ]

    def apply(self, input):  # noqa: A002
        """The sample through the jitters, in a random order."""
        for i in np.random.permutation(len(self.transforms)):
            input = self.transforms[i].apply(input)
        return input


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (megengine.data.transform)",
    {},
    {
        name: "not provided (needs OpenCV); write it as a Lambda"
        for name in (
            "Resize",
            "RandomResizedCrop",
            "ShortestEdgeResize",
            "HueTransform",
        )
    },
)
