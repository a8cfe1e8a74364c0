"""Datasets: the map-style and iterable protocols, TensorDataset, ConcatDataset, Subset and
random_split."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..random import Generator, resolve
from ..random import generator as _thread_generator
from ..tensor import Tensor, _wrap

if TYPE_CHECKING:  # annotations only: numpy.typing is not imported at run time
    import numpy.typing as npt

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset", "random_split"]


class Dataset:
    """A map-style data set: implement `__getitem__(i)` and `__len__()`.

    >>> class Squares(tg.data.Dataset):
    ...     def __len__(self): return 10
    ...     def __getitem__(self, i): return float(i), float(i * i)
    """

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset:
    """A stream of samples: implement `__iter__()`. With `num_workers > 0` every worker
    process iterates its own copy, so split the stream with `tg.data.get_worker_info()`
    (or each sample arrives `num_workers` times).

    >>> class Count(tg.data.IterableDataset):
    ...     def __iter__(self):
    ...         info = tg.data.get_worker_info()
    ...         start, step = (0, 1) if info is None else (info.id, info.num_workers)
    ...         return iter(range(start, 10, step))
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class TensorDataset(Dataset):
    """Samples are rows of the given tensors (or arrays): `ds[i] == (x[i], y[i])`.

    All tensors must have the same first dimension. The DataLoader takes whole batches out
    of them with one fancy index per tensor (no per-sample Python loop).

    >>> ds = tg.data.TensorDataset(tg.randn(100, 3), tg.arange(100))
    >>> x0, y0 = ds[0]
    """

    def __init__(self, *tensors: Tensor | npt.ArrayLike) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        arrays: list[npt.NDArray[Any]] = []
        for i, t in enumerate(tensors):
            arr = t._data if isinstance(t, Tensor) else np.asarray(t)
            if arr.ndim == 0:
                raise ValueError(f"TensorDataset: tensor {i} is 0-d; it needs a first dimension")
            arrays.append(arr)
        n = arrays[0].shape[0]
        for i, a in enumerate(arrays):
            if a.shape[0] != n:
                raise ValueError(
                    "TensorDataset: size mismatch between tensors: tensor 0 has "
                    f"{n} rows but tensor {i} has {a.shape[0]} (shape {a.shape})"
                )
        self._arrays = arrays
        self.tensors = tuple(
            t if isinstance(t, Tensor) else _wrap(a) for t, a in zip(tensors, arrays, strict=True)
        )

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(_wrap(np.asarray(a[index])) for a in self._arrays)

    def __len__(self) -> int:
        return int(self._arrays[0].shape[0])

    def _batch_getter(self) -> Callable[[Any], list[Tensor]] | None:
        """A function taking a whole batch of indices at once (one fancy index per tensor,
        a list as default_collate gives), or None where a subclass changed `__getitem__`."""
        if type(self).__getitem__ is not TensorDataset.__getitem__:
            return None
        arrays = self._arrays
        return lambda indices: [_wrap(a[indices]) for a in arrays]


class ConcatDataset(Dataset):
    """The samples of several map-style datasets, one after the other (`ds1 + ds2`).

    >>> train = tg.data.TensorDataset(tg.zeros(5, 2)); extra = tg.data.TensorDataset(tg.ones(3, 2))
    >>> both = tg.data.ConcatDataset([train, extra]); len(both), both[5][0].tolist()
    (8, [1.0, 1.0])
    """

    def __init__(self, datasets: Iterable[Any]) -> None:  # map-style datasets
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets is empty; pass at least one dataset")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(
                    f"ConcatDataset: dataset {i} is an IterableDataset, which has no indices; "
                    "chain iterable datasets with itertools.chain in your own IterableDataset"
                )
        self.cumulative_sizes: list[int] = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for {n} samples")
        if index < 0:
            index += n
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Any, indices: npt.ArrayLike) -> None:  # any map-style dataset
        self.dataset = dataset
        self.indices = np.asarray(indices, dtype=np.int64)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, (list, np.ndarray)):
            return [self.dataset[int(i)] for i in self.indices[index]]
        return self.dataset[int(self.indices[index])]

    def __len__(self) -> int:
        return len(self.indices)

    def _batch_getter(self) -> Callable[[Any], Any] | None:
        """The inner dataset's whole-batch fast path, through `indices` (None without one)."""
        if type(self).__getitem__ is not Subset.__getitem__:
            return None
        make_inner = getattr(self.dataset, "_batch_getter", None)
        inner = make_inner() if make_inner is not None else None
        if inner is None:
            return None
        indices = self.indices
        return lambda idx: inner(indices[idx])


def random_split(
    dataset: Any,  # any sized map-style dataset
    lengths: Sequence[int | float],
    seed: int | None = None,
    generator: Generator | np.random.Generator | None = None,
) -> list[Subset]:
    """Split `dataset` into non-overlapping random subsets.

    Args:
        dataset: any sized dataset.
        lengths: the subset sizes (summing to len(dataset)), or fractions summing to 1 (the
            remainder after flooring goes one by one to the first subsets, as in PyTorch).
        seed / generator: an int seed, or a tg.Generator (or NumPy Generator), for a
            reproducible split
            (default: tapegrad's per-thread generator, see tg.manual_seed).

    >>> ds = tg.data.TensorDataset(tg.randn(10, 3), tg.arange(10))
    >>> train, test = tg.data.random_split(ds, [0.8, 0.2], seed=0)
    """
    n = len(dataset)
    lengths = list(lengths)  # (a list of ints once fractions are turned into sizes)
    if not lengths:
        raise ValueError("random_split: lengths is empty")
    if (
        any(isinstance(x, float) for x in lengths)
        and math.isclose(sum(lengths), 1.0)
        and sum(lengths) <= 1.0 + 1e-9
    ):
        if any(x < 0 for x in lengths):
            raise ValueError(f"random_split: fractions must be >= 0, got {lengths}")
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(not isinstance(x, (int, np.integer)) or x < 0 for x in lengths):
        raise ValueError(
            f"random_split: lengths must be non-negative ints or fractions summing to 1, "
            f"got {lengths}"
        )
    if sum(lengths) != n:
        raise ValueError(
            f"random_split: the lengths {lengths} sum to {sum(lengths)} but the dataset has {n} "
            "samples; make them add up (or pass fractions such as [0.8, 0.2])"
        )
    rng = _rng(seed, generator)
    perm = rng.permutation(n)
    out: list[Subset] = []
    start = 0
    for k in lengths:
        k = int(k)  # an int or np.integer (checked above)
        out.append(Subset(dataset, perm[start : start + k]))
        start += k
    return out


def _rng(seed: int | None, generator: object) -> np.random.Generator:
    """The stream a sampler or split draws from: `generator` (a tg.Generator or a NumPy
    Generator), else a fresh one from `seed`, else this thread's generator."""
    if generator is not None:
        if not isinstance(generator, (Generator, np.random.Generator)):
            raise TypeError(
                f"generator must be a tg.Generator (or a numpy.random.Generator), got "
                f"{type(generator).__name__}; or pass seed=<int>"
            )
        return resolve("data", generator)
    if seed is not None:
        return np.random.default_rng(seed)
    return _thread_generator()
