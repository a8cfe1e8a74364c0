"""More normalisation layers: BatchNorm3d, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm.

>>> norm = tg.nn.InstanceNorm2d(3, affine=True)
>>> norm(tg.randn(2, 3, 4, 4)).shape
(2, 3, 4, 4)
"""

from __future__ import annotations

import warnings

from ..creation import ones
from . import functional_norms as F
from .layers import _BatchNorm, _factory
from .module import Module, Parameter

__all__ = [
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "RMSNorm",
    "LocalResponseNorm",
]


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs; running statistics for eval."""

    _expected_ndim = (5,)


class _InstanceNorm(_BatchNorm):
    """Shares BatchNorm's parameters, buffers and repr; the defaults and forward differ."""

    _no_batch_dim = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum=0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias
        )

    def forward(self, input):
        nb = self._no_batch_dim
        if input.ndim not in (nb, nb + 1):
            raise ValueError(f"expected {nb}D or {nb + 1}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - nb
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        unbatched = input.ndim == nb
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.is_training_now or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum,
            self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each (C, L) sample over L; (N, C, L) or unbatched (C, L)."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Normalise each channel of each sample over H, W; (N, C, H, W) or unbatched (C, H, W)."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Normalise each channel of each sample over D, H, W; 5-D or unbatched 4-D input."""

    _no_batch_dim = 4


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing `normalized_shape` dims; weight ones.

    `eps=None` uses the input dtype's machine epsilon (as PyTorch)."""

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, **_factory(dtype, device)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Set the weight to ones."""
        if self.weight is not None:
            self.weight._data[...] = 1

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalise across `size` neighbouring channels (AlexNet's LRN)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
