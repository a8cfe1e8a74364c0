"""The worker side of `DataLoader(num_workers > 0)`: what runs in each worker process.

A worker seeds itself (`base_seed + worker_id` for `random`, NumPy's legacy global generator
and tapegrad's; it starts with one BLAS thread, see `threads.one_blas_thread_for_children`),
runs `worker_init_fn`, then answers tasks from its index queue until it gets
`None` or its parent is gone. Every answer is pickled here, so an unpicklable batch becomes
an error the main process re-raises instead of a silent hang.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING, Any

import numpy as np

from .fetch import Collate, Exhausted, Fetcher, IterableFetcher, MapFetcher

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

__all__ = ["WorkerInfo", "get_worker_info"]

RESUME = "resume"  # a persistent worker starts a new epoch (a new iterator over its stream)
_PARENT_POLL_S = 2.0  # how often an idle worker checks that its parent still lives


@dataclass(frozen=True)
class WorkerInfo:
    """Which worker this process is: `id` in 0 .. num_workers-1, its `seed`, and its own
    copy of the `dataset`."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its WorkerInfo; in the main process, None.

    >>> tg.data.get_worker_info() is None   # not in a worker
    True
    """
    return _info


@dataclass
class WorkerError:
    """An exception raised in a worker, in a form that crosses the process boundary."""

    exc_type: type | None
    type_name: str
    worker_id: int
    where: str
    traceback: str

    def exception(self) -> BaseException:
        """The exception to raise in the main process: the worker's type where it can be
        built from a message (else RuntimeError), naming the worker and the sample."""
        msg = (
            f"Caught {self.type_name} in DataLoader worker process {self.worker_id} "
            f"{self.where}.\nOriginal Traceback (most recent call last):\n{self.traceback}"
        )
        try:
            return self.exc_type(msg) if self.exc_type is not None else RuntimeError(msg)
        except Exception:  # an exception type whose constructor wants other arguments
            return RuntimeError(msg)


def _wrap_error(exc: BaseException, worker_id: int, batch: int) -> WorkerError:
    where = getattr(exc, "_tapegrad_where", None) or f"while loading batch {batch}"
    where = f"{where} (batch {batch})" if "batch" not in where else where
    exc_type: type | None = type(exc)
    try:
        ForkingPickler.dumps(exc_type)
    except Exception:  # a class defined in a function: re-raised as RuntimeError
        exc_type = None
    tb = "".join(
        traceback.format_tb(exc.__traceback__) + traceback.format_exception_only(type(exc), exc)
    )
    return WorkerError(exc_type, type(exc).__name__, worker_id, where, tb)


def _seed_everything(seed: int) -> None:
    from ..random import manual_seed

    random.seed(seed)
    np.random.seed(seed % 2**32)
    manual_seed(seed % 2**63)


def worker_loop(
    dataset: Any,
    is_iterable: bool,
    index_queue: Any,  # a multiprocessing Queue of tasks
    result_conn: Connection,
    auto_collation: bool,
    collate_fn: Collate,
    batch_size: int | None,
    drop_last: bool,
    fast_batches: bool,
    base_seed: int,
    worker_init_fn: Callable[[int], None] | None,
    worker_id: int,
    num_workers: int,
    parent_pid: int,
) -> None:
    """The body of one worker process (see the module docstring)."""
    global _info
    try:
        seed = base_seed + worker_id
        _seed_everything(seed)
        _info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_error: Exception | None = None
        fetcher: Fetcher | None = None

        def new_fetcher() -> Fetcher:
            # built at start-up and again on each RESUME (a new epoch), from the same arguments
            return _make_fetcher(
                dataset,
                is_iterable,
                auto_collation,
                collate_fn,
                batch_size,
                drop_last,
                fast_batches,
            )

        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
            fetcher = new_fetcher()
        except Exception as e:
            _note_init(e)
            init_error = e
        while True:
            try:
                task = index_queue.get(timeout=_PARENT_POLL_S)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return  # the main process died without telling us
                continue
            if task is None:
                return
            if task == RESUME:
                if init_error is None:
                    try:
                        fetcher = new_fetcher()
                    except Exception as e:
                        init_error = e
                continue
            batch, indices = task
            _answer(result_conn, batch, fetcher, indices, init_error, worker_id)
    except (KeyboardInterrupt, BrokenPipeError, EOFError):
        return  # the main process is shutting us down (Ctrl-C, or it closed its end)


def _note_init(exc: BaseException) -> None:
    if not getattr(exc, "_tapegrad_where", None):
        with contextlib.suppress(AttributeError):  # an exception type with __slots__
            setattr(  # noqa: B010  (an attribute the type lacks)
                exc,
                "_tapegrad_where",
                "while starting (worker_init_fn or iter(dataset))",
            )


def _make_fetcher(
    dataset: Any,
    is_iterable: bool,
    auto_collation: bool,
    collate_fn: Collate,
    batch_size: int | None,
    drop_last: bool,
    fast_batches: bool,
) -> Fetcher:
    if is_iterable:
        return IterableFetcher(dataset, auto_collation, collate_fn, batch_size, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn, fast_batches)


def _answer(
    conn: Connection,
    batch: int,
    fetcher: Fetcher | None,
    indices: Any,
    init_error: Exception | None,
    worker_id: int,
) -> None:
    payload: tuple[int, str, Any]
    try:
        if init_error is not None:
            raise init_error
        assert fetcher is not None  # made whenever there is no init_error
        payload = (batch, "data", fetcher.fetch(indices))
    except Exhausted:
        payload = (batch, "end", None)
    except Exception as e:
        payload = (batch, "error", _wrap_error(e, worker_id, batch))
    try:
        blob = ForkingPickler.dumps(payload)
    except Exception as e:
        setattr(  # noqa: B010  (an attribute the type lacks)
            e,
            "_tapegrad_where",
            f"while sending batch {batch} to the main process (is it picklable?)",
        )
        blob = ForkingPickler.dumps((batch, "error", _wrap_error(e, worker_id, batch)))
    conn.send_bytes(blob)
