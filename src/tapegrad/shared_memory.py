"""Tensors in memory shared between processes (`Tensor.share_memory_`, `Module.share_memory`).

A shared tensor's values live in a file-backed memory map (in /dev/shm where it exists), and
pickling it (what `multiprocessing` does to a Process's arguments, with any start method)
sends the file's name instead of the values: the other process maps the same memory, so an
in-place update there (an optimizer step) is seen here. That is PyTorch's Hogwild pattern:
`model.share_memory()`, then `Process(target=train, args=(model,))` in several processes.
The creating process removes the file when it exits; processes that mapped it keep their
mapping.

>>> import tapegrad as tg
>>> t = tg.ones(3).share_memory_()
>>> t.is_shared(), t.tolist()
(True, [1.0, 1.0, 1.0])
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import uuid
from typing import Any

import numpy as np

__all__ = ["is_shared_array", "rebuild_shared", "shared_copy", "shared_file"]

_OWNED: list[str] = []  # files this process created, removed at exit
_OWNER = os.getpid()


def _cleanup() -> None:
    if os.getpid() != _OWNER:  # a forked child inherits the list, not the files
        return
    for path in _OWNED:
        with contextlib.suppress(OSError):
            os.unlink(path)


atexit.register(_cleanup)


def _directory() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def shared_copy(arr: np.ndarray) -> np.ndarray:
    """A copy of `arr` in a new shared memory map (a 0-byte array gets one byte of file)."""
    path = os.path.join(_directory(), f"tapegrad-shm-{os.getpid()}-{uuid.uuid4().hex}")
    _OWNED.append(path)
    with open(path, "wb") as f:
        f.truncate(max(arr.nbytes, 1))
    if arr.size == 0:
        return np.empty(arr.shape, arr.dtype)  # nothing to share; np.memmap refuses size 0
    out = np.memmap(path, dtype=arr.dtype, mode="r+", shape=arr.shape)
    out[...] = arr
    return out.view(np.ndarray)  # a plain array (what the backend expects) on the map


def _map_of(arr: Any) -> Any:
    """The np.memmap `arr` is (a view of), or None."""
    base = arr
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    return base


def shared_file(arr: Any) -> str | None:
    """The file behind `arr` when it is a whole shared map `shared_copy` made, else None
    (a view of part of one is pickled by value)."""
    if not isinstance(arr, np.ndarray):
        return None
    base = _map_of(arr)
    name = getattr(base, "filename", None)
    if not name or not os.path.basename(name).startswith("tapegrad-shm-"):
        return None
    same_start = arr.__array_interface__["data"][0] == base.__array_interface__["data"][0]
    if not (same_start and arr.flags.c_contiguous and arr.nbytes == base.nbytes):
        return None
    if arr.shape != base.shape or arr.dtype != base.dtype:
        return None
    return str(name)


def is_shared_array(arr: Any) -> bool:
    """True when `arr` is (a view of) memory a `shared_copy` mapped."""
    name = getattr(_map_of(arr), "filename", None)
    return isinstance(name, str) and os.path.basename(name).startswith("tapegrad-shm-")


def rebuild_shared(path: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """The array `shared_file` named, mapped again in this process."""
    try:
        mapped = np.memmap(path, dtype=np.dtype(dtype), mode="r+", shape=tuple(shape))
    except FileNotFoundError:
        raise RuntimeError(
            f"a shared tensor's memory ({path}) is gone: the process that called "
            "share_memory_() exited before this one unpickled it; keep it alive (join the "
            "workers before it ends)"
        ) from None
    return mapped.view(np.ndarray)
