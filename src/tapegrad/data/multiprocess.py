"""The main-process side of `DataLoader(num_workers > 0)`: start the workers, keep
`prefetch_factor` tasks in flight per worker, hand batches out in the sampler's order, and
shut the workers down cleanly (end of epoch, error, garbage collection or interpreter exit).

Tasks travel on one `multiprocessing.Queue` per worker (a put never blocks the main process);
each worker answers on its own pipe, read with `multiprocessing.connection.wait`, so a worker
that dies shows up as an end-of-file on its pipe instead of a hang.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import os
import pickle
import weakref
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any, NoReturn

from .worker import RESUME, WorkerError, worker_loop

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue

    from .loader import DataLoader

__all__: list[str] = []  # internal to tg.data

_log = logging.getLogger(__name__)  # under the "tapegrad" logger
_JOIN_S = 5.0  # how long shutdown waits for a worker before terminating it
_POLL_S = 5.0  # with timeout=0, how often a waiting main process checks its workers


def _context(spec: str | BaseContext | None) -> BaseContext:
    if spec is None:
        return multiprocessing.get_context()
    if isinstance(spec, str):
        try:
            return multiprocessing.get_context(spec)
        except ValueError:
            raise ValueError(
                f"DataLoader: multiprocessing_context={spec!r} is not a start method here; use "
                f"one of {multiprocessing.get_all_start_methods()}"
            ) from None
    return spec


class WorkerPool:
    """The worker processes, their task queues and result pipes."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        ctx = _context(loader.multiprocessing_context)
        n = loader.num_workers
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus and n > cpus:
            _log.info(
                "DataLoader: %d workers on %d CPUs; workers that compute (rather than "
                "wait on files) then slow each other down",
                n,
                cpus,
            )
        import numpy.random  # noqa: F401  (once here, not in each worker: workers seed it)

        from ..threads import one_blas_thread_for_children

        self.queues: list[Queue[Any]] = []
        self.conns: list[Connection] = []
        self.procs: list[BaseProcess] = []
        with one_blas_thread_for_children(ctx.get_start_method()):
            for wid in range(n):
                self._start(ctx, loader, base_seed, wid)
        self._finalizer = weakref.finalize(self, _shutdown, self.procs, self.queues, self.conns)

    def _start(self, ctx: Any, loader: DataLoader, base_seed: int, wid: int) -> None:
        q = ctx.Queue()
        recv_end, send_end = ctx.Pipe(duplex=False)
        p = ctx.Process(
            target=worker_loop,
            name=f"tapegrad-DataLoader-worker-{wid}",
            daemon=True,
            args=(
                loader.dataset,
                loader._is_iterable,
                q,
                send_end,
                loader._auto_collation,
                loader.collate_fn,
                loader.batch_size,
                loader.drop_last,
                loader._fast_batches,
                base_seed,
                loader.worker_init_fn,
                wid,
                loader.num_workers,
                os.getpid(),
            ),
        )
        p.start()
        send_end.close()  # only the worker writes; its exit then reads as EOF here
        self.queues.append(q)
        self.conns.append(recv_end)
        self.procs.append(p)

    def shutdown(self, now: bool = False) -> None:
        """Stop the workers: ask them to exit (an idle worker does at once), or with `now`
        (a timeout, a dead sibling) terminate them without waiting."""
        if now:
            for p in self.procs:
                if p.is_alive():
                    p.terminate()
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive


def _shutdown(procs: list[BaseProcess], queues: list[Queue[Any]], conns: list[Connection]) -> None:
    for q, p in zip(queues, procs):
        if p.is_alive():
            with contextlib.suppress(OSError, ValueError):  # a queue already closed
                q.put(None)
    for c in conns:  # a worker blocked sending a batch now gets EPIPE and exits
        c.close()
    for p in procs:
        p.join(_JOIN_S)
        if p.is_alive():
            p.terminate()
            p.join(_JOIN_S)
    for q in queues:
        q.cancel_join_thread()
        q.close()


class MultiProcessIter:
    """One epoch over the loader's batches, loaded by the pool (kept across epochs when the
    loader has `persistent_workers=True`)."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        self._loader = loader
        self._pool = WorkerPool(loader, base_seed)
        self._next_task = 0
        self._reset(first=True)

    def _reset(self, first: bool = False) -> None:
        loader = self._loader
        n = loader.num_workers
        self._sampler_iter: Iterator[Any] | None = (
            None if loader._is_iterable else iter(loader._index_sampler)
        )
        self._epoch_start = self._next_task  # answers to older tasks are stale: dropped
        self._wanted = self._next_task
        self._ready: dict[int, tuple[str, Any]] = {}  # task -> (kind, data)
        self._task_worker: dict[int, int] = {}
        self._active = [True] * n
        self._cycle = itertools.cycle(range(n))
        if not first and loader._is_iterable:
            for q in self._pool.queues:
                q.put(RESUME)
        prefetch = loader.prefetch_factor
        assert prefetch is not None  # set whenever num_workers > 0
        for _ in range(prefetch * n):
            self._put_task()

    def __iter__(self) -> MultiProcessIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _put_task(self) -> None:
        if self._sampler_iter is not None:
            indices = next(self._sampler_iter, None)
            if indices is None:
                return
        else:
            indices = None
        for _ in range(len(self._active)):
            wid = next(self._cycle)
            if self._active[wid]:
                break
        else:
            return  # every worker's stream has ended
        self._pool.queues[wid].put((self._next_task, indices))
        self._task_worker[self._next_task] = wid
        self._next_task += 1

    def __next__(self) -> Any:
        while True:
            if self._wanted == self._next_task:  # nothing in flight: the epoch is over
                if not self._loader.persistent_workers:
                    self._pool.shutdown()
                raise StopIteration
            if self._wanted in self._ready:
                kind, data = self._ready.pop(self._wanted)
                wid = self._task_worker.pop(self._wanted)
                self._wanted += 1
                if kind == "end":
                    self._active[wid] = False
                self._put_task()
                if kind == "error":
                    assert isinstance(data, WorkerError)
                    raise data.exception()
                if kind != "end":
                    return data
                continue
            self._receive()

    def _receive(self) -> None:
        timeout = self._loader.timeout
        ready = wait(self._pool.conns, timeout if timeout > 0 else _POLL_S)
        if not ready:
            if timeout > 0:
                self._pool.shutdown(now=True)
                raise RuntimeError(
                    f"DataLoader timed out after {timeout} seconds waiting for "
                    "a batch from its workers; raise timeout= (or use 0 to "
                    "wait for ever)"
                )
            self._check_workers()
            return
        for conn in ready:
            assert isinstance(conn, Connection)
            wid = self._pool.conns.index(conn)
            try:
                task, kind, data = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                self._worker_died(wid)
            if task >= self._epoch_start:
                self._ready[task] = (kind, data)

    def _check_workers(self) -> None:
        for wid, p in enumerate(self._pool.procs):
            if not p.is_alive():
                self._worker_died(wid)

    def _worker_died(self, wid: int) -> NoReturn:
        p = self._pool.procs[wid]
        p.join(1.0)
        code = p.exitcode
        self._pool.shutdown(now=True)
        raise RuntimeError(
            f"DataLoader worker {wid} (pid {p.pid}) exited unexpectedly with exit code {code}"
            + (
                f" (killed by signal {-code}; out of memory?)"
                if code is not None and code < 0
                else ""
            )
            + "; run with num_workers=0 to see the error in this process"
        )

    def close(self) -> None:
        """Stop the workers now (also done at the end of an epoch and when collected)."""
        self._pool.shutdown()

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()
