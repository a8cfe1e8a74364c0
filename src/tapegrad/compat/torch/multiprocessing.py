"""torch.multiprocessing: Python's multiprocessing, with tensors shared as PyTorch shares them.

Everything here is the standard library's (`Process`, `Queue`, `Pool`, `set_start_method`,
`get_context`, ...). What PyTorch adds, the facade adds:

- tensors and modules put in shared memory (`t.share_memory_()`, `model.share_memory()`)
  reach a child process as the same memory, so Hogwild training (several processes updating
  one model in place) works with every start method; other tensors are copied;
- while `torch` is this facade (`python -m tapegrad.compat.run torch`), a child started with
  "spawn" or "forkserver" imports `torch` as the facade too (a plain interpreter would find
  the real PyTorch, or nothing), so the script's own modules load in the child as in the
  parent;
- `spawn(fn, args, nprocs)` runs `fn(i, *args)` in `nprocs` processes and raises when one
  fails.

>>> import tapegrad.compat.torch.multiprocessing as mp
>>> mp.get_all_start_methods()[0] in ("fork", "spawn")
True
"""

from __future__ import annotations

import multiprocessing as _mp
import multiprocessing.spawn as _spawn
import sys
from collections.abc import Callable
from multiprocessing import (  # noqa: F401  (the standard library's names, as torch's)
    Array,
    Barrier,
    Condition,
    Event,
    JoinableQueue,
    Lock,
    Manager,
    Pipe,
    Pool,
    Process,
    Queue,
    RLock,
    Semaphore,
    SimpleQueue,
    Value,
    active_children,
    cpu_count,
    current_process,
    get_all_start_methods,
    get_context,
    get_start_method,
    parent_process,
    set_start_method,
)
from typing import Any

__all__ = [
    "Array",
    "Barrier",
    "Condition",
    "Event",
    "JoinableQueue",
    "Lock",
    "Manager",
    "Pipe",
    "Pool",
    "Process",
    "ProcessRaisedException",
    "Queue",
    "RLock",
    "Semaphore",
    "SimpleQueue",
    "Value",
    "active_children",
    "cpu_count",
    "current_process",
    "get_all_start_methods",
    "get_context",
    "get_sharing_strategy",
    "get_start_method",
    "parent_process",
    "set_sharing_strategy",
    "set_start_method",
    "spawn",
]

_PRELUDE = "import tapegrad.compat.alias as _tg_alias; _tg_alias.install('torch'); "


def _facade_is_torch() -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and getattr(torch, "__name__", "") == "tapegrad.compat.torch"


def _facade_in_children() -> None:
    """Make spawn/forkserver children start with `import torch` meaning this facade: their
    command line (`python -c "from multiprocessing.spawn import spawn_main; ..."`) gets the
    facade's install in front, before the child imports the parent's main module."""
    original = _spawn.get_command_line
    if getattr(original, "_tapegrad_facade", False):
        return

    def get_command_line(**kwds: Any) -> list[str]:
        cmd = list(original(**kwds))
        # only while `torch` is this facade (python -m tapegrad.compat.run torch, or
        # alias.install): a program using the real torch keeps plain children
        if "-c" in cmd and _facade_is_torch():
            i = cmd.index("-c") + 1
            cmd[i] = _PRELUDE + cmd[i]
        return cmd

    get_command_line._tapegrad_facade = True  # type: ignore[attr-defined]
    _spawn.get_command_line = get_command_line


_facade_in_children()


def get_sharing_strategy() -> str:
    """'file_system': shared tensors live in memory-mapped files (tapegrad.shared_memory)."""
    return "file_system"


def set_sharing_strategy(new_strategy: str) -> None:
    """Accepted for 'file_system' and 'file_descriptor' (both share the same memory here)."""
    if new_strategy not in ("file_system", "file_descriptor"):
        raise ValueError(
            f"set_sharing_strategy: unknown strategy {new_strategy!r}; use 'file_system' or "
            "'file_descriptor'"
        )


class ProcessRaisedException(Exception):
    """A process `spawn` started exited with an error (its exit code in the message)."""


def spawn(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> list[Any] | None:
    """torch.multiprocessing.spawn: run `fn(i, *args)` for i in 0..nprocs-1, each in its own
    process; with join, wait for all and raise `ProcessRaisedException` when one failed
    (without join, the processes are returned).

    >>> import tapegrad.compat.torch.multiprocessing as mp
    >>> mp.spawn(print, nprocs=0)
    """
    if int(nprocs) < 0:
        raise ValueError(f"spawn: nprocs={nprocs} must be >= 0")
    ctx: Any = _mp.get_context(start_method)
    procs = [ctx.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in procs:
        p.start()
    if not join:
        return procs
    for p in procs:
        p.join()
    failed = [(i, p.exitcode) for i, p in enumerate(procs) if p.exitcode != 0]
    if failed:
        i, code = failed[0]
        raise ProcessRaisedException(
            f"spawn: process {i} terminated with exit code {code} (its traceback is above)"
        )
    return None
