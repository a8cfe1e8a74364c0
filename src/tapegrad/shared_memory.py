"""Tensors in memory shared between processes (`Tensor.share_memory_`, `Module.share_memory`).

A shared tensor's values live in a file-backed memory map (in /dev/shm where it exists), and
`multiprocessing`'s pickler (a Process's arguments with any start method, a Queue) sends
the file's name instead of the values: the other process maps the same memory, so an
in-place update there (an optimizer step) is seen here. Plain `pickle` and `copy.deepcopy`
copy the values, as PyTorch's do. That is PyTorch's Hogwild pattern:
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

__all__ = ["is_shared_array", "rebuild_shared", "register_reducer", "shared_copy", "shared_file"]

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


_REDUCED: set[type] = set()


def _reduce(t: Any) -> tuple[Any, ...]:
    """multiprocessing's pickling of a tensor: by file name when shared, else as pickle's."""
    from .nn import parameter
    from .tensor import _unpickle, _unpickle_shared

    fn, args = t.__reduce_ex__(4)[:2]
    path = shared_file(t._data)
    if path is None:
        return (fn, args)
    where = (path, t._data.dtype.str, tuple(t._data.shape))
    if fn is _unpickle:  # (cls, values, device, requires_grad, fields)
        return (_unpickle_shared, (args[0], where, args[3], args[4]))
    if fn is parameter._rebuild_parameter:  # (values, requires_grad, grad_req, is_lazy)
        return (parameter._rebuild_shared_parameter, (where, args[1], args[2]))
    return (fn, args)  # a class with its own pickling: by value


def register_reducer(cls: type) -> None:
    """Make multiprocessing send shared tensors of class `cls` by file name (its pickler
    looks reducers up by exact class, so each class is registered when first shared)."""
    if cls in _REDUCED:
        return
    from multiprocessing.reduction import ForkingPickler

    ForkingPickler.register(cls, _reduce)
    _REDUCED.add(cls)
