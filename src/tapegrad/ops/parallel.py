"""Intra-op threads for the array passes of conv and pool: a loop split over the batch.

Why: NumPy runs every copy and ufunc on one thread, while its BLAS runs the GEMMs on all of
`tg.get_num_threads()`. In a conv net step most of the time outside the GEMMs is such passes
(window copies, col2im adds, pooling maxima and masks), so on two threads they were the
larger part of the step (bench/NOTES.md, "Stop 18"). NumPy releases the GIL inside those
loops, so two Python threads running the two halves of the batch run in parallel.

`for_slices(xp, n, body, elements)` calls `body(lo, hi)` on consecutive slices of range(n), one per
thread, the calling thread taking the first, and returns when all are done. The bodies
must touch disjoint parts of their outputs (then the results are bitwise those of one
thread: no reduction is split) and must not use ops/scratch.py (its buffers are per
thread): the caller allocates. The number of threads is the BLAS thread count
(`tg.set_num_threads` changes both); one thread, small work or a nested call runs the
body inline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["for_slices", "set_intra_op_threads", "intra_op_threads"]

MIN_ELEMENTS = 1 << 16  # below this a thread handoff (~20-50 us) costs more than it saves

_threads: int | None = None  # None: not read yet (the BLAS thread count, on first use)
_pool: ThreadPoolExecutor | None = None
_inside = threading.local()  # set while a body runs: nested calls run inline


def set_intra_op_threads(n: int) -> None:
    """Use `n` threads for the split loops (tg.set_num_threads calls this)."""
    global _threads
    _threads = max(1, int(n))


def intra_op_threads() -> int:
    """The number of threads the split loops use: the BLAS pool's size until
    `set_intra_op_threads` says otherwise (read once: it scans the loaded libraries)."""
    global _threads
    if _threads is None:
        from ..threads import get_num_threads

        _threads = max(1, get_num_threads())
    return _threads


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool
    if _pool is None or _pool._max_workers < workers:
        old, _pool = _pool, ThreadPoolExecutor(workers, thread_name_prefix="tapegrad-intra-op")
        if old is not None:
            old.shutdown(wait=False)
    return _pool


def _forget_pool() -> None:  # a forked child has the pool object but not its threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _run(body, lo, hi):
    _inside.active = True
    try:
        body(lo, hi)
    finally:
        _inside.active = False


def for_slices(xp: Any, n: int, body: Callable[[int, int], None], elements: int) -> None:
    """body(lo, hi) over consecutive slices of range(n) on the intra-op threads; `elements`
    is the work's size (array elements touched), which decides whether to split. Only
    NumPy work is split (`xp` the array module)."""
    if elements < MIN_ELEMENTS or getattr(xp, "module", xp) is not np:
        body(0, n)
        return
    threads = min(intra_op_threads(), n)
    if threads <= 1 or getattr(_inside, "active", False):
        body(0, n)
        return
    bounds = [n * i // threads for i in range(threads + 1)]
    pool = _executor(threads - 1)
    futures = [pool.submit(_run, body, bounds[i], bounds[i + 1]) for i in range(1, threads)]
    try:
        _run(body, bounds[0], bounds[1])
    finally:
        for f in futures:
            f.result()
