"""`torch.utils`: `data` (tapegrad.data), `tensorboard` (tapegrad.utils.tensorboard, imported
on first use: it needs the tensorboard package), `benchmark` (Timer, Measurement)."""

from __future__ import annotations

from ..._facade import facade_getattr
from . import data  # noqa: F401

__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.utils)",
    {
        "tensorboard": "tapegrad.compat.torch.utils.tensorboard",
        "benchmark": "tapegrad.compat.torch.utils.benchmark",
    },
    {
        "checkpoint": "activation checkpointing is not supported",
    },
)
