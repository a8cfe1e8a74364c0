"""MegEngine's samplers: each yields lists of indices, one list per batch."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "ReplacementSampler", "Infinite"]


class Sampler:
    """Batches of indices into a map-style dataset.

    Args:
        dataset: what is sampled (only its length is used).
        batch_size: indices per batch; drop_last: drop a last, smaller batch.
        num_samples: how many indices an epoch has (default: the dataset's length).
        world_size, rank: give each process its share of the indices (default: one).
        seed: for the random samplers.
    """

    def __init__(
        self,
        dataset,
        batch_size=1,
        drop_last=False,
        num_samples=None,
        world_size=None,
        rank=None,
        seed=None,
    ) -> None:
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.world_size = world_size or 1
        self.rank = rank or 0
        self.num_samples = len(dataset) if num_samples is None else int(num_samples)
        self.rng = np.random.RandomState(seed)

    def sample(self) -> list:
        """The indices of one epoch (before sharing out and batching)."""
        raise NotImplementedError

    def _shard(self, indices):
        per = math.ceil(len(indices) / self.world_size)
        indices = list(indices) + list(indices[: per * self.world_size - len(indices)])
        return indices[self.rank * per : (self.rank + 1) * per]

    def __iter__(self):
        indices = self._shard(list(self.sample()))
        for start in range(0, len(indices), self.batch_size):
            batch = indices[start : start + self.batch_size]
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = math.ceil(self.num_samples / self.world_size)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class SequentialSampler(Sampler):
    """Indices in order (`indices=` to give them yourself)."""

    def __init__(
        self, dataset, batch_size=1, drop_last=False, indices=None, world_size=None, rank=None
    ) -> None:
        super().__init__(
            dataset,
            batch_size,
            drop_last,
            None if indices is None else len(indices),
            world_size,
            rank,
        )
        self.indices = indices

    def sample(self):
        return range(self.num_samples) if self.indices is None else list(self.indices)


class RandomSampler(Sampler):
    """A new random permutation every epoch."""

    def __init__(
        self,
        dataset,
        batch_size=1,
        drop_last=False,
        indices=None,
        world_size=None,
        rank=None,
        seed=None,
    ) -> None:
        super().__init__(
            dataset,
            batch_size,
            drop_last,
            None if indices is None else len(indices),
            world_size,
            rank,
            seed,
        )
        self.indices = list(range(len(dataset))) if indices is None else list(indices)

    def sample(self):
        return [self.indices[i] for i in self.rng.permutation(len(self.indices))]


class ReplacementSampler(Sampler):
    """Indices drawn with replacement (optionally `weights`)."""

    def __init__(
        self,
        dataset,
        batch_size=1,
        drop_last=False,
        num_samples=None,
        weights=None,
        world_size=None,
        rank=None,
        seed=None,
    ) -> None:
        super().__init__(dataset, batch_size, drop_last, num_samples, world_size, rank, seed)
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
            weights = weights / weights.sum()
        self.weights = weights

    def sample(self):
        n = len(self.dataset)
        return self.rng.choice(n, self.num_samples, replace=True, p=self.weights).tolist()


class Infinite:
    """Wrap a sampler so that it never ends (epoch after epoch)."""

    def __init__(self, sampler) -> None:
        self.sampler = sampler
        self.batch_size = sampler.batch_size

    def __iter__(self):
        while True:
            yield from self.sampler

    def __len__(self) -> int:
        return np.iinfo(np.int64).max
