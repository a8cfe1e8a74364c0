"""`torch.utils`: `data` (tapegrad.data)."""
from __future__ import annotations

from ..._facade import facade_getattr
from . import data  # noqa: F401

__getattr__ = facade_getattr(__name__, "the PyTorch facade (torch.utils)", {}, {
    "checkpoint": "activation checkpointing is not supported",
    "tensorboard": "not supported",
})
