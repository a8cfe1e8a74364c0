"""Sliding-block and pooling layers: Unfold, Fold, AdaptiveMaxPool1d/2d/3d, and the two
distance layers CosineSimilarity, PairwiseDistance.

    >>> tg.nn.Unfold(kernel_size=2)(tg.ones(1, 3, 4, 4)).shape
    (1, 12, 9)
"""

from __future__ import annotations

from ..ops.pairwise import cosine_similarity
from . import functional_adaptive_max as _amp
from . import functional_distance as _dist
from . import functional_patches as _patches
from .module import Module

__all__ = [
    "Unfold",
    "Fold",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "CosineSimilarity",
    "PairwiseDistance",
]


class Unfold(Module):
    """Extract sliding blocks of (N, C, H, W) into (N, C * kh * kw, L) (`F.unfold`)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return _patches.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Module):
    """Sum sliding blocks (N, C * kh * kw, L) back into (N, C, *output_size) (`F.fold`)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return _patches.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) to a fixed length; `return_indices` also gives the argmaxes."""

    def forward(self, input):
        return _amp.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) to a fixed (H_out, W_out); None keeps that size."""

    def forward(self, input):
        return _amp.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) to a fixed (D_out, H_out, W_out); None keeps that size.

    >>> tg.nn.AdaptiveMaxPool3d(2)(tg.randn(1, 3, 5, 5, 5)).shape
    (1, 3, 2, 2, 2)
    """

    def forward(self, input):
        return _amp.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along `dim` (`F.cosine_similarity`)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance between matching rows of x1 and x2 (`F.pairwise_distance`)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return _dist.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
