"""MegEngine's DataLoader: sampler -> samples -> transform -> collator -> NumPy batches."""

from __future__ import annotations

from .collator import Collator
from .dataset import StreamDataset
from .sampler import SequentialSampler

__all__ = ["DataLoader"]


class DataLoader:
    """Iterate over batches of `dataset`.

    Args:
        dataset: a map-style `Dataset` or a `StreamDataset`.
        sampler: yields lists of indices (default: `SequentialSampler(dataset, 1)`); for a
            StreamDataset only its `batch_size` is used.
        transform: applied to each sample (`transform.apply(sample)`), default none.
        collator: turns a list of samples into a batch (default: stack each field).
        num_workers, timeout, preload, divide: accepted; batches are made in this process.
    """

    def __init__(
        self,
        dataset,
        sampler=None,
        transform=None,
        collator=None,
        num_workers=0,
        timeout=0,
        preload=False,
        divide=False,
        **_ignored,
    ) -> None:
        if num_workers < 0:
            raise ValueError(f"num_workers should not be negative, got {num_workers}")
        self.dataset = dataset
        self.stream = isinstance(dataset, StreamDataset)
        if sampler is None:
            sampler = None if self.stream else SequentialSampler(dataset, batch_size=1)
        self.sampler = sampler
        self.transform = transform
        self.collator = collator or Collator()
        self.num_workers = num_workers

    def _sample(self, sample):
        return sample if self.transform is None else self.transform.apply(sample)

    def __iter__(self):
        if self.stream:
            yield from self._stream()
            return
        for indices in self.sampler:
            yield self.collator.apply([self._sample(self.dataset[i]) for i in indices])

    def _stream(self):
        size = getattr(self.sampler, "batch_size", 1)
        batch = []
        for sample in self.dataset:
            batch.append(self._sample(sample))
            if len(batch) == size:
                yield self.collator.apply(batch)
                batch = []

    def __len__(self) -> int:
        if self.stream:
            raise TypeError("a DataLoader over a StreamDataset has no length")
        return len(self.sampler)
