"""Samplers: which indices a DataLoader loads, in which order, and how they group into batches.

A sampler is any iterable of indices (a `BatchSampler`: of lists of indices) with a `__len__`.
Randomness comes from `generator=` (a `tg.Generator`, or a `numpy.random.Generator`), or
else from tapegrad's per-thread generator, so `tg.manual_seed(s)` makes an epoch's order
reproducible.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from ..random import Generator
from .dataset import _rng

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value!r}")
    return int(value)


def _boolean(value: object, name: str, error: type[Exception] = ValueError) -> bool:
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value!r}")
    return value


class Sampler:
    """The base class: implement `__iter__` (yielding indices) and, where known, `__len__`."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1.

    >>> list(tg.data.SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order: a new permutation each epoch, or with `replacement=True`, `num_samples`
    independent draws. `num_samples` larger than the data set without replacement repeats
    whole permutations (as in PyTorch).

    >>> sorted(tg.data.RandomSampler(range(4), generator=np.random.default_rng(0)))
    [0, 1, 2, 3]
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | np.random.Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = _boolean(replacement, "replacement", TypeError)
        self._num_samples = num_samples
        self.generator = generator
        _rng(None, generator)  # a wrong generator type fails here, not at the first epoch
        if num_samples is not None:
            _positive_int(num_samples, "num_samples")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields (the length, unless `num_samples=` was given)."""
        return len(self.data_source) if self._num_samples is None else int(self._num_samples)

    def __iter__(self) -> Iterator[int]:
        n, k = len(self.data_source), self.num_samples
        rng = _rng(None, self.generator)
        if self.replacement:
            order = rng.integers(0, n, size=k)
        else:
            order = (
                np.concatenate([rng.permutation(n) for _ in range(-(-k // n))])[:k]
                if n
                else np.zeros(0, np.int64)
            )
        return iter(order.tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one each epoch."""

    def __init__(
        self, indices: Sequence[int], generator: Generator | np.random.Generator | None = None
    ) -> None:
        self.indices = indices
        self.generator = generator
        _rng(None, generator)

    def __iter__(self) -> Iterator[int]:
        perm = _rng(None, self.generator).permutation(len(self.indices))
        return (self.indices[i] for i in perm.tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices in 0 .. len(weights)-1, index i drawn with probability
    proportional to `weights[i]` (with or without replacement).

    >>> s = tg.data.WeightedRandomSampler([0.0, 1.0, 3.0], 100)   # index 2 three times as often
    """

    def __init__(
        self,
        weights: Any,  # a sequence of numbers, an array or a Tensor
        num_samples: int,
        replacement: bool = True,
        generator: Generator | np.random.Generator | None = None,
    ) -> None:
        self.num_samples = _positive_int(num_samples, "num_samples")
        self.replacement = _boolean(replacement, "replacement")
        w = np.asarray(weights._data if hasattr(weights, "_data") else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}"
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                "WeightedRandomSampler: weights must be finite, non-negative and "
                f"not all zero, got {w.tolist()[:8]}"
            )
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(
                f"WeightedRandomSampler: can't draw {num_samples} samples without replacement "
                f"from {np.count_nonzero(w)} indices of non-zero weight; lower num_samples or "
                "pass replacement=True"
            )
        self.weights = w
        self.generator = generator
        _rng(None, generator)

    def __iter__(self) -> Iterator[int]:
        rng = _rng(None, self.generator)
        p = self.weights / self.weights.sum()
        return iter(
            rng.choice(len(p), size=self.num_samples, replace=self.replacement, p=p).tolist()
        )

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of `sampler` into lists of `batch_size` (the last one smaller unless
    `drop_last`).

    >>> list(tg.data.BatchSampler(tg.data.SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[Any], batch_size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.batch_size = _positive_int(batch_size, "batch_size")
        self.drop_last = _boolean(drop_last, "drop_last")

    def __iter__(self) -> Iterator[list[Any]]:
        batch: list[Any] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        # an unsized sampler raises TypeError here, as len() of PyTorch's BatchSampler does
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
