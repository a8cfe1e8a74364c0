"""Intra-op threads for the array passes of conv and pool: a loop split over the batch.

Why: NumPy runs every copy and ufunc on one thread, while its BLAS runs the GEMMs on all of
`tg.get_num_threads()`. In a conv net step most of the time outside the GEMMs is such passes
(window copies, col2im adds, pooling maxima and masks), so on two threads they were the
larger part of the step (bench/NOTES.md, "Stop 18"). NumPy releases the GIL inside those
loops, so two Python threads can run the two halves of a batch in parallel.

`for_slices(xp, n, body, elements)` calls `body(lo, hi)` on consecutive slices of range(n)
(two per thread), each taken by whichever thread is free, the calling thread included, and
returns when all are done. The bodies must touch disjoint parts of their outputs (then the
results are bitwise those of one thread: no reduction is split) and must not use
ops/scratch.py (its buffers are per thread): the caller allocates. One thread (the
default), small work or a nested call runs the body inline.

Off by default, opt-in with `set_intra_op_threads(n)`: on the 2-core benchmark VMs the
split measured *slower* (W3 step, wall minimum: 16.5-17.5 ms unsplit vs 17.9-19.6 split
with two BLAS threads, whose idle thread spin-waits on the core the split wants; 19.2 vs
19.9 with one BLAS thread: the passes are memory-bound and the handoffs cost). It may pay
on machines with more cores and memory bandwidth; measure before turning it on.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the pool's module (and logging, which it imports) loads on first split
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["for_slices", "set_intra_op_threads", "intra_op_threads"]

MIN_ELEMENTS = 1 << 16  # below this a thread handoff (~20-50 us) costs more than it saves
CHUNKS_PER_THREAD = 2  # finer chunks let the caller take over a late worker's share

_threads = 1  # off by default: measured slower on the 2-core VMs (bench/NOTES.md, "Stop 18")
_pool: ThreadPoolExecutor | None = None
_inside = threading.local()  # set while a body runs: nested calls run inline


def set_intra_op_threads(n: int) -> None:
    """Split conv, max-pool and relu array passes over `n` threads (1, the default: no split).

    >>> from tapegrad.ops import parallel
    >>> parallel.set_intra_op_threads(2); parallel.intra_op_threads()
    2
    >>> parallel.set_intra_op_threads(1)
    """
    global _threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_intra_op_threads: expected a positive int, got {n!r}")
    _threads = n


def intra_op_threads() -> int:
    """The number of threads the split loops use (1 unless `set_intra_op_threads` changed it)."""
    return _threads


_pool_lock = threading.Lock()  # two threads growing the pool at once make one new pool


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    from concurrent.futures import ThreadPoolExecutor

    with _pool_lock:
        pool = _pool
        if pool is None or pool._max_workers < workers:
            old = pool
            pool = _pool = ThreadPoolExecutor(workers, thread_name_prefix="tapegrad-intra-op")
            if old is not None:  # its queued work still runs; a late submit to it fails
                old.shutdown(wait=False)
    return pool


def _forget_pool() -> None:
    """In a forked child: the pool object came along but not its threads, and the child
    (a DataLoader worker) starts unsplit, as it starts with one BLAS thread."""
    global _pool, _threads, _pool_lock
    _pool, _threads = None, 1
    _pool_lock = threading.Lock()  # (a thread of the parent may have held it at the fork)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class _Split:
    """One split loop: chunks claimed one at a time by whichever thread is free (the caller
    included), so a worker the OS has not scheduled yet delays nothing: the caller takes
    its chunks too (on a busy machine a thread's wake-up can take milliseconds)."""

    def __init__(self, body, bounds):
        self.body, self.bounds = body, bounds
        self.claims = itertools.count()  # next() is atomic under the GIL
        self.lock = threading.Lock()
        self.left = len(bounds) - 1
        self.finished = threading.Event()
        self.error: BaseException | None = None

    def work(self):
        chunks = len(self.bounds) - 1
        while (i := next(self.claims)) < chunks:
            try:
                if self.error is None:
                    _inside.running = True
                    self.body(self.bounds[i], self.bounds[i + 1])
            except BaseException as e:  # re-raised in the caller
                self.error = self.error or e
            finally:
                _inside.running = False
                with self.lock:
                    self.left -= 1
                    if self.left == 0:
                        self.finished.set()


def for_slices(xp: Any, n: int, body: Callable[[int, int], None], elements: int) -> None:
    """body(lo, hi) over consecutive slices of range(n) on the intra-op threads; `elements`
    is the work's size (array elements touched), which decides whether to split. Only
    NumPy work is split (`xp` the array module)."""
    if elements < MIN_ELEMENTS or getattr(xp, "module", xp) is not np:
        body(0, n)
        return
    threads = min(intra_op_threads(), n)
    if threads <= 1 or getattr(_inside, "running", False):
        body(0, n)
        return
    chunks = min(n, CHUNKS_PER_THREAD * threads)
    split = _Split(body, [n * i // chunks for i in range(chunks + 1)])
    pool = _executor(threads - 1)
    try:
        for _ in range(threads - 1):
            pool.submit(split.work)
    except RuntimeError:  # another thread replaced (shut down) the pool since: fewer helpers
        pass
    split.work()  # the caller claims whatever chunks no helper took
    split.finished.wait()
    if split.error is not None:
        raise split.error
