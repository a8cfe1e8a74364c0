"""tg.data: datasets, samplers, the DataLoader (with worker processes) and a real data set
(the 8x8 handwritten digits)."""

from __future__ import annotations

from .collate import default_collate, default_convert
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .digits import digits_dataset, load_digits
from .loader import DataLoader
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import WorkerInfo, get_worker_info

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "Subset",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "DataLoader",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "WorkerInfo",
    "load_digits",
    "digits_dataset",
]
