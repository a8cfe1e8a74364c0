"""`torch.utils.data.sampler`: the samplers (tapegrad.data)."""

from __future__ import annotations

from ...._facade import facade_getattr

__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.utils.data.sampler)",
    {
        name: f"tapegrad.data:{name}"
        for name in (
            "Sampler",
            "SequentialSampler",
            "RandomSampler",
            "SubsetRandomSampler",
            "WeightedRandomSampler",
            "BatchSampler",
        )
    },
)
