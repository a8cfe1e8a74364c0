"""MegEngine's dataset kinds: `Dataset` (map-style), `StreamDataset`, `ArrayDataset`,
`ConcatDataset`. `Dataset` and `StreamDataset` are abstract, as in MegEngine: only a
subclass that implements their methods can be made.

    >>> from tapegrad.compat.megengine.data.dataset import ArrayDataset, ConcatDataset
    >>> both = ConcatDataset([ArrayDataset(np.arange(2)), ArrayDataset(np.arange(10, 13))])
    >>> len(both), both[3], both[-1]
    (5, (np.int64(11),), (np.int64(12),))
"""

from __future__ import annotations

import abc
import bisect

import numpy as np

from ....data import Dataset as _CoreDataset

__all__ = ["Dataset", "StreamDataset", "ArrayDataset", "ConcatDataset"]


class Dataset(_CoreDataset, metaclass=abc.ABCMeta):
    """A map-style data set: implement `__getitem__(index)` (a tuple of fields) and
    `__len__()` (`Dataset()` itself raises TypeError, as MegEngine's)."""

    @abc.abstractmethod
    def __getitem__(self, index):
        """Sample `index`: a tuple of fields."""

    @abc.abstractmethod
    def __len__(self) -> int:
        """The number of samples."""


class StreamDataset(metaclass=abc.ABCMeta):
    """A stream of samples: implement `__iter__` (no length, no random access;
    `StreamDataset()` itself raises TypeError, as MegEngine's)."""

    @abc.abstractmethod
    def __iter__(self):
        """The samples, one tuple of fields each."""

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


class ConcatDataset(Dataset):
    """The samples of `datasets` one after the other (index i of the whole is in the first
    data set whose cumulative length passes i; negative indices count from the end)."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        for ds in self.datasets:
            if isinstance(ds, StreamDataset):
                raise TypeError("ConcatDataset: a StreamDataset has no length; pass map-style ones")
        self.cumulative_sizes = list(np.cumsum([len(ds) for ds in self.datasets]).tolist())

    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for {n} samples")
        index = index + n if index < 0 else index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]
