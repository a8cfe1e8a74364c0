"""Bookkeeping a replay must repeat: BatchNorm's batch counter and version bumps.

In training, a BatchNorm layer counts the batch (`num_batches_tracked += 1`, in Python),
its op updates the running statistics in place (that op is traced and its replay writes
the statistics again, into the same arrays), and the functional bumps their versions. The
Python part is recorded as an *effect*: a pseudo-instruction of the forward program that
redoes it. `momentum=None` (a cumulative average) reads the counter into the op's momentum,
which a replay would not recompute; such a layer keeps the function eager.
"""

from __future__ import annotations

from ..engine.versions import bump_version
from . import hook
from .tracing import Instr, Trace


class BatchNormCount:
    """The pseudo-op of one BatchNorm call in training: `forward` redoes its bookkeeping."""

    name = "batch_norm_bookkeeping"
    save_idx = ()
    view = False
    effect = True  # kept by dead-code elimination, never inlined, no conversion

    def __init__(self, module) -> None:
        self.module = module

    def forward(self, xp):
        m = self.module
        m.num_batches_tracked._data += 1
        bump_version(m.running_mean)
        bump_version(m.running_var)

    def changed(self) -> list:
        m = self.module
        return [m.num_batches_tracked, m.running_mean, m.running_var]


def _wrapped_batch_norm(original):
    from .step import _untouched_since_last_event, fingerprint

    def forward(self, input):
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


def targets():
    from ..nn.layers import _BatchNorm

    return [(_BatchNorm, "forward", _wrapped_batch_norm)]


def explained(trace: Trace) -> set:
    """ids of the tensors the trace's effects change (their versions and values)."""
    return {id(t) for e in trace.effects for t in e.changed()}
