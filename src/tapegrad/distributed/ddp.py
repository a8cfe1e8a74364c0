"""DistributedDataParallel: one model replica per process, gradients averaged in backward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..autograd.modes import is_grad_enabled
from ..nn.module import Module
from ..tensor import Tensor
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data-parallel training: wrap the model, train as usual, gradients come out averaged.

    At construction every parameter and buffer is overwritten with rank 0's value, so all
    processes start from the same model. During `loss.backward()` each parameter's gradient
    is copied into a flat bucket (about `bucket_cap_mb` MB each) and the bucket is summed
    over the processes with a non-blocking MPI Iallreduce as soon as it is full; the last
    gradient waits for every bucket and writes the average back into the `.grad`s. With one
    process (a plain `python train.py`) nothing is communicated and no MPI is needed.

    Args:
        module: the model (a tg.nn.Module); also reachable as `.module`.
        bucket_cap_mb: the largest bucket, in MB (2**20 bytes).
        broadcast_buffers: broadcast rank 0's buffers (BatchNorm running statistics) at
            every forward, as PyTorch does.
        find_unused_parameters: look at the graph after each forward and count parameters
            that took no part in it as ready (without it, such a parameter's bucket is never
            reduced and the next forward raises).

    >>> import tapegrad.nn.functional as F
    >>> net = tg.nn.Linear(3, 2); opt = tg.optim.SGD(net.parameters(), lr=0.1)
    >>> x_shard, y_shard = tg.randn(4, 3), tg.tensor([0, 1, 1, 0])
    >>> tg.distributed.init()
    >>> model = tg.distributed.DistributedDataParallel(net)
    >>> loss = F.cross_entropy(model(x_shard), y_shard)
    >>> loss.backward()          # .grad = the mean over processes
    >>> opt.step()
    """

    def __init__(
        self,
        module: Module,
        bucket_cap_mb: float = 25,
        broadcast_buffers: bool = True,
        find_unused_parameters: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel wraps a tg.nn.Module, got {type(module).__name__}"
            )
        if (
            isinstance(bucket_cap_mb, bool)
            or not isinstance(bucket_cap_mb, (int, float))
            or not bucket_cap_mb > 0
        ):
            raise ValueError(
                f"DistributedDataParallel: bucket_cap_mb must be a positive number of MB, "
                f"got {bucket_cap_mb!r}"
            )
        unknown = set(kwargs) - {"device_ids", "output_device", "process_group", "dim"}
        if unknown:
            raise TypeError(f"DistributedDataParallel: unexpected arguments {sorted(unknown)}")
        if kwargs.get("process_group") is not None:
            raise ValueError(
                "DistributedDataParallel: process groups are not supported; the whole MPI "
                "world is the group (pass process_group=None)"
            )
        self.module = module
        object.__setattr__(self, "bucket_cap_mb", float(bucket_cap_mb))
        object.__setattr__(self, "broadcast_buffers", bool(broadcast_buffers))
        object.__setattr__(self, "find_unused_parameters", bool(find_unused_parameters))
        object.__setattr__(self, "require_backward_grad_sync", True)
        from . import _world, broadcast  # the package imports this module: look up at call time

        comm = _world()
        size = 1 if comm is None else comm.Get_size()
        object.__setattr__(self, "world_size", size)
        reducer = None
        if size > 1:
            _check_same_model(comm, module)
            for t in _state_tensors(module):
                broadcast(t, src=0)
            named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
            reducer = Reducer(named, int(self.bucket_cap_mb * 2**20), comm)
        object.__setattr__(self, "reducer", reducer)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped module; arms the gradient averaging of the next backward."""
        reducer = self.reducer
        if reducer is None:
            return self.module(*args, **kwargs)
        reducer.check_finished()
        if self.broadcast_buffers:
            from . import broadcast

            for b in self.module.buffers():
                broadcast(b, src=0)
        out = self.module(*args, **kwargs)
        if self.require_backward_grad_sync and is_grad_enabled():
            outputs = _tensors_in(out)
            if any(t.requires_grad for t in outputs):
                reducer.prepare(outputs, self.find_unused_parameters)
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside this block, forwards arm no averaging: backwards only accumulate local
        gradients (gradient accumulation). The first forward/backward after it averages the
        whole accumulated `.grad`.

        >>> ddp = tg.distributed.DistributedDataParallel(tg.nn.Linear(3, 1))
        >>> x1, x2 = tg.randn(2, 3), tg.randn(2, 3)
        >>> with ddp.no_sync():
        ...     ddp(x1).sum().backward()   # local only
        >>> ddp(x2).sum().backward()       # averages x1's and x2's gradients together
        """
        old = self.require_backward_grad_sync
        object.__setattr__(self, "require_backward_grad_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "require_backward_grad_sync", old)

    def extra_repr(self) -> str:
        n = 0 if self.reducer is None else len(self.reducer.buckets)
        return f"world_size={self.world_size}, buckets={n}"


def _state_tensors(module: Module) -> list[Tensor]:
    return list(module.parameters()) + [b for b in module.buffers() if b is not None]


def _check_same_model(comm: Any, module: Module) -> None:
    """Every process must wrap the same architecture; say so clearly instead of letting
    MPI fail on mismatched buffer sizes."""
    mine = [(tuple(t.shape), str(t.dtype)) for t in _state_tensors(module)]
    everyone = comm.allgather(mine)
    for rank, theirs in enumerate(everyone):
        if theirs != everyone[0]:
            raise RuntimeError(
                f"DistributedDataParallel: rank {rank}'s model has {len(theirs)} tensors of "
                f"{sum(int(np.prod(s)) for s, _ in theirs)} values but rank 0's has "
                f"{len(everyone[0])} of {sum(int(np.prod(s)) for s, _ in everyone[0])} (or "
                "their shapes/dtypes differ); build the same model on every process"
            )


def _tensors_in(out: Any) -> list[Tensor]:
    """The tensors in a forward's result (a tensor, or nested tuples/lists/dicts)."""
    found: list[Tensor] = []
    stack = [out]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return found
