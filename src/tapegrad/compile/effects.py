"""Bookkeeping a replay must repeat: BatchNorm's batch counter and version bumps, and
DistributedDataParallel arming its gradient averaging.

In training, a BatchNorm layer counts the batch (`num_batches_tracked += 1`, in Python),
its op updates the running statistics in place (that op is traced and its replay writes
the statistics again, into the same arrays), and the functional bumps their versions. The
Python part is recorded as an *effect*: a pseudo-instruction of the forward program that
redoes it. `momentum=None` (a cumulative average) reads the counter into the op's momentum,
which a replay would not recompute; such a layer keeps the function eager.

A DistributedDataParallel forward over several processes arms its reducer (Python state:
the next backward's post-accumulate hooks then all-reduce the gradients); that is an effect
too (`ArmReducer`), redone at each replay, whose hooks then run in the replayed backward
as in eager. Its other per-forward work (broadcasting the buffers, looking for unused
parameters in the graph) is not replayed: such a wrapper keeps the function eager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine.versions import bump_version
from ..tensor import Tensor
from . import hook
from .tracing import Instr, PatchTarget, Trace

if TYPE_CHECKING:
    from ..distributed.ddp import DistributedDataParallel
    from ..nn.layers import _BatchNorm


class BatchNormCount:
    """The pseudo-op of one BatchNorm call in training: `forward` redoes its bookkeeping."""

    name = "batch_norm_bookkeeping"
    save_idx = ()
    view = False
    effect = True  # kept by dead-code elimination, never inlined, no conversion

    def __init__(self, module: _BatchNorm) -> None:
        self.module = module

    def forward(self, xp: Any) -> None:
        m = self.module
        m.num_batches_tracked._data += 1
        bump_version(m.running_mean)
        bump_version(m.running_var)

    def changed(self) -> list[Tensor]:
        m = self.module
        return [m.num_batches_tracked, m.running_mean, m.running_var]


def _wrapped_batch_norm(original: Callable[..., Any]) -> Callable[..., Any]:
    from .step import _untouched_since_last_event, fingerprint

    def forward(self: _BatchNorm, input: Any) -> Any:
        trace = hook.local.trace
        if (
            trace is None
            or trace.in_call
            or not self.is_training_now
            or not self.track_running_stats
        ):
            return original(self, input)
        if self.momentum is None:
            trace.fail(
                "a BatchNorm with momentum=None (a cumulative average) reads its batch "
                "count as the momentum, which a replay would not recompute"
            )
            return original(self, input)
        _untouched_since_last_event(trace)  # what happened before this is checked as usual
        trace.in_batch_norm += 1
        try:
            out = original(self, input)
        finally:
            trace.in_batch_norm -= 1
        count = BatchNormCount(self)
        trace.effects.append(count)
        trace.instrs.append(Instr(count, (), {}, trace.effect_slot(), None, None, ()))
        trace.last_print = fingerprint(trace)  # its own changes are replayed
        return out

    forward.__doc__ = original.__doc__
    return forward


class ArmReducer:
    """The pseudo-op of one DistributedDataParallel forward: arm the gradient averaging."""

    name = "ddp_prepare"
    save_idx = ()
    view = False
    effect = True

    def __init__(self, ddp: DistributedDataParallel) -> None:
        self.ddp = ddp

    def forward(self, xp: Any) -> None:
        from ..autograd.modes import is_grad_enabled

        ddp = self.ddp
        ddp.reducer.check_finished()
        if ddp.require_backward_grad_sync and is_grad_enabled():  # no_sync() is read live
            ddp.reducer.prepare([], False)

    def changed(self) -> list[Tensor]:
        return []


def _wrapped_ddp_forward(original: Callable[..., Any]) -> Callable[..., Any]:
    def forward(self: DistributedDataParallel, *args: Any, **kwargs: Any) -> Any:
        trace = hook.local.trace
        if trace is None or trace.in_call or self.reducer is None:
            return original(self, *args, **kwargs)
        if self.find_unused_parameters or (
            self.broadcast_buffers and any(b is not None for b in self.module.buffers())
        ):
            trace.fail(
                "its DistributedDataParallel broadcasts buffers or finds unused parameters "
                "at each forward (pass broadcast_buffers=False, or no buffers, and "
                "find_unused_parameters=False to compile it)"
            )
            return original(self, *args, **kwargs)
        out = original(self, *args, **kwargs)
        if self.reducer.armed:  # this forward armed the averaging: so does every replay
            arm = ArmReducer(self)
            trace.effects.append(arm)
            trace.instrs.append(Instr(arm, (), {}, trace.effect_slot(), None, None, ()))
        return out

    forward.__doc__ = original.__doc__
    return forward


def targets() -> list[PatchTarget]:
    import sys

    from ..nn.layers import _BatchNorm

    found: list[PatchTarget] = [(_BatchNorm, "forward", _wrapped_batch_norm)]
    ddp = sys.modules.get("tapegrad.distributed.ddp")  # not imported: no wrapper exists
    if ddp is not None:
        found.append((ddp.DistributedDataParallel, "forward", _wrapped_ddp_forward))
    return found


def explained(trace: Trace) -> set[int]:
    """ids of the tensors the trace's effects change (their versions and values)."""
    return {id(t) for e in trace.effects for t in e.changed()}
