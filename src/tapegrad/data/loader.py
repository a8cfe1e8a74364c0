"""DataLoader: batching, seeded shuffling, drop_last and a collate function."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor, _wrap
from .dataset import _rng

__all__ = ["DataLoader", "default_collate"]


def default_collate(samples):
    """Stack a list of samples into a batch: tensors/arrays/numbers become one tensor with a
    new first dimension; tuples, lists and dicts are collated field by field; strings are
    kept as a list.

    >>> default_collate([(tg.ones(2), 0), (tg.zeros(2), 1)])
    [tensor([[1., 1.], [0., 0.]]), tensor([0, 1])]
    """
    first = samples[0]
    if isinstance(first, Tensor):
        return _wrap(np.stack([s._data for s in samples]))
    if isinstance(first, np.ndarray):
        return _wrap(np.stack(samples))
    if isinstance(first, (bool, int, float, np.generic)):
        return _wrap(dtypes.result_array(list(samples)))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):
        size = len(first)
        if any(len(s) != size for s in samples):
            raise RuntimeError("default_collate: each sample in a batch must have the same size")
        return [default_collate(list(field)) for field in zip(*samples, strict=True)]
    raise TypeError(
        f"default_collate: don't know how to batch samples of type {type(first).__name__}; "
        "pass collate_fn=..."
    )


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a Dataset (anything with `__getitem__` and `__len__`).
        batch_size: samples per batch.
        shuffle: a new random order every epoch.
        drop_last: drop the last, smaller batch.
        collate_fn: turns a list of samples into a batch (default: `default_collate`).
        seed / generator: make shuffling reproducible: an int seed (two loaders with the
            same seed give the same sequence of epochs) or a NumPy Generator. Without either,
            tapegrad's per-thread generator is used (`tg.manual_seed`).
        num_workers, pin_memory: accepted for PyTorch code; batches are always made in the
            calling process (a TensorDataset batch is one fancy index: nothing to overlap).

    >>> ds = tg.data.TensorDataset(tg.randn(100, 3), tg.arange(100))
    >>> loader = tg.data.DataLoader(ds, batch_size=64, shuffle=True, seed=0)
    >>> [tuple(x.shape) for x, y in loader]
    [(64, 3), (36, 3)]
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
                 *, seed=None, generator=None, num_workers=0, pin_memory=False):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(
                f"DataLoader needs a map-style dataset (with __getitem__ and __len__), got "
                f"{type(dataset).__name__}"
            )
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers must be a non-negative int, got {num_workers!r}")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = bool(pin_memory)
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn
        self._rng = _rng(seed, generator) if (seed is not None or generator is not None) else None

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        return (self._rng or _rng(None, None)).permutation(n)

    def __iter__(self):
        order = self._order()
        bs = self.batch_size
        stop = len(self) * bs
        fast = self.collate_fn is None and hasattr(self.dataset, "_get_batch")
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            if fast:
                yield self.dataset._get_batch(idx)
            else:
                samples = [self.dataset[int(i)] for i in idx]
                yield (self.collate_fn or default_collate)(samples)
