"""tg.data: datasets, loaders and a real data set (the 8x8 handwritten digits)."""
from __future__ import annotations

from .dataset import Dataset, Subset, TensorDataset, random_split
from .digits import digits_dataset, load_digits
from .loader import DataLoader, default_collate

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader",
           "default_collate", "load_digits", "digits_dataset"]
