"""The forward of a module traced for export: `tg.compile`'s trace (a flat list of ops on
slots), plus the layer that dispatched each op, so an error can name it.

Two kinds of call are not traced into but kept whole, to be written by a `symbolic`
(`_symbolic.py`): a custom Function whose class defines `symbolic`, and a recurrent
layer (RNN, LSTM, GRU: ONNX's own operators, `_recurrent.py`). A Function without
`symbolic` is traced through: the ops of its `forward` are exported."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..compile import hook
from ..compile.discovery import discover
from ..compile.functions import ApplyFn, apply_guard
from ..compile.replay import split
from ..compile.tracing import CONST, Instr, Trace, value_read_guard
from ..tensor import Tensor
from . import _recurrent
from ._symbolic import Pick, SymbolicCall

if TYPE_CHECKING:
    from ..nn.module import Module


class _OwnedTrace(Trace):
    """A trace that notes, per traced op, the innermost layer running when it was made."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.owner: dict[int, str] = {}  # output slot -> "path (Class)"

    def _note(self) -> None:
        self.owner[self.instrs[-1].out] = self.stack[-1] if self.stack else "(top level)"

    def append(
        self, op: Any, args: tuple[Any, ...], params: dict[str, Any], result: Tensor
    ) -> None:
        super().append(op, args, params, result)
        self._note()

    def alias(self, source: Tensor, out: Tensor) -> None:
        super().alias(source, out)
        self._note()

    def apply_function(
        self,
        original: ApplyFn,
        cls: Any,
        ctx: Any,
        args: Sequence[Any],
        kwargs: dict[str, Any],
    ) -> Any:
        symbolic = getattr(cls, "symbolic", None)
        if symbolic is None:
            return original(cls, ctx, args, kwargs)  # traced through, op by op
        return self.symbolic_call(
            cls.__name__, symbolic, args, kwargs, lambda: original(cls, ctx, args, kwargs)
        )

    def symbolic_call(
        self,
        name: str,
        symbolic: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
        run: Callable[[], Any],
    ) -> Any:
        """`run()` eagerly, untraced; note one call for `symbolic` to write, taking `args`
        (tensors as their slots) and giving the tensors of its result, flattened."""
        hook.local.trace = None
        try:
            result = run()
        finally:
            hook.local.trace = self
        outs: list[Tensor] = []
        split(result, outs)
        spec: list[tuple[str, Any]] = [
            ("slot", self.slot_of(a)) if isinstance(a, Tensor) else ("value", a) for a in args
        ]
        for o in outs:
            if id(o) in self._slot_of:
                self.fail(f"{name} returns one of its inputs (or a tensor traced before)")
        call = SymbolicCall(name, symbolic, spec, dict(kwargs), len(outs))
        ins = tuple(x for kind, x in spec if kind == "slot")
        slot = self._new_slot(CONST, None)
        self.instrs.append(Instr(call, ins, {}, slot, None, None, (False,) * len(ins)))
        self._note()
        for i, o in enumerate(outs):
            out = self.output_slot(o)
            self.instrs.append(Instr(Pick(name, i), (slot,), {}, out, None, None, (False,)))
            self._note()
        return result


def _check_eval(module: Module) -> None:
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
    owner: dict[int, str]  # output slot -> the layer that made it
    inputs: list[int]  # the argument slots, in order
    outputs: list[int]  # the output slots, in order
    params: dict[int, str] = field(default_factory=dict)  # id(tensor) -> its name
    template: Any = None  # the result with each output tensor a `replay._Leaf` (split)


def trace_forward(module: Any, args: tuple[Any, ...]) -> Traced:
    """Run `module(*args)` once without recording gradients, tracing every op it dispatches."""
    from ..autograd.modes import no_grad
    from ..nn.module import Module

    names: dict[int, str] = {}
    handles: list[Any] = []  # the forward hooks' handles
    recurrent: list[tuple[Any, str]] = []  # (layer, path): their forward is one call while tracing
    trace = _OwnedTrace()
    if isinstance(module, Module):
        _check_eval(module)
        for path, t in list(module.named_parameters()) + list(module.named_buffers()):
            if t is not None:
                names.setdefault(id(t), path)
        for path, sub in module.named_modules():
            label = f"{path or '(root)'} ({type(sub).__name__})"

            def enter(m: Module, a: Any, label: str = label) -> None:
                trace.stack.append(label)

            def leave(m: Module, a: Any, out: Any) -> None:
                trace.stack.pop()

            handles.append(sub.register_forward_pre_hook(enter))
            handles.append(sub.register_forward_hook(leave))
            if _recurrent.is_recurrent(sub):
                recurrent.append((sub, path))
    elif callable(getattr(module, "collect_params", None)):  # a Gluon Block
        for path, p in module.collect_params().items():
            t = getattr(p, "_var", None)
            if isinstance(t, Tensor):
                names.setdefault(id(t), path)
    flat: list[Tensor] = []
    split(args, flat)
    inputs = [trace.add_arg(t, pos) for pos, t in enumerate(flat)]
    for t in discover(module, flat)[1]:  # parameters and buffers (a Gluon Block's too)
        trace.mark(t)  # its array then counts as its storage (batch norm's statistics)
    hook.local.trace = trace
    try:
        for sub, path in recurrent:  # an instance attribute shadows the class's forward
            sub.__dict__["forward"] = _recurrent.traced_forward(trace, sub, path)
        with value_read_guard(), apply_guard(), no_grad():
            result = module(*args)
    finally:
        hook.local.trace = None
        trace.unmark_all()
        for h in handles:
            h.remove()
        for sub, _ in recurrent:
            sub.__dict__.pop("forward", None)
    name = type(module).__name__
    why = trace.value_read or trace.problem
    if why is not None:
        raise RuntimeError(
            f"tg.onnx.export: {name}'s forward can't be traced for export: {why}. "
            "Export a forward made of tapegrad ops only, with no value reads."
        )
    outs: list[Tensor] = []
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
