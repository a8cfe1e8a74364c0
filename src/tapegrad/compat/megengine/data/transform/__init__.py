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


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (megengine.data.transform)",
    {},
    {
        name: "not provided (needs OpenCV); write it as a Lambda"
        for name in (
            "Resize",
            "RandomResizedCrop",
            "CenterCrop",
            "RandomCrop",
            "ColorJitter",
            "ShortestEdgeResize",
            "BrightnessTransform",
            "ContrastTransform",
        )
    },
)
