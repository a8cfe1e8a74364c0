"""tg.distributed: data parallel over MPI (mpi4py), and world size 1 without it.

Launched by `mpiexec -n N python train.py`, every process calls `init()` and then averages
gradients, e.g. with a GradManager callback:

    >>> model = tg.nn.Linear(3, 1)
    >>> gm = tg.autodiff.GradManager()
    >>> gm = gm.attach(model.parameters(), callbacks=tg.distributed.make_allreduce_cb("mean"))

Without MPI (a plain `python train.py`) the world is one process: rank 0, size 1, and
every collective returns its input. mpi4py is imported only when a launcher says there is
more than one process (or `init(backend="mpi")` asks for it); if it is missing then, the
error says to `pip install -e ".[mpi]"` (from a checkout) or `pip install "tapegrad[mpi]"`.

Or wrap the model, PyTorch style (gradients averaged in buckets during `loss.backward()`):

    >>> model = tg.distributed.DistributedDataParallel(tg.nn.Linear(3, 1))

Modules: this one (process group and collectives), `ddp` (the wrapper), `reducer` (buckets).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..engine.versions import bump_version
from ..tensor import Tensor, _wrap
from .ddp import DistributedDataParallel

__all__ = [
    "init",
    "is_initialized",
    "get_rank",
    "get_world_size",
    "all_reduce",
    "broadcast",
    "all_gather",
    "barrier",
    "make_allreduce_cb",
    "DistributedDataParallel",
]

# environment variables through which MPI launchers announce the world size
_SIZE_VARS = (
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_SIZE",
    "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_SIZE",
)
_REDUCE_OPS = ("sum", "mean", "max", "min", "prod")

_comm = None  # the MPI communicator once init() found more than one process
_initialized = False


def _launcher_size() -> int:
    for var in _SIZE_VARS:
        value = os.environ.get(var)
        if value:
            try:
                return int(value)
            except ValueError:
                continue
    return 1


def _import_mpi() -> Any:  # mpi4py's MPI module
    try:
        from mpi4py import MPI
    except ImportError:
        from ..utils.hints import install_hint

        raise ImportError(
            "tg.distributed: this run needs MPI (more than one process was launched, or "
            "backend='mpi' was asked for) but mpi4py is not installed; install it with "
            f"{install_hint('mpi')} (and an MPI library such as Open MPI or MPICH)"
        ) from None
    return MPI


def init(backend: str | None = None) -> None:
    """Join the process group: MPI when launched by mpiexec with N > 1 processes, else a
    world of one. Safe to call more than once.

    Args:
        backend: None (decide from the launcher), "mpi" (require MPI) or "local" (one
            process, whatever the environment says).

    With MPI each rank applies the thread policy (`tg.threads.apply_thread_policy`: one
    BLAS thread, or `TAPEGRAD_NUM_THREADS`).
    """
    global _comm, _initialized
    if backend not in (None, "mpi", "local"):
        raise ValueError(f"init: backend must be None, 'mpi' or 'local', got {backend!r}")
    if _initialized:
        return
    if backend == "mpi" or (backend is None and _launcher_size() > 1):
        _comm = _import_mpi().COMM_WORLD
        from ..threads import apply_thread_policy

        apply_thread_policy()  # N ranks x N BLAS threads would oversubscribe the cores
    _initialized = True


def is_initialized() -> bool:
    """True once `init()` has run (explicitly or through the first collective)."""
    return _initialized


def _world() -> Any:  # the MPI communicator, or None without MPI
    if not _initialized:
        init()
    return _comm


def get_rank() -> int:
    """This process's index, 0 .. world size - 1 (0 without MPI)."""
    comm = _world()
    return 0 if comm is None else comm.Get_rank()


def get_world_size() -> int:
    """The number of processes (1 without MPI)."""
    comm = _world()
    return 1 if comm is None else comm.Get_size()


def _check_op(op: str, where: str) -> str:
    name = str(op).lower()
    if name not in _REDUCE_OPS:
        raise ValueError(
            f"{where}: op must be one of {', '.join(_REDUCE_OPS)} (any case), got {op!r}"
        )
    return name


def _host(t: Tensor) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    return np.ascontiguousarray(np.asarray(t.__array__()))


def _store(t: Tensor, arr: np.ndarray) -> None:
    from .. import backend

    t._data[...] = backend.to_device(arr, t.device)
    bump_version(t)


def all_reduce(tensor: Tensor, op: str = "sum") -> Tensor:
    """Reduce `tensor` over all processes, in place; returns it.

    Args:
        op: "sum", "mean", "max", "min" or "prod" (any case); "mean" needs a floating
            tensor. float16 is reduced in float32; bool "sum"/"max" is a logical or,
            "prod"/"min" a logical and.
    """
    name = _check_op(op, "all_reduce")
    arr = _host(tensor)  # same argument checks with one process as with MPI
    if name == "mean" and arr.dtype.kind != "f":
        raise TypeError(
            f"all_reduce: op='mean' needs a floating tensor, got {arr.dtype}; use op='sum' "
            "or convert it first (t.float())"
        )
    comm = _world()
    if comm is None or comm.Get_size() == 1:
        return tensor
    _store(tensor, _allreduce_array(comm, arr, name))
    return tensor


def _allreduce_array(comm: Any, arr: np.ndarray, name: str) -> np.ndarray:
    MPI = _import_mpi()
    ops = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
    mpi_op = ops[name]
    # MPI has no half-precision type and no arithmetic on bool: widen, reduce, narrow
    work = arr
    if arr.dtype == np.float16:
        work = arr.astype(np.float32)
    elif arr.dtype == np.bool_:
        work = arr.astype(np.int32)
    out = np.empty_like(work)
    comm.Allreduce(work, out, op=mpi_op)
    if name == "mean":
        out /= comm.Get_size()
    return out.astype(arr.dtype, copy=False)


def _bytes(arr: np.ndarray) -> np.ndarray:
    """A uint8 view of a contiguous array: moving data needs no MPI type for its dtype."""
    return arr.reshape(-1).view(np.uint8)


def broadcast(tensor: Tensor, src: int = 0) -> Tensor:
    """Overwrite `tensor` on every process with its value on process `src`; returns it."""
    comm = _world()
    size = 1 if comm is None else comm.Get_size()
    if not 0 <= int(src) < size:
        raise ValueError(f"broadcast: src={src} is not a rank of a world of {size} process(es)")
    if size == 1:
        _host(tensor)
        return tensor
    arr = _host(tensor)
    comm.Bcast(_bytes(arr), root=int(src))
    _store(tensor, arr)
    return tensor


def all_gather(tensor_list: Any, tensor: Tensor | None = None) -> list[Tensor]:
    """Every process's `tensor`, as a list ordered by rank.

    Two forms: `all_gather(t)` returns the list; `all_gather(out_list, t)` (PyTorch) fills
    `out_list` (one tensor of t's shape per process) and returns it.
    """
    out: list[Tensor] | None
    if tensor is None:
        tensor, out = tensor_list, None
    else:
        out = tensor_list
    arr = _host(tensor)
    comm = _world()
    size = 1 if comm is None else comm.Get_size()
    if size == 1:
        parts = [arr.copy()]
    else:
        gathered = np.empty((size,) + arr.shape, dtype=arr.dtype)
        comm.Allgather(_bytes(arr), _bytes(gathered))
        parts = list(gathered)
    if out is None:
        return [_wrap(np.array(p)) for p in parts]
    if len(out) != size:
        raise ValueError(f"all_gather: the output list has {len(out)} tensors for {size} processes")
    for o, p in zip(out, parts, strict=True):
        if o.shape != p.shape:
            raise ValueError(
                f"all_gather: output tensor of shape {o.shape} for a part of shape {p.shape}"
            )
    for o, p in zip(out, parts, strict=True):
        _store(o, p)
    return out


def barrier() -> None:
    """Wait until every process gets here (nothing to wait for with one process)."""
    comm = _world()
    if comm is not None:
        comm.Barrier()


def make_allreduce_cb(
    reduce_method: str = "mean", group: Any = None, backend: Any = None
) -> Callable[[Tensor, Tensor], Tensor]:
    """A GradManager callback that all-reduces each gradient over the processes.

    Args:
        reduce_method: "mean" (average, the usual data-parallel choice) or "sum"; any case.
        group, backend: accepted for MegEngine compatibility; the whole world is the group.

    With one process the callback returns the gradient unchanged.

    >>> gm, params = tg.autodiff.GradManager(), [tg.zeros(2, requires_grad=True)]
    >>> gm = gm.attach(params, callbacks=tg.distributed.make_allreduce_cb("MEAN"))
    """
    name = str(reduce_method).lower()
    if name not in ("mean", "sum"):
        raise ValueError(
            f"make_allreduce_cb: reduce_method must be 'mean' or 'sum' (any case), got "
            f"{reduce_method!r}"
        )

    def allreduce_cb(param: Tensor, grad: Tensor) -> Tensor:
        comm = _world()
        if comm is None or comm.Get_size() == 1:
            return grad
        arr = _allreduce_array(comm, _host(grad), name)
        from .. import backend as _backend

        return _wrap(_backend.to_device(arr, grad.device))

    allreduce_cb.__name__ = f"allreduce_{name}_cb"
    return allreduce_cb
