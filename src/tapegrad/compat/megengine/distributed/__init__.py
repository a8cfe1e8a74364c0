"""`mge.distributed`: `make_allreduce_cb` (any case: "MEAN", "sum"), rank and world size
(tapegrad.distributed: MPI when launched with mpiexec, else a world of one)."""

from __future__ import annotations

from ....distributed import get_rank, get_world_size, make_allreduce_cb  # noqa: F401
from ..._facade import facade_getattr

__all__ = ["make_allreduce_cb", "get_rank", "get_world_size", "is_distributed"]


def is_distributed() -> bool:
    return get_world_size() > 1


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.distributed)",
    {},
    {
        "launcher": "launch processes with mpiexec -n N (tapegrad.distributed uses MPI)",
        "init_process_group": "call tapegrad.distributed.init() (MPI) instead",
    },
)
