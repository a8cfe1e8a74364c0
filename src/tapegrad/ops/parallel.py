"""Intra-op threads for conv, pool and relu: work split over the batch.

Why: NumPy runs every copy and ufunc on one thread, while its BLAS runs the GEMMs on all of
`tg.get_num_threads()`. In a conv net step most of the time outside the GEMMs is such passes
(window copies, col2im adds, pooling maxima and masks), so on two threads they were the
larger part of the step (bench/NOTES.md, "Stop 18"). NumPy releases the GIL inside those
loops, so two Python threads can run the two halves of a batch in parallel.

Two ways to split:

- `for_slices(xp, n, body, elements)` calls `body(lo, hi)` on consecutive slices of range(n)
  (two per thread), each taken by whichever thread is free, the calling thread included,
  and returns when all are done. The bodies must touch disjoint parts of their outputs
  (then the results are bitwise those of one thread: no reduction is split) and must not
  use ops/scratch.py (its buffers are per thread): the caller allocates. Max pool (forward
  and backward) and relu (forward and backward) run whole in one such body per slice.
- `for_batch(n, body)` (where `batch_split(xp, n, elements)` says yes) runs a *whole* op
  per slice, one slice per thread: conv, the transposed conv (conv's input gradient) and
  the weight gradient each run their window copy, GEMM and layout copies on half the
  batch in each thread, with OpenBLAS held at one thread meanwhile (a reference-counted
  ctypes handle, restored on exceptions too; see `_OneBlasThread` for what another user
  thread sees), and any per-pass split inside runs inline: one handoff per op instead of
  one per pass, and no BLAS worker spin-waiting on the core a slice wants. The bodies may
  use scratch buffers (each thread has its own: a worker thread keeps its set, sized for
  its slice, between calls). Forward and transposed conv write their slices of one result;
  the weight gradient's slices give partial sums, added in slice order, so it is
  reproducible for a given thread count but not bitwise the one-thread sum. While
  splitting is on, `matmul` holds OpenBLAS at one thread for GEMMs below `SMALL_GEMM`
  multiply-adds (a fully connected layer's): waking OpenBLAS's pool for them leaves its
  worker spinning ~40 ms afterwards, over the next ops' splits.

Each slice runs in a copy of the caller's `contextvars` context (np.errstate holds there).
One thread (the default), small work or a nested call runs the body inline; a process
whose BLAS is not one pthreads OpenBLAS (MKL, BLIS, an OpenMP build) does no whole-op
split (its per-pass splits still run).

Off by default, opt-in with `set_intra_op_threads(n)` (`tg.get_num_threads()` == 1 is
unaffected); bench/NOTES.md "Stop 18" (the per-pass split: slower on the 2-core VMs) and
"Stop 20" (the whole-op split) have the measurements.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the pool's module (and logging, which it imports) loads on first split
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "for_slices",
    "for_batch",
    "batch_split",
    "batch_bounds",
    "set_intra_op_threads",
    "intra_op_threads",
]

MIN_ELEMENTS = 1 << 16  # below this a thread handoff (~20-50 us) costs more than it saves
CHUNKS_PER_THREAD = 2  # finer chunks let the caller take over a late worker's share

_threads = 1  # off by default: measured slower on the 2-core VMs (bench/NOTES.md, "Stop 18")
_pool: ThreadPoolExecutor | None = None
_inside = threading.local()  # set while a body runs: nested calls run inline


def set_intra_op_threads(n: int) -> None:
    """Split conv ops (whole, over the batch), max pool and relu over `n` threads (1, the
    default: no split). See the module's docstring.

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
    # a split running in a parent thread at the fork never ends here: forget it (the child
    # keeps the BLAS count it was forked with; setting OpenBLAS's in a child spins a thread)
    _one_blas_thread.lock = threading.Lock()
    _one_blas_thread.depth = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class _Split:
    """One split loop: chunks claimed one at a time by whichever thread is free (the caller
    included), so a worker the OS has not scheduled yet delays nothing: the caller takes
    its chunks too (on a busy machine a thread's wake-up can take milliseconds)."""

    def __init__(self, body, bounds):
        self.body, self.bounds = body, bounds
        # each chunk runs in a copy of the caller's context: np.errstate (a context
        # variable) and the caller's other settings hold in the workers too
        self.contexts = [contextvars.copy_context() for _ in bounds[1:]]
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
                    self.contexts[i].run(self.body, self.bounds[i], self.bounds[i + 1])
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
    _run_split(body, n, min(n, CHUNKS_PER_THREAD * threads), threads)


def _run_split(body, n, chunks, threads):
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


# ---------------------------------------------------------------- whole ops over the batch
class _OneBlasThread:
    """OpenBLAS (pthreads build: one process-wide pool) held at one thread while any
    whole-op split runs, through a direct ctypes handle (~0.5 us a call; threadpoolctl's
    `limit` costs ~50 us and, from 3.8 on, ignores every thread but the first that set a
    limit). Reference-counted under a lock: the first split to enter saves the setting,
    the last to leave restores exactly that, exceptions included; two user threads
    splitting at once share the one saved value. What another user thread sees meanwhile:
    its own GEMMs outside a split run on one BLAS thread until the last split leaves (the
    setting is process-wide in OpenBLAS; there is no per-thread one to use instead)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved = 1
        self.handles: tuple[Any, Any] | None | bool = False  # False: not looked up yet

    def _lookup(self):
        """(set, get) of the one OpenBLAS with a pthreads pool in the process, else None
        (MKL, BLIS, an OpenMP OpenBLAS, several BLAS libraries: no whole-op split)."""
        import ctypes

        from ..threads import blas_controller

        libs = blas_controller(refresh=False).select(user_api="blas").lib_controllers
        if len(libs) != 1 or libs[0].internal_api != "openblas":
            return None
        lib = libs[0]
        if getattr(lib, "threading_layer", None) == "openmp":
            return None
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
            setter = getattr(lib.dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
            getter = getattr(lib.dynlib, f"{prefix}openblas_get_num_threads{suffix}", None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
        return None

    def available(self) -> bool:
        if self.handles is False:
            with self.lock:
                if self.handles is False:
                    self.handles = self._lookup()
        return self.handles is not None

    def __enter__(self) -> None:
        with self.lock:
            if self.depth == 0:
                setter, getter = self.handles  # type: ignore[misc]
                self.saved = getter()
                if self.saved != 1:
                    setter(1)
            self.depth += 1

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.saved != 1:
                self.handles[0](self.saved)  # type: ignore[index]

    def user_set(self, n: int) -> None:
        """`tg.set_num_threads(n)` was called: if splits are running, n (not the value they
        saved) is what the last one restores, and until then OpenBLAS stays at one."""
        with self.lock:
            if self.depth > 0 and self.handles:
                self.saved = n
                self.handles[0](1)  # type: ignore[index]


_one_blas_thread = _OneBlasThread()


def batch_split(xp: Any, n: int, elements: int) -> bool:
    """Whether `for_batch` would split an op over a batch of n touching `elements` array
    elements: splitting on, the work large, NumPy arrays, not nested in another split, and
    the process's BLAS one pthreads OpenBLAS (whose thread count can be held at one). An op
    that is not split runs its usual code, unchanged."""
    return (
        min(intra_op_threads(), n) > 1
        and elements >= MIN_ELEMENTS
        and getattr(xp, "module", xp) is np
        and not getattr(_inside, "running", False)
        and _one_blas_thread.available()
    )


def for_batch(n: int, body: Callable[[int, int], None]) -> None:
    """A whole op split over its batch (call it where `batch_split` said yes): body(lo, hi)
    runs the entire op (window copies, GEMMs, layout copies) for samples lo:hi, one slice
    per intra-op thread (the caller's included; a slice a late worker has not claimed, the
    caller runs), with OpenBLAS held at one thread meanwhile, so that no BLAS worker spins
    on the core a slice wants and the op pays one handoff, not one per array pass. Unlike
    `for_slices`, bodies may use ops/scratch.py: each thread has its own buffers. The
    slices are fixed by n and the thread count (`batch_bounds`), so a reduction over them
    adds in a reproducible order. Exceptions in any slice reach the caller; the BLAS
    setting is restored in every case."""
    threads = max(1, min(intra_op_threads(), n))
    with _one_blas_thread:
        _run_split(body, n, threads, threads)


def batch_bounds(n: int) -> list[int]:
    """The slice bounds `for_batch` uses for a batch of n."""
    threads = max(1, min(intra_op_threads(), n))
    return [n * i // threads for i in range(threads + 1)]


# A GEMM this small (multiply-adds) gains little from a second BLAS thread, but waking
# OpenBLAS's pool costs more than that: its worker then spin-waits ~40 ms (measured on the
# 2-core VMs) on the core the whole-op splits want. With splitting on, matmul holds
# OpenBLAS at one thread below this (W3's fully connected layer: 64x1568x10).
SMALL_GEMM = 1 << 22
_no_hold = contextlib.nullcontext()


def small_gemm(xp: Any, left: Any, right: Any) -> contextlib.AbstractContextManager[None]:
    """The context the GEMM left @ right runs in: OpenBLAS held at one thread when
    splitting is on, the arrays are NumPy's and the product is small (see SMALL_GEMM),
    else nothing."""
    if _threads > 1 and getattr(xp, "module", xp) is np and _one_blas_thread.available():
        macs = np.size(left) * (np.shape(right)[-1] if np.ndim(right) > 1 else 1)
        if macs < SMALL_GEMM:
            return _one_blas_thread
    return _no_hold
