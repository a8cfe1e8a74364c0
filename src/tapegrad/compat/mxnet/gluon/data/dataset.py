"""Gluon's data set classes: `Dataset` (with `transform` / `transform_first`, `filter`,
`shard`, `take`, `sample`), `SimpleDataset` and `ArrayDataset`."""

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

    def filter(self, fn):
        """The items for which `fn(item)` is true (tested now, once per item).

        >>> list(mx.gluon.data.SimpleDataset(list(range(10))).filter(lambda x: x % 3 == 0))
        [0, 3, 6, 9]
        """
        return _Reindexed(self, [i for i in range(len(self)) if fn(self[i])])

    def shard(self, num_shards: int, index: int):
        """Shard `index` of `num_shards` contiguous shards; the first `len % num_shards`
        shards hold one item more (each worker of a data-parallel job takes one)."""
        if not 0 <= index < num_shards:
            raise ValueError(
                f"Dataset.shard: index must be in 0..{num_shards - 1} for {num_shards} "
                f"shards, got {index}"
            )
        size, extra = divmod(len(self), num_shards)
        start = size * index + min(index, extra)
        return _Reindexed(self, range(start, start + size + (index < extra)))

    def take(self, count):
        """The first `count` items (all of them when `count` is None or larger)."""
        n = len(self) if count is None else min(count, len(self))
        return _Reindexed(self, range(n))

    def sample(self, sampler):
        """The items in the order of `sampler`'s indices."""
        return _Reindexed(self, list(sampler))


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


class _Reindexed(Dataset):
    """The items of `base` at `indices`, in that order."""

    def __init__(self, base, indices) -> None:
        self._base, self._indices = base, indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx):
        return self._base[self._indices[idx]]


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
