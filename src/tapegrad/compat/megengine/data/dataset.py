"""MegEngine's dataset kinds: `Dataset` (map-style), `StreamDataset`, `ArrayDataset`."""

from __future__ import annotations

import numpy as np

from ....data import Dataset as _CoreDataset

__all__ = ["Dataset", "StreamDataset", "ArrayDataset"]


class Dataset(_CoreDataset):
    """A map-style data set: implement `__getitem__(index)` (a tuple of fields) and
    `__len__()`."""


class StreamDataset:
    """A stream of samples: implement `__iter__` (no length, no random access)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __getitem__(self, index):
        raise TypeError(
            f"{type(self).__name__} is a StreamDataset: iterate over it, it has no random access"
        )

    def __len__(self):
        raise TypeError(f"{type(self).__name__} is a StreamDataset: it has no length")


class ArrayDataset(Dataset):
    """`ArrayDataset(*arrays)`: sample i is `(a[i] for a in arrays)`; all arrays must
    have the same length."""

    def __init__(self, *arrays) -> None:
        if not arrays:
            raise ValueError("ArrayDataset needs at least one array")
        self.arrays = [a.numpy() if hasattr(a, "numpy") else np.asarray(a) for a in arrays]
        lengths = {len(a) for a in self.arrays}
        if len(lengths) != 1:
            raise ValueError(
                f"ArrayDataset: the arrays have different lengths {[len(a) for a in self.arrays]}"
            )

    def __getitem__(self, index):
        return tuple(a[index] for a in self.arrays)

    def __len__(self) -> int:
        return len(self.arrays[0])
