"""Reusable work buffers for the large temporaries of an op (conv's window matrix, its GEMM
result, a col2im accumulator), one set per thread.

Why: a fresh multi-MiB NumPy array comes from a new mmap, and every page of it faults on
first touch. On the 2-core VMs the benchmarks run on a page fault costs 3-10 us, so a 3 MiB
temporary costs 2-8 ms before any arithmetic (bench/NOTES.md, "W3"), more than the GEMM
that fills it. A buffer kept from the previous call is already mapped.

Rules for callers: a scratch array never leaves the op (copy out of it into a new array
before returning), and one op holds at most one buffer per `role` at a time. Only NumPy
arrays are kept (another array module allocates as usual), and only up to `_LARGEST`
bytes per role: above that the arithmetic dwarfs the faults, and the memory isn't held.
"""

from __future__ import annotations

import threading
from math import prod
from typing import Any

import numpy as np

__all__ = ["scratch", "scratch_zeros"]

_LARGEST = 64 * 2**20  # bytes per role kept between calls


class _Buffers(threading.local):
    def __init__(self) -> None:
        self.by_role: dict[str, np.ndarray] = {}


_buffers = _Buffers()


def scratch(xp: Any, role: str, shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised C-contiguous array of `shape` and `dtype` for a temporary of the
    calling op, reused between calls (see the module's rules)."""
    dtype = np.dtype(dtype)
    nbytes = prod(shape) * dtype.itemsize
    if getattr(xp, "module", xp) is not np or nbytes > _LARGEST:
        return xp.empty(shape, dtype=dtype)
    buf = _buffers.by_role.get(role)
    if buf is None or buf.nbytes < nbytes:
        buf = _buffers.by_role[role] = np.empty(max(nbytes, 1), dtype=np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def scratch_zeros(xp: Any, role: str, shape: tuple[int, ...], dtype: Any) -> Any:
    """`scratch`, filled with zeros."""
    out = scratch(xp, role, shape, dtype)
    out.fill(0)
    return out
