"""Resampling layers: Upsample (and its two fixed-mode forms), PixelShuffle, PixelUnshuffle.

>>> up = tg.nn.Upsample(scale_factor=2, mode="bilinear")
>>> up(tg.ones(1, 3, 4, 4)).shape
(1, 3, 8, 8)
"""

from __future__ import annotations

from . import functional_resample as F
from .module import Module

__all__ = [
    "Upsample",
    "UpsamplingNearest2d",
    "UpsamplingBilinear2d",
    "PixelShuffle",
    "PixelUnshuffle",
]


class Upsample(Module):
    """Resize (N, C, *spatial) inputs with `F.interpolate` (same arguments, fixed per layer).

    Args:
        size: output spatial size (int or tuple), or
        scale_factor: multiplier per spatial dim (stored as float / tuple of floats).
        mode: "nearest" (default), "nearest-exact", "linear", "bilinear", "bicubic",
            "trilinear" or "area".
        align_corners, recompute_scale_factor: as in `F.interpolate`.
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: float | tuple[float, ...] | None
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W): `Upsample(mode="nearest")`."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with corners aligned (as PyTorch's layer)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r) with r = `upscale_factor`."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W) with r = `downscale_factor`."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
