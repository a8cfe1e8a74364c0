"""`torch.utils.data.dataset`: the dataset classes and random_split (tapegrad.data)."""

from __future__ import annotations

from ...._facade import facade_getattr

__getattr__ = facade_getattr(
    __name__,
    "the PyTorch facade (torch.utils.data.dataset)",
    {
        name: f"tapegrad.data:{name}"
        for name in (
            "Dataset",
            "IterableDataset",
            "TensorDataset",
            "ConcatDataset",
            "Subset",
            "random_split",
        )
    },
    {
        "ChainDataset": "chain iterables with itertools.chain inside an IterableDataset",
        "StackDataset": "zip datasets in your own Dataset",
    },
)
