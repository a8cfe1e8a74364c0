"""`megengine.module.normalization`: where MegEngine defines its normalization layers
(`import megengine.module.normalization as norm; norm.LayerNorm(...)`). The facade has
LayerNorm (the same class as `mge.module.LayerNorm`); GroupNorm and InstanceNorm are not
provided."""

from __future__ import annotations

from ..._facade import facade_getattr
from .layers import LayerNorm

__all__ = ["LayerNorm"]

__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.module.normalization)",
    {},
    {
        "GroupNorm": "not provided; use tapegrad.nn.GroupNorm in core code",
        "InstanceNorm": "not provided; use tapegrad.nn.GroupNorm(C, C) in core code",
    },
)
