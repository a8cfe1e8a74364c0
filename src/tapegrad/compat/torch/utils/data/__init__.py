"""`torch.utils.data`: Dataset, TensorDataset, DataLoader, random_split (tapegrad.data)."""
from __future__ import annotations

from ...._facade import forward_getattr

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.utils.data)", "tapegrad.data",
    {"digits_dataset": None, "load_digits": None, "digits": None,
     "IterableDataset": "only map-style datasets are supported",
     "DistributedSampler": "use tapegrad.distributed"},
)
