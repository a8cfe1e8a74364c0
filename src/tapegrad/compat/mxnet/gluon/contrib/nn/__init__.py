"""`mx.gluon.contrib.nn`: Concurrent containers, Identity, SyncBatchNorm, PixelShuffle1D/2D/3D,
SparseEmbedding.

`Concurrent` / `HybridConcurrent` run every child on the same input and concatenate the
outputs along `axis`. `SyncBatchNorm` is BatchNorm: tapegrad has one device per process,
so there is nothing to synchronize (`num_devices` is accepted). `SparseEmbedding` is
Embedding with its gradient stored dense (tapegrad has no row_sparse storage; the values
are the same).
"""

from __future__ import annotations

from ...block import HybridSequential, Sequential
from ...nn.basic_layers import BatchNorm, Embedding, Identity
from ._pixel_shuffle import PixelShuffle1D, PixelShuffle2D, PixelShuffle3D

__all__ = [
    "Concurrent",
    "HybridConcurrent",
    "Identity",
    "SyncBatchNorm",
    "PixelShuffle1D",
    "PixelShuffle2D",
    "PixelShuffle3D",
    "SparseEmbedding",
]


class SparseEmbedding(Embedding):
    """Embedding whose weight gradient MXNet keeps row_sparse; here it is dense (the same
    values: ones where the looked-up rows are, zeros elsewhere)."""

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, **kwargs):
        super().__init__(
            input_dim, output_dim, dtype, weight_initializer, sparse_grad=True, **kwargs
        )


class Concurrent(Sequential):
    """Every child applied to the input; the outputs concatenated along `axis`."""

    def __init__(self, axis=-1, prefix=None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._axis = axis

    def forward(self, x, *args):
        import tapegrad as tg

        return tg.cat([block(x) for block in self._children.values()], dim=self._axis)


class HybridConcurrent(HybridSequential):
    """Concurrent that may be hybridized (compiled as a whole, see `gluon/_hybrid.py`)."""

    def __init__(self, axis=-1, prefix=None, params=None) -> None:
        super().__init__(prefix=prefix, params=params)
        self._axis = axis

    forward = Concurrent.forward


class SyncBatchNorm(BatchNorm):
    """BatchNorm (one device per process: nothing to synchronize)."""

    def __init__(
        self,
        in_channels=0,
        num_devices=None,
        momentum=0.9,
        epsilon=1e-5,
        center=True,
        scale=True,
        use_global_stats=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        running_mean_initializer="zeros",
        running_variance_initializer="ones",
        **kwargs,
    ) -> None:
        super().__init__(
            1,
            momentum,
            epsilon,
            center,
            scale,
            use_global_stats,
            beta_initializer,
            gamma_initializer,
            running_mean_initializer,
            running_variance_initializer,
            in_channels,
            **kwargs,
        )

    @classmethod
    def _alias(cls) -> str:
        return "syncbatchnorm"
