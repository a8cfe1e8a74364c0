"""`megengine.data`: MegEngine's data pipeline (datasets, samplers, transforms, DataLoader).

As in MegEngine, a sampler yields lists of indices (one list per batch), the DataLoader
takes those samples from the dataset, applies the transform to each and stacks every field
into a NumPy array: batches are tuples of `np.ndarray`s (wrap them with `mge.tensor`).
Batches are made in the calling process (`num_workers` is accepted and ignored).

    >>> from tapegrad.compat.megengine import data
    >>> ds = data.ArrayDataset(np.arange(10, dtype="float32").reshape(5, 2), np.arange(5))
    >>> loader = data.DataLoader(ds, data.SequentialSampler(ds, batch_size=2))
    >>> [(x.shape, y.tolist()) for x, y in loader]
    [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]
"""

from __future__ import annotations

from ..._facade import facade_getattr
from . import transform  # noqa: F401
from .collator import Collator
from .dataloader import DataLoader
from .dataset import ArrayDataset, ConcatDataset, Dataset, StreamDataset
from .sampler import Infinite, RandomSampler, ReplacementSampler, Sampler, SequentialSampler

__all__ = [
    "DataLoader",
    "Dataset",
    "ArrayDataset",
    "StreamDataset",
    "ConcatDataset",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "ReplacementSampler",
    "Infinite",
    "Collator",
    "transform",
]

__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (megengine.data)",
    {},
    {
        "dataset": "the vision data sets (MNIST, CIFAR, COCO, ImageNet) are not provided; "
        "build an ArrayDataset from your arrays",
    },
)
