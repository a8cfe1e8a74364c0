"""`mx.gluon.contrib.nn`: Concurrent containers, Identity, SyncBatchNorm.

`Concurrent` / `HybridConcurrent` run every child on the same input and concatenate the
outputs along `axis`. `SyncBatchNorm` is BatchNorm: tapegrad has one device per process,
so there is nothing to synchronize (`num_devices` is accepted).
"""

from __future__ import annotations

from ...block import HybridSequential, Sequential
from ...nn.basic_layers import BatchNorm, Identity

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SyncBatchNorm"]


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
