"""Gluon's samplers (MXNet 1.9.1): iterables of dataset indices, or of lists of them, for
`DataLoader(sampler=...)` / `DataLoader(batch_sampler=...)` and `Dataset.sample`.

    >>> list(mx.gluon.data.BatchSampler(mx.gluon.data.SequentialSampler(5), 2, "keep"))
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterator

from .....random import generator

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "IntervalSampler"]


class Sampler:
    """Base class: define `__iter__` (the indices) and `__len__`."""

    def __iter__(self) -> Iterator:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __len__(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class SequentialSampler(Sampler):
    """`start, start + 1, ..., start + length - 1`."""

    def __init__(self, length: int, start: int = 0) -> None:
        self._length, self._start = length, start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """`0 ... length - 1` in a random order (tapegrad's generator: `mx.random.seed` holds)."""

    def __init__(self, length: int) -> None:
        self._length = length

    def __iter__(self) -> Iterator[int]:
        return iter(generator().permutation(self._length).tolist())

    def __len__(self) -> int:
        return self._length


class IntervalSampler(Sampler):
    """Every `interval`-th index from 0, then (with `rollover`) from 1, 2, ...: all of
    `0 ... length - 1` in that order; without rollover only the first pass."""

    def __init__(self, length: int, interval: int, rollover: bool = True) -> None:
        if not 0 < interval <= length:
            raise ValueError(
                f"IntervalSampler: interval must be in 1..length ({length}), got {interval}"
            )
        self._length, self._interval, self._rollover = length, interval, rollover

    def __iter__(self) -> Iterator[int]:
        starts = range(self._interval) if self._rollover else range(1)
        for start in starts:
            yield from range(start, self._length, self._interval)

    def __len__(self) -> int:
        return len(list(iter(self)))


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`. `last_batch`: "keep" a smaller last
    batch, "discard" it, or "rollover" its indices into the next epoch's first batch."""

    def __init__(self, sampler, batch_size: int, last_batch: str = "keep") -> None:
        if last_batch not in ("keep", "discard", "rollover"):
            raise ValueError(
                "BatchSampler: last_batch must be one of 'keep', 'discard' or 'rollover', "
                f"got {last_batch!r}"
            )
        self._sampler, self._batch_size, self._last_batch = sampler, batch_size, last_batch
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size
