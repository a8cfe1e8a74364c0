"""`torch.cuda.amp`: the deprecated spellings of `torch.amp.autocast("cuda")` and
`torch.amp.GradScaler("cuda")`, with PyTorch's FutureWarning (see compat/torch/amp.py).

Without a GPU both disable themselves, with PyTorch's warnings, as PyTorch's do.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import amp as _amp

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):  # noqa: N801  (PyTorch's name)
    """`torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)`."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """`torch.cuda.amp.GradScaler(...)`: `torch.amp.GradScaler("cuda", ...)`."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )
