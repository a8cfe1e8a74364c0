"""Custom `tg.autograd.Function`s inside a compiled function: replayed as opaque calls.

A Function's `forward` and `backward` are Python code on tensors that may do anything, so
they are not traced into; each application is one instruction (`FunctionCall`) whose
replay runs the Function's own `apply` on tensors wrapping the arrays of the call (its
`forward` and its graph node, exactly as eager), and whose derivative rule is that node's
rule (the user's `backward`, with the engine's checks). Each tensor output is one more
instruction (`FunctionOutput`) taking its array out of the call. The values and gradients
are therefore those of eager; what is saved is the call's node (and its ctx).

Refused (the signature runs eagerly): MXNet-style Functions (an instance carries state
across calls), tensors among the keyword arguments, and `mark_dirty` (an in-place output).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.node import Node
from ..tensor import Tensor, _wrap
from . import hook
from .tracing import OP, TRACING, Instr, Trace, _array_module

if TYPE_CHECKING:
    from ..autograd.function import Function

# autograd.function._apply(cls, ctx, args, kwargs): one application of a Function class
ApplyFn = Callable[[type["Function"], Any, Sequence[Any], dict[str, Any]], Any]


class _Packed:
    """The value of a call's slot: its graph node (None without gradients) and the arrays
    of its outputs. The traced slot holds an empty one (the backward builder reads `_data`)."""

    __slots__ = ("node", "arrays")
    _data = np.empty(0)
    _version = None

    def __init__(self, node: Node | None, arrays: list[Any]) -> None:
        self.node, self.arrays = node, arrays


class FunctionCall:
    """The pseudo-op of one application of a Function class."""

    save_idx = (-1,)  # its rule reads the call's node from the slot
    view = False
    wants_needs = False
    exact = True

    def __init__(
        self,
        cls: type[Function],
        tapes: tuple[int | None, ...],
        kwargs: dict[str, Any],
        n_out: int,
    ) -> None:
        self.cls, self.tapes, self.kwargs, self.n_out = cls, tapes, kwargs, n_out
        self.name = cls.__name__
        self.items: list[int | None] = [None] * n_out  # per output: its FunctionOutput's slot

    def saved_indices(self, n_inputs: int) -> tuple[int, ...]:
        return self.save_idx

    def forward(self, xp: Any, *args: Any) -> _Packed:
        from ..autograd import function
        from ..autograd.function import FunctionCtx

        wrapped = [a if tapes is None else _wrap(a, tapes) for a, tapes in zip(args, self.tapes)]
        ctx: Any = FunctionCtx()  # the machinery's `_tg_` attributes live in its dict
        ctx._tg_cls = self.cls
        apply: ApplyFn = function._apply  # typed at the boundary
        out = apply(self.cls, ctx, wrapped, self.kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        node = next(
            (o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn is not None), None
        )
        return _Packed(node, [o._data if isinstance(o, Tensor) else None for o in outs])

    @staticmethod
    def rule(xp: Any, g: Any, packed: _Packed) -> Any:
        node = packed.node
        assert node is not None  # a call without gradients has no rule to run
        return node.op.rule(xp, g, *node.saved)


class FunctionOutput:
    """The pseudo-op taking output `index` out of a call's slot."""

    save_idx = ()
    view = True  # the Function's output array, as eager's output tensor holds it
    exact = True

    def __init__(self, cls: type[Function], index: int) -> None:
        self.name = f"{cls.__name__}[{index}]"
        self.index = index

    def forward(self, xp: Any, packed: _Packed) -> Any:
        return packed.arrays[self.index]


def traced_apply(
    trace: Trace,
    original: ApplyFn,
    cls: type[Function],
    ctx: Any,
    args: Sequence[Any],
    kwargs: dict[str, Any],
) -> Any:
    """Run the Function as eager does (its inside not traced), then record the call."""
    why = None
    if cls._tg_instance_style:
        why = f"it calls the MXNet-style Function {cls.__name__} (an instance keeps state)"
    elif any(isinstance(v, Tensor) for v in kwargs.values()):
        why = f"it passes a tensor as a keyword argument to the Function {cls.__name__}"
    hook.local.trace = None  # the Function's own ops and value reads are its business
    try:
        out = original(cls, ctx, args, kwargs)
    finally:
        hook.local.trace = trace
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if any(o is a for o in outs if isinstance(o, Tensor) for a in args):
        why = f"the Function {cls.__name__} changes an input in place (mark_dirty)"
    first = next(a for a in args if isinstance(a, Tensor))
    xp = _array_module(first)
    if xp is None:
        why = f"the Function {cls.__name__} ran on a {type(first._data).__name__}"
    if why is not None:
        trace.fail(why)
        return out
    ins = tuple(trace.slot_of(a) for a in args)
    tapes = tuple(a._tapes & ~TRACING if isinstance(a, Tensor) else None for a in args)
    op = FunctionCall(cls, tapes, dict(kwargs), len(outs))
    node = next((o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn), None)
    edges = tuple(e is not None for e in node.next) if node is not None else (False,) * len(ins)
    call = trace._new_slot(OP, _Packed(None, []))
    trace.instrs.append(Instr(op, ins, {}, call, xp, node, edges))
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            continue
        slot = trace.output_slot(o)
        op.items[i] = slot
        trace.instrs.append(Instr(FunctionOutput(cls, i), (call,), {}, slot, xp, None, (False,)))
    return out


def _wrapped_apply(original: ApplyFn) -> ApplyFn:
    def apply(cls: type[Function], ctx: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        trace = hook.local.trace
        if (
            trace is None
            or trace.in_call
            or not any(isinstance(a, Tensor) and a._tapes & TRACING for a in args)
        ):
            return original(cls, ctx, args, kwargs)
        return trace.apply_function(original, cls, ctx, args, kwargs)

    return apply


_lock = threading.Lock()
_depth = 0
_saved: list[ApplyFn] = []


class apply_guard:
    """While entered (by any thread), `Function.apply` on traced tensors goes to the
    thread's trace (`Trace.apply_function`). One count for every user (`tg.compile`'s
    step guard, `tg.onnx.export`), so the patch is made once and undone by the last."""

    def __enter__(self) -> apply_guard:
        from ..autograd import function

        global _depth
        with _lock:
            if _depth == 0:
                original = function.__dict__["_apply"]
                _saved.append(original)
                # (patching the module's function is the mechanism: apply looks it up there)
                function._apply = _wrapped_apply(original)  # type: ignore[assignment]
            _depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        from ..autograd import function

        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0:
                function._apply = _saved.pop()  # type: ignore[assignment]
