"""The forward of a module traced for export: `tg.compile`'s trace (a flat list of ops on
slots), plus the layer that dispatched each op, so an error can name it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..compile import hook
from ..compile.discovery import discover
from ..compile.replay import split
from ..compile.tracing import Trace, value_read_guard
from ..tensor import Tensor


class _OwnedTrace(Trace):
    """A trace that notes, per traced op, the innermost layer running when it was made."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.owner: dict[int, str] = {}  # output slot -> "path (Class)"

    def _note(self) -> None:
        self.owner[self.instrs[-1].out] = self.stack[-1] if self.stack else "(top level)"

    def append(self, op, args, params, result) -> None:
        super().append(op, args, params, result)
        self._note()

    def alias(self, source, out) -> None:
        super().alias(source, out)
        self._note()


def _check_eval(module) -> None:
    """Dropout and batch norm in training mode have no inference graph to write."""
    from ..nn.layers import Dropout, _BatchNorm

    for path, sub in module.named_modules():
        if sub.training and isinstance(sub, (Dropout, _BatchNorm)):
            raise RuntimeError(
                f"tg.onnx.export: layer {path or '(root)'} ({type(sub).__name__}) is in "
                "training mode (random masks, batch statistics), which an inference graph "
                "doesn't have; call module.eval() before exporting"
            )


@dataclass
class Traced:
    trace: Trace
    owner: dict
    inputs: list  # the argument slots, in order
    outputs: list  # the output slots, in order
    params: dict = field(default_factory=dict)  # id(tensor) -> its name in the module
    template: Any = None  # the result with each output tensor a `replay._Leaf` (split)


def trace_forward(module, args: tuple) -> Traced:
    """Run `module(*args)` once without recording gradients, tracing every op it dispatches."""
    from ..autograd.modes import no_grad
    from ..nn.module import Module

    names: dict[int, str] = {}
    handles = []
    trace = _OwnedTrace()
    if isinstance(module, Module):
        _check_eval(module)
        for path, t in list(module.named_parameters()) + list(module.named_buffers()):
            if t is not None:
                names.setdefault(id(t), path)
        for path, sub in module.named_modules():
            label = f"{path or '(root)'} ({type(sub).__name__})"

            def enter(m, a, label=label):
                trace.stack.append(label)

            def leave(m, a, out):
                trace.stack.pop()

            handles.append(sub.register_forward_pre_hook(enter))
            handles.append(sub.register_forward_hook(leave))
    elif callable(getattr(module, "collect_params", None)):  # a Gluon Block
        for path, p in module.collect_params().items():
            t = getattr(p, "_var", None)
            if isinstance(t, Tensor):
                names.setdefault(id(t), path)
    flat: list = []
    split(args, flat)
    inputs = [trace.add_arg(t, pos) for pos, t in enumerate(flat)]
    for t in discover(module, flat)[1]:  # parameters and buffers (a Gluon Block's too)
        trace.mark(t)  # its array then counts as its storage (batch norm's statistics)
    hook.local.trace = trace
    try:
        with value_read_guard(), no_grad():
            result = module(*args)
    finally:
        hook.local.trace = None
        trace.unmark_all()
        for h in handles:
            h.remove()
    name = type(module).__name__
    why = trace.value_read or trace.problem
    if why is not None:
        raise RuntimeError(
            f"tg.onnx.export: {name}'s forward can't be traced for export: {why}. "
            "Export a forward made of tapegrad ops only, with no value reads."
        )
    outs: list = []
    template = split(result, outs)
    if not outs:
        raise ValueError(f"tg.onnx.export: {name}'s forward returned no tensor")
    slots = []
    for t in outs:
        slot = trace._slot_of.get(id(t))
        if slot is None or not isinstance(t, Tensor):
            raise RuntimeError(
                f"tg.onnx.export: an output of {name} was made outside tapegrad's "
                "op table (from raw arrays); the export can't compute it"
            )
        slots.append(slot)
    return Traced(trace, trace.owner, inputs, slots, names, template)
