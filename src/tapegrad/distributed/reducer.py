"""Bucketed gradient averaging for DistributedDataParallel.

Parameters are grouped, in reverse registration order (the order in which a backward
usually finishes them), into flat buckets of at most `cap_bytes`. A post-accumulate hook on
each parameter copies its fresh `.grad` into its bucket; the moment a bucket is full, a
non-blocking MPI `Iallreduce` starts on it, and the hook of the last parameter waits for
every bucket and writes the averages back into the `.grad`s.

What overlaps: tapegrad's engine writes leaf gradients (and so runs these hooks) at the end
of the backward, after every derivative rule ran, so communication overlaps the copying
and the reductions of the *other* buckets, not the derivative computations themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .. import backend
from ..engine.node import ACCUMULATE, leaf_of
from ..engine.versions import bump_version
from ..tensor import Tensor, _wrap


def _start_allreduce(comm: Any, send: np.ndarray, recv: np.ndarray) -> Any:
    """Start a non-blocking sum of `send` over the processes into `recv`; returns a request
    with `Wait()`. (A module function, so that tests can stand in for MPI.)"""
    from . import _import_mpi

    MPI = _import_mpi()
    return comm.Iallreduce(send, recv, op=MPI.SUM)


def _buffer_dtype(dtype: Any) -> np.dtype[Any]:
    # MPI has no half-precision type everywhere: reduce float16 gradients in float32
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


class _Bucket:
    __slots__ = ("params", "offsets", "send", "recv", "pending", "request")

    def __init__(self, params: list[Tensor], dtype: Any) -> None:
        self.params = params
        self.offsets = np.cumsum([0] + [p.numel() for p in params]).tolist()
        n = self.offsets[-1]
        self.send = np.zeros(n, dtype=_buffer_dtype(dtype))
        self.recv = np.empty_like(self.send)
        self.pending = len(params)
        self.request: Any = None  # the MPI request of the bucket's reduction in flight


def _make_buckets(params: list[Tensor], cap_bytes: int) -> list[_Bucket]:
    """Consecutive parameters of one dtype, each group at most `cap_bytes` (a parameter
    bigger than the cap gets a bucket of its own)."""
    buckets: list[_Bucket] = []
    group: list[Tensor] = []
    size, dtype = 0, None
    for p in params:
        nbytes = p.numel() * _buffer_dtype(p.dtype).itemsize
        if group and (p.dtype != dtype or size + nbytes > cap_bytes):
            buckets.append(_Bucket(group, dtype))
            group, size = [], 0
        group.append(p)
        size += nbytes
        dtype = p.dtype
    if group:
        buckets.append(_Bucket(group, dtype))
    return buckets


def reached_leaves(outputs: Iterable[Tensor]) -> set[int]:
    """ids of the leaf tensors the graph behind `outputs` reaches (iterative walk)."""
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    ids = {id(t) for t in outputs if t.grad_fn is None}
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op is ACCUMULATE:
            leaf = leaf_of(node)
            if leaf is not None:
                ids.add(id(leaf))
            continue
        for child in node.next:
            if child is not None and child not in seen:
                stack.append(child)
    return ids


class Reducer:
    """Averages the gradients of `params` over the processes of `comm`, bucket by bucket."""

    def __init__(
        self, named_params: Sequence[tuple[str, Tensor]], cap_bytes: int, comm: Any
    ) -> None:
        params = [p for _, p in named_params]
        self.names = {id(p): name for name, p in named_params}
        self.comm = comm
        self.size = comm.Get_size()
        self.buckets = _make_buckets(list(reversed(params)), cap_bytes)
        self.where = {}
        for b, bucket in enumerate(self.buckets):
            for i, p in enumerate(bucket.params):
                self.where[id(p)] = (b, i)
        self.armed = False
        self.marked: set[int] = set()
        self.launched = 0
        self.handles = [p.register_post_accumulate_grad_hook(self._on_grad) for p in params]

    # -------------------------------------------------------------- one iteration
    def prepare(self, outputs: Sequence[Tensor], find_unused: bool) -> None:
        """Arm for the backward of this forward; with `find_unused`, parameters the graph
        does not reach count as ready now (they contribute their current `.grad` or 0)."""
        self.check_finished()
        self.armed = True
        self.marked = set()
        self.launched = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.request = None
        if find_unused:
            used = reached_leaves(outputs)
            for bucket in self.buckets:
                for p in bucket.params:
                    if id(p) not in used:
                        self._mark(p)

    def check_finished(self) -> None:
        """Raise if the last armed backward left buckets unreduced (an unused parameter)."""
        if not self.armed or not self.marked:
            self.armed = False
            return
        missing = [i for i, bucket in enumerate(self.buckets) if bucket.pending]
        names = [
            self.names[id(p)]
            for i in missing
            for p in self.buckets[i].params
            if id(p) not in self.marked
        ]
        self.armed = False
        raise RuntimeError(
            "DistributedDataParallel: the previous backward did not produce gradients for "
            f"{len(names)} parameter(s) ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})"
            ", so their buckets were never averaged (a step since then used this process's own "
            "gradients). "
            "Pass find_unused_parameters=True when some parameters take no part in the loss, "
            "or make every parameter contribute to it."
        )

    def _on_grad(self, p: Tensor) -> None:
        if self.armed:
            self._mark(p)

    def _mark(self, p: Tensor) -> None:
        key = id(p)
        if key in self.marked:
            # a second accumulation into the same leaf in one backward (it is used by
            # two graphs, or backward ran twice): the bucket already holds its old value.
            # Disarm, so that the next forward starts a clean iteration.
            self.armed = False
            raise RuntimeError(
                f"DistributedDataParallel: parameter {self.names[key]!r} got its "
                "gradient twice in one iteration (two backward passes after one forward?); "
                "run one backward per forward, or wrap the extra ones in no_sync()"
            )
        self.marked.add(key)
        b, i = self.where[key]
        bucket = self.buckets[b]
        lo, hi = bucket.offsets[i], bucket.offsets[i + 1]
        g = p._grad
        if g is None:
            bucket.send[lo:hi] = 0
        else:
            bucket.send[lo:hi] = backend.to_device(g._data, "cpu").reshape(-1)
        bucket.pending -= 1
        if bucket.pending == 0:
            bucket.request = _start_allreduce(self.comm, bucket.send, bucket.recv)
            self.launched += 1
            if self.launched == len(self.buckets):
                self._finish()

    def _finish(self) -> None:
        self.armed = False
        for bucket in self.buckets:
            bucket.request.Wait()
            bucket.request = None
            bucket.recv /= self.size
            offsets = bucket.offsets
            for i, p in enumerate(bucket.params):
                mean = bucket.recv[offsets[i] : offsets[i + 1]].reshape(p.shape)
                _write_grad(p, mean)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _write_grad(p: Tensor, mean: np.ndarray) -> None:
    g = p._grad
    if g is None or g.grad_fn is not None or g._data.dtype != p.dtype or g.shape != p.shape:
        p._grad = _wrap(backend.to_device(mean.astype(p.dtype, copy=True), p.device))
        return
    # in place: whoever holds p.grad (an optimizer, a user) sees the average
    g._data[...] = backend.to_device(mean, g.device)
    bump_version(g)
