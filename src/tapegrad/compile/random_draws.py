"""Random numbers inside a compiled function: dropout's mask, drawn afresh at every replay.

`F.dropout` draws its mask in Python (`functional_core._dropout_mask`, from this thread's
generator) and passes it to the `_dropout` op as an array parameter. While tracing, each
draw is recorded as an instruction of its own (`DropoutMask`) that calls the same function
again at every replay, in the traced order, so a compiled function consumes the generator
exactly as eager does: the same seed gives the same masks, compiled or not. The op reads
the mask from that instruction's slot (an array parameter that is a traced tensor's
storage, `Trace._param_slots`). Every other draw (`tg.randn`, a custom draw) still leaves
the signature eager: `explained_draws` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..tensor import _wrap
from . import hook
from .tracing import OP, TRACING, Instr, PatchTarget, Trace, _array_module

Draw = Callable[[Any, float], Any]  # _dropout_mask(x, p): the mask for array x


class DropoutMask:
    """The pseudo-op of one dropout draw: `forward(xp, x)` draws a new mask shaped as `x`."""

    name = "dropout_mask"
    save_idx = ()
    view = False
    keep = True  # it advances the generator: dead-code elimination must not drop it
    exact = True  # it returns what eager's draw returns: no dispatcher conversion

    def __init__(self, draw: Draw, p: float) -> None:
        self.draw, self.p = draw, p

    def forward(self, xp: Any, x: Any) -> Any:
        return self.draw(x, self.p)


def _state() -> Mapping[str, Any]:
    from ..random import generator

    return generator().bit_generator.state


def _wrapped_mask(original: Draw) -> Draw:
    def draw(x: Any, p: float) -> Any:
        trace = hook.local.trace
        source = None if trace is None else trace._storage.get(id(x))
        if source is None or trace.in_call or not source._tapes & TRACING:
            return original(x, p)  # not a traced input: the generator check sees the draw
        before = _state()
        mask = original(x, p)
        trace.draws.append((before, _state()))
        holder = _wrap(mask, 0)  # the slot's value: its array is the op's `mask=` parameter
        slot = trace._slot_of[id(holder)] = trace._new_slot(OP, holder)
        trace._marked[id(holder)] = (holder, 0)
        trace._storage[id(mask)] = holder
        ins = (trace.slot_of(source),)
        trace.instrs.append(
            Instr(DropoutMask(original, p), ins, {}, slot, _array_module(source), None, (False,))
        )
        return mask

    return draw


def targets() -> list[PatchTarget]:
    from ..nn import functional_core

    return [(functional_core, "_dropout_mask", _wrapped_mask)]


def explained_draws(trace: Trace, start: Any, end: Any) -> bool:
    """The generator went from `start` to `end` (its states; `start` None: it did not exist)
    through the recorded draws only, one after another."""
    state = start
    for before, after in trace.draws:
        if state is not None and before != state:
            return False
        state = after
    return bool(state == end)
