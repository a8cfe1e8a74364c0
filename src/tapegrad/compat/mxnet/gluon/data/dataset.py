"""Gluon's data set classes: `Dataset` (with `transform` / `transform_first`),
`SimpleDataset` and `ArrayDataset`."""

from __future__ import annotations

from .....tensor import Tensor

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset"]


class Dataset:
    """Base class: define `__getitem__` and `__len__`."""

    def __getitem__(self, idx):  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def transform(self, fn, lazy=True):
        """A dataset whose items are `fn(*item)`."""
        return _Transformed(self, fn, unpack=True)

    def transform_first(self, fn, lazy=True):
        """A dataset whose items have `fn` applied to their first element."""
        return _Transformed(self, lambda x, *rest: (fn(x),) + rest, unpack=True)


class _Transformed(Dataset):
    def __init__(self, base, fn, unpack) -> None:
        self._base, self._fn, self._unpack = base, fn, unpack

    def __len__(self) -> int:
        return len(self._base)

    def __getitem__(self, idx):
        item = self._base[idx]
        if self._unpack and isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class SimpleDataset(Dataset):
    """A dataset over any sequence (a list, an array)."""

    def __init__(self, data) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """Several arrays of the same length, item i being `(a[i], b[i], ...)` (or `a[i]` alone)."""

    def __init__(self, *args) -> None:
        if not args:
            raise ValueError("ArrayDataset needs at least one array")
        n = len(args[0])
        for i, a in enumerate(args):
            if len(a) != n:
                raise ValueError(
                    f"ArrayDataset: all arrays must have the same length; array 0 has {n} items "
                    f"but array {i} has {len(a)}"
                )
        self._data = [a.asnumpy() if isinstance(a, Tensor) else a for a in args]
        self._len = n

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(a[idx] for a in self._data)
