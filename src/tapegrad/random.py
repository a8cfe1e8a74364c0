"""Per-thread random generators: `tg.manual_seed(s)` makes every thread's stream reproducible."""

from __future__ import annotations

import threading

import numpy as np

_local = threading.local()
_seed_lock = threading.Lock()
_base_seed = None  # set by manual_seed; threads derive their own stream from it


def manual_seed(seed: int) -> None:
    """Seed the generator of this thread (and the base seed new threads start from)."""
    global _base_seed
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"manual_seed: seed must be a non-negative integer, got {seed!r}")
    with _seed_lock:
        _base_seed = int(seed)
    _local.rng = np.random.default_rng(int(seed))


seed = manual_seed


def generator() -> np.random.Generator:
    """This thread's generator (made on first use; seeded from manual_seed when it was called)."""
    rng = getattr(_local, "rng", None)
    if rng is None:
        if _base_seed is None:
            rng = np.random.default_rng()
        else:  # a different but reproducible stream per thread
            rng = np.random.default_rng([_base_seed, threading.get_ident() % (2**32)])
        _local.rng = rng
    return rng
