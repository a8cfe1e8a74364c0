"""DataLoader: batches from a dataset, in the main process or in worker processes, with
PyTorch's arguments, checks and semantics."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..random import Generator
from .collate import default_collate, default_convert
from .dataset import IterableDataset, _rng
from .fetch import Collate, Exhausted, Fetcher, IterableFetcher, MapFetcher
from .sampler import BatchSampler, RandomSampler, SequentialSampler

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from .multiprocess import MultiProcessIter

__all__ = ["DataLoader"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Iterate over a dataset in batches.

    Args:
        dataset: a map-style Dataset (`__getitem__`, `__len__`) or an IterableDataset.
        batch_size: samples per batch; None turns automatic batching off (each sample goes
            through `default_convert`, or `collate_fn`, on its own).
        shuffle: a new random order every epoch (a `RandomSampler`).
        sampler: the indices to load, in order (any iterable of indices with a length).
        batch_sampler: yields whole lists of indices; excludes batch_size, shuffle, sampler
            and drop_last.
        num_workers: 0 loads in this process; N > 0 starts N worker processes, each seeded
            with `base_seed + worker_id` (`random`, NumPy's global generator, tapegrad's), see
            `tg.data.get_worker_info()`. Batches come in the sampler's order, the same as
            with num_workers=0; an error in a worker is re-raised here naming the sample index.
        collate_fn: turns a list of samples into a batch (default: `default_collate`).
        pin_memory: accepted for PyTorch code; NumPy memory needs no pinning.
        drop_last: drop the last, smaller batch.
        timeout: seconds to wait for a batch from the workers (0: for ever).
        worker_init_fn: called in each worker with its id, after seeding, before loading.
        multiprocessing_context: "fork", "spawn", "forkserver" or a context (default: the
            platform's; with spawn/forkserver the dataset and functions must be picklable).
        generator: a tg.Generator (or numpy.random.Generator) for the shuffle order and the
            workers' base seed (default: tapegrad's per-thread generator, see `tg.manual_seed`).
        prefetch_factor: batches in flight per worker (default 2 when num_workers > 0).
        persistent_workers: keep the workers between epochs (needs num_workers > 0).
        seed: tapegrad's shorthand for `generator=numpy.random.default_rng(seed)`.

    >>> ds = tg.data.TensorDataset(tg.randn(100, 3), tg.arange(100))
    >>> loader = tg.data.DataLoader(ds, batch_size=64, shuffle=True, seed=0)
    >>> [tuple(x.shape) for x, y in loader]
    [(64, 3), (36, 3)]
    """

    def __init__(
        self,
        # a map-style dataset (anything with __getitem__ and __len__) or an IterableDataset
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Collate | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: str | BaseContext | None = None,
        generator: Generator | np.random.Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        seed: int | None = None,
    ) -> None:
        _check_workers(num_workers, timeout, prefetch_factor, persistent_workers)
        if seed is not None:
            if generator is not None:
                raise ValueError("DataLoader: pass seed= or generator=, not both")
            generator = np.random.default_rng(seed)
        _rng(None, generator)  # a wrong generator type fails here
        is_iterable = isinstance(dataset, IterableDataset)
        if is_iterable:
            for name, value in (
                ("shuffle", shuffle),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified "
                        f"{name} option, but got {name}={value!r}"
                    )
        elif not hasattr(dataset, "__getitem__"):
            raise TypeError(
                f"DataLoader needs a map-style dataset (with __getitem__ and __len__) or an "
                f"IterableDataset, got {type(dataset).__name__}"
            )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, "
                    "shuffle, sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually "
                "exclusive with drop_last"
            )
        if sampler is None and not is_iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not is_iterable:
            assert sampler is not None  # made above for a map-style dataset
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif batch_size is not None and is_iterable:
            BatchSampler([], batch_size, drop_last)  # the same checks of batch_size/drop_last

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = (
            (2 if prefetch_factor is None else prefetch_factor) if num_workers > 0 else None
        )
        self.pin_memory = bool(pin_memory)
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self._auto_collation = batch_sampler is not None or (is_iterable and batch_size is not None)
        self._fast_batches = collate_fn is None and self._auto_collation
        self.collate_fn: Collate = collate_fn or (
            default_collate if self._auto_collation else default_convert
        )
        self._is_iterable = is_iterable
        self._iterator: MultiProcessIter | None = None
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_initialized", False) and name in _FROZEN:
            raise ValueError(
                f"{name} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(name, value)

    @property
    def _index_sampler(self) -> Any:  # the sampler or batch sampler: iterable, with a length
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)  # TypeError when the stream has no length, as in PyTorch
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)

    def _base_seed(self) -> int:
        """Drawn every epoch, workers or not, so the shuffle order for a given generator is
        the same whatever num_workers is."""
        return int(_rng(None, self.generator).integers(0, 2**62))

    def __iter__(self) -> Iterator[Any]:
        base_seed = self._base_seed()
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        from .multiprocess import MultiProcessIter

        if not self.persistent_workers:
            return MultiProcessIter(self, base_seed)
        if self._iterator is None or not self._iterator._pool.alive:
            self._iterator = MultiProcessIter(self, base_seed)
        else:
            self._iterator._reset()
        return self._iterator


def _check_workers(
    num_workers: object, timeout: object, prefetch_factor: object, persistent_workers: object
) -> None:
    if (
        isinstance(num_workers, bool)
        or not isinstance(num_workers, (int, np.integer))
        or num_workers < 0
    ):
        raise ValueError(
            "num_workers option should be non-negative; use num_workers=0 to "
            f"disable multiprocessing (got {num_workers!r})"
        )
    if not isinstance(timeout, (int, float)) or timeout < 0:
        raise ValueError(f"timeout option should be non-negative (got {timeout!r})")
    if num_workers == 0:
        if prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in "
                "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                "otherwise set prefetch_factor to None."
            )
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if timeout > 0:
            raise ValueError(
                "timeout applies to worker processes only: with num_workers=0 "
                "leave timeout=0 (or set num_workers > 0)"
            )
    elif prefetch_factor is not None and (
        isinstance(prefetch_factor, bool)
        or not isinstance(prefetch_factor, (int, np.integer))
        or prefetch_factor < 1
    ):
        raise ValueError(
            "prefetch_factor option should be non-negative, and at least 1 here "
            f"(batches in flight per worker), got {prefetch_factor!r}"
        )


class _SingleProcessIter:
    """One epoch loaded in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._fetcher: Fetcher
        self._tasks: Iterator[Any] | None
        if loader._is_iterable:
            self._fetcher = IterableFetcher(
                loader.dataset,
                loader._auto_collation,
                loader.collate_fn,
                loader.batch_size,
                loader.drop_last,
            )
            self._tasks = None
        else:
            self._fetcher = MapFetcher(
                loader.dataset, loader._auto_collation, loader.collate_fn, loader._fast_batches
            )
            self._tasks = iter(loader._index_sampler)

    def __iter__(self) -> _SingleProcessIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self) -> Any:
        if self._tasks is None:
            try:
                return self._fetcher.fetch(None)  # a stream: the next batch
            except Exhausted:
                raise StopIteration from None
        return self._fetcher.fetch(next(self._tasks))
