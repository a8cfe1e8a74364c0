"""`torch.utils.data`: datasets, samplers, DataLoader, random_split, get_worker_info
(tapegrad.data), with PyTorch's submodules `dataloader`, `dataset` and `sampler`."""

from __future__ import annotations

from ...._facade import forward_getattr
from . import dataloader, dataset, sampler  # noqa: F401

__getattr__ = forward_getattr(
    __name__,
    "the PyTorch facade (torch.utils.data)",
    "tapegrad.data",
    {
        "digits_dataset": None,
        "load_digits": None,
        "digits": None,
        "DistributedSampler": "use tapegrad.distributed",
    },
)
