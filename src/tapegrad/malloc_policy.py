"""The glibc allocator policy tapegrad applies: large arrays from the heap, not fresh mmaps.

Why: glibc serves every allocation above its mmap threshold (128 KiB at start, raised
dynamically up to 32 MiB) with a new mmap, and gives it back to the kernel on free. Each
4 KiB page of a fresh mapping faults on first touch: 3-10 us per page on the benchmark
VMs, so a fresh 3 MiB activation costs 2-8 ms before any arithmetic. A training step makes
and frees the same large arrays every time (activations, masks, gradients), so one W3 step
faulted ~1900 times and spent about a third of its time there (bench/NOTES.md, "Stop 18").
Serving those sizes from the heap and keeping freed heap memory reuses already-mapped
pages: W3 goes from 30.5 to 19.1 ms per step on one thread.

The policy: `mallopt(M_MMAP_THRESHOLD, 32 MiB)` (the largest value glibc accepts) and
`mallopt(M_TRIM_THRESHOLD, 128 MiB)`. It is process-wide (it changes how every library in
the process allocates), and its cost is memory: up to 128 MiB of freed heap stays mapped to
the process instead of going back to the kernel, and freed blocks below the heap's top stay
with the process until reused (as with any malloc arena). So it is a documented default
with an off-switch:

- applied once, when `tapegrad.nn` is first imported (`import tapegrad` alone does not
  load ctypes: bench W7), and only under glibc;
- `TAPEGRAD_MALLOC_POLICY=0` (or `off`) in the environment leaves glibc as it is;
- left alone too when the process already chose (`MALLOC_MMAP_THRESHOLD_`,
  `MALLOC_TRIM_THRESHOLD_` or `GLIBC_TUNABLES` set).
"""

from __future__ import annotations

import os

__all__ = ["apply_malloc_policy", "ENV_VAR"]

ENV_VAR = "TAPEGRAD_MALLOC_POLICY"
MMAP_THRESHOLD = 32 * 2**20  # glibc's maximum for M_MMAP_THRESHOLD on 64-bit
TRIM_THRESHOLD = 128 * 2**20
_M_TRIM_THRESHOLD = -1  # glibc's malloc.h constants
_M_MMAP_THRESHOLD = -3
_OWN_CHOICE = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
_applied: bool | None = None  # None: not decided yet; then whether the policy is in force


def _enabled() -> bool:
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in ("", "1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ValueError(
        f"{ENV_VAR}={value!r}: expected 0/off to leave glibc's allocator alone or 1/on "
        "(the default) for tapegrad's policy; see tapegrad/malloc_policy.py"
    )


def _is_glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError, AttributeError):  # not a glibc system
        return False


def apply_malloc_policy() -> bool:
    """Apply the allocator policy (module docstring) once; return whether it is in force.

    >>> from tapegrad.malloc_policy import apply_malloc_policy
    >>> apply_malloc_policy() in (True, False)   # False off glibc or when switched off
    True
    """
    global _applied
    if _applied is not None:
        return _applied
    enabled = _enabled()  # raises for a bad value, before anything is decided
    _applied = False
    if not enabled or not _is_glibc() or any(k in os.environ for k in _OWN_CHOICE):
        return False
    import ctypes  # here, not at module level: about 10 ms of import time

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - glibc always has mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # the trim threshold first: setting the mmap threshold stops glibc's dynamic adjustment
    _applied = bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    )
    return _applied
