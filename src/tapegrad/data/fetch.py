"""Turning one task (a batch's indices, or "the next batch" of a stream) into a batch; the
same code runs in the main process (`num_workers=0`) and in every worker process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .dataset import IterableDataset

Collate = Callable[[Any], Any]  # samples (or one sample) -> the batch


class Fetcher(Protocol):
    """What a loader or a worker calls per task: `fetch(task)` -> the batch."""

    def fetch(self, task: Any, /) -> Any: ...


__all__: list[str] = []  # internal to tg.data


class Exhausted(Exception):  # noqa: N818  (a signal, like StopIteration, not an error)
    """An iterable dataset has no more samples for this worker."""


def _note(exc: BaseException, text: str) -> None:
    """Remember which sample failed, for the message the user sees (worker or not)."""
    try:
        exc._tapegrad_where = text  # type: ignore[attr-defined]
    except AttributeError:  # an exception type with __slots__
        return
    if hasattr(exc, "add_note"):  # Python 3.11+: shown under the traceback
        exc.add_note(f"(tapegrad DataLoader: {text})")


class MapFetcher:
    """Index a map-style dataset: `fetch([i, j, ...])` -> the collated batch, or with
    automatic batching off, `fetch(i)` -> the converted sample."""

    def __init__(
        self, dataset: Any, auto_collation: bool, collate_fn: Collate, fast_batches: bool
    ) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        getter = getattr(dataset, "_batch_getter", None) if fast_batches else None
        self._batch = getter() if getter is not None else None

    def fetch(self, indices: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self._load(indices))
        if self._batch is not None:  # TensorDataset: one fancy index per tensor
            import numpy as np

            return self._batch(np.asarray(indices, dtype=np.int64))
        samples = [self._load(i) for i in indices]
        try:
            return self.collate_fn(samples)
        except Exception as e:
            _note(e, f"while collating the batch of sample indices {list(indices)[:16]}")
            raise

    def _load(self, index: Any) -> Any:
        try:
            return self.dataset[index]
        except Exception as e:
            _note(e, f"while loading sample index {index}")
            raise


class IterableFetcher:
    """Draw the next batch (or, without automatic batching, the next sample) of a stream."""

    def __init__(
        self,
        dataset: IterableDataset,
        auto_collation: bool,
        collate_fn: Collate,
        batch_size: int | None,
        drop_last: bool,
    ) -> None:
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        # None only without automatic batching, where fetch never reads it
        self.batch_size: Any = batch_size
        self.drop_last = drop_last
        self._it = iter(dataset)
        self._count = 0

    def fetch(self, _task: object = None) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self._next())
        samples: list[Any] = []
        for _ in range(self.batch_size):
            try:
                samples.append(self._next())
            except Exhausted:
                break
        if not samples or (self.drop_last and len(samples) < self.batch_size):
            raise Exhausted
        return self.collate_fn(samples)

    def _next(self) -> Any:
        try:
            sample = next(self._it)
        except StopIteration:
            raise Exhausted from None
        except Exception as e:
            _note(e, f"while drawing sample {self._count} of the stream")
            raise
        self._count += 1
        return sample
