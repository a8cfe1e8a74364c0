"""A compiled program for one signature: replay its forward, and the one graph node whose
backward replays the traced backward (or, for higher order, runs `fn` eagerly again)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine.backward import SAVED_INPUT
from ..engine.recorder import record_node
from ..engine.state import also_recording
from ..ops.registry import dispatch
from ..tensor import Tensor, _wrap
from .program import (
    Generated,
    InlinedRules,
    boundary_slots,
    build_backward,
    build_forward,
    kept_slots,
)
from .tracing import ALIAS, ARG, EXTERNAL, OP, Instr, Trace, backward_order

# what `specialize` rebuilds the backward from: build_backward's arguments
_LeanArgs = tuple[Trace, list[Instr], list[int], list[int], Any]


def _generator() -> np.random.Generator:
    from ..random import generator

    return generator()


class _ArrayMeta:
    """What the backward builder reads of a traced array (not the array: it may be large)."""

    __slots__ = ("shape", "dtype", "nbytes")

    def __init__(self, a: Any) -> None:
        self.shape, self.dtype, self.nbytes = a.shape, a.dtype, a.nbytes


class _TensorMeta:
    __slots__ = ("_data",)

    def __init__(self, t: Tensor) -> None:
        self._data = _ArrayMeta(t._data)


def _skeleton(trace: Trace) -> Trace:
    """The trace without its arrays and eager graph, kept to build the lean backward later
    (a signature whose backward never runs must not hold the first call's activations)."""
    for instr in trace.instrs:
        instr.node = None  # the order and the edges were taken from it already
    values = [_TensorMeta(v) if isinstance(v, Tensor) else v for v in trace.values]
    return dataclasses.replace(
        trace,
        values=values,
        _slot_of={},
        _marked={},
        _storage={},
        external_grads=[],
        watched=[],
        last_print=None,
    )


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


def split(obj: Any, tensors: list[Tensor]) -> Any:
    """A template of `obj` with each Tensor replaced by a `_Leaf` (tensors collected)."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return _Leaf(len(tensors) - 1)
    if type(obj) in (tuple, list):
        return type(obj)(split(o, tensors) for o in obj)
    if type(obj) is dict:
        return {k: split(v, tensors) for k, v in obj.items()}
    return obj


def rebuild(template: Any, values: Sequence[Any]) -> Any:
    if type(template) is _Leaf:
        return values[template.index]
    if type(template) in (tuple, list):
        return type(template)(rebuild(o, values) for o in template)
    if type(template) is dict:
        return {k: rebuild(v, values) for k, v in template.items()}
    return template


class _CompiledOp:
    """What the compiled node's `op` is to the engine: a name and one rule."""

    name = "compiled"
    backward_name = "CompiledFunctionBackward"
    differentiable = True
    wants_needs = False
    view = False
    save_idx = ()
    saves_out = False

    @staticmethod
    def rule(xp: Any, g: Any, call: _Call) -> Any:
        return call.backward(xp, g)


COMPILED = _CompiledOp()


class _Call:
    """What one replayed call keeps for its backward (the node's only saved value)."""

    __slots__ = ("program", "saved", "inputs", "args", "kwargs", "rng_state")

    def __init__(
        self,
        program: Program,
        saved: tuple[Any, ...],
        inputs: list[Tensor],
        args: Any,
        kwargs: Any,
        rng_state: Any = None,
    ) -> None:
        self.program, self.saved, self.inputs = program, saved, inputs
        self.args, self.kwargs = args, kwargs
        self.rng_state = rng_state  # the generator before the call's dropout draws

    def backward(self, xp: Any, g: Any) -> Any:
        prog = self.program
        if xp is prog.ns:
            gs = (g,) if prog.n_out == 1 else tuple(g)
            as_traced = prog.heads_as_traced(gs)
            if prog.lean is not None and as_traced:
                return prog.lean(*gs, *self.saved)
            assert prog.backward is not None  # a call is recorded only with a backward
            grads = prog.backward(*gs, *self.saved)
            if prog.lean is None and as_traced:
                prog.specialize()  # the fix-ups this call needed are the ones every call needs
            return grads
        return prog.eager_backward(self, g)


def _view_outputs(trace: Trace, tensors: list[Tensor]) -> list[tuple[int, Any, list[Any]]]:
    """Outputs that are views (view ops, `detach()`) of an input or of an earlier output:
    (index among the outputs, where the base is, the ops from it). A replay takes them again
    from the real base through the dispatcher, so they share its version counter and know
    what they view, as eager's: an in-place write into one is seen by the base (its version,
    its graph rebased; a view of a leaf that requires grad refuses it), not lost."""
    made_by = {i.out: i for i in trace.instrs}
    first_output: dict[int, int] = {}
    for k, t in enumerate(tensors):
        first_output.setdefault(trace._slot_of[id(t)], k)
    found = []
    for k, t in enumerate(tensors):
        slot = trace._slot_of[id(t)]
        if trace.kinds[slot] != OP:
            continue
        chain: list[tuple[Any, dict[str, Any]]] = []
        source: tuple[str, Any] | None = None
        while True:
            instr = made_by.get(slot)
            if instr is None or len(instr.ins) != 1 or not (instr.op is ALIAS or instr.op.view):
                break
            chain.append((instr.op, instr.params))
            slot = instr.ins[0]
            if trace.kinds[slot] == ARG:
                source = ("arg", trace.arg_pos[slot])
            elif trace.kinds[slot] == EXTERNAL:
                source = ("ext", trace.values[slot])
            elif first_output.get(slot, k) < k:
                source = ("out", first_output[slot])
            if source is not None:
                break
        if source is not None:
            found.append((k, source, chain[::-1]))
    return found


class Program:
    """The replayable form of one trace (see `program.py` for the generated code)."""

    def __init__(self, fn: Callable[..., Any], trace: Trace, result: Any, ns: Any) -> None:
        self.fn = fn
        self.ns = ns
        tensors: list[Tensor] = []
        self.template = split(result, tensors)
        boundary = boundary_slots(trace)
        self.arg_positions = [trace.arg_pos[s] for s in boundary if trace.kinds[s] == ARG]
        self.externals = [trace.values[s] for s in boundary if trace.kinds[s] == EXTERNAL]
        op_outputs: list[int] = []
        # per output: ("op", index, tapes, cls, diff nr); inputs: see below
        self.outputs: list[tuple[Any, ...]] = []
        diff: list[int] = []
        for t in tensors:
            slot = trace._slot_of[id(t)]
            if trace.kinds[slot] != OP:
                self.outputs.append(("in", slot))
                continue
            if slot not in op_outputs:
                op_outputs.append(slot)
            nr = None
            if t.grad_fn is not None:
                if slot not in diff:
                    diff.append(slot)
                nr = diff.index(slot)
            self.outputs.append(("op", op_outputs.index(slot), t._tapes, type(t), nr))
        self.views = _view_outputs(trace, tensors)
        self.n_out = len(diff)
        self.backward: Generated | None = None
        self.lean: Generated | None = None  # without the fix-ups that never fire (one call on)
        reads: list[int] = []
        self.backward_source = ""
        self.mask = 0
        self.saves = False
        kept: set[int] = set()
        self.wanted: list[int] = []
        if diff:
            roots = [trace.values[s].grad_fn for s in diff]
            for s in diff:
                self.mask |= trace.values[s]._tapes
            edged = {s for i in trace.instrs for s, e in zip(i.ins, i.edges, strict=True) if e}
            self.wanted = [s for s in boundary if s in edged]
            self._fired: set[int] = set()
            # rules written as expressions, decided on the arrays
            self._inlined: InlinedRules = {}
            order = backward_order(trace.instrs, roots)
            # eager's backward frees the saved values of the nodes it runs: a second one
            # raises when some node had any (a constant too), and runs again otherwise
            self.saves = any(i.node is not None and i.node.saved for i in order)
            kept = kept_slots(order)
            self.backward, reads, self.backward_source = build_backward(
                trace, order, diff, self.wanted, ns, fired=self._fired, inlined=self._inlined
            )
            self._lean_args: _LeanArgs | None = (_skeleton(trace), order, diff, self.wanted, ns)
            self.heads = [(trace.values[s]._data.shape, trace.values[s]._data.dtype) for s in diff]
        saved_positions = {s: k for k, s in enumerate(reads)}
        self.reads = reads
        self.forward, self.forward_source = build_forward(trace, boundary, op_outputs, reads)
        self._saved_positions = saved_positions
        self.boundary = boundary
        # where each wanted input lives at call time: argument position or external tensor
        self.wanted_from: list[tuple[str, Any]] = [
            ("arg", trace.arg_pos[s]) if trace.kinds[s] == ARG else ("ext", trace.values[s])
            for s in self.wanted
        ]
        self.input_from: list[tuple[str, Any]] = [
            ("arg", trace.arg_pos[s]) if trace.kinds[s] == ARG else ("ext", trace.values[s])
            for s in boundary
        ]
        # what the backward reads that the caller can still change in place before it runs,
        # version-checked as eager checks its nodes' saved tensors (`kept`): the
        # differentiated inputs kept (by their index among the node's inputs), the other
        # boundary tensors kept (an input saved for another input's gradient), and the
        # outputs whose storage is kept (indices into self.outputs). What eager does not
        # keep may change freely (tanh keeps its output, not its input; `x * 2.0` no `x`).
        checked = [s for s in reads if s in kept]
        saved_data = [trace.values[s]._data for s in checked]
        self.checked_inputs = [i for i, s in enumerate(self.wanted) if s in kept]
        self.saved_from: list[tuple[str, Any]] = [
            ("arg", trace.arg_pos[s]) if trace.kinds[s] == ARG else ("ext", trace.values[s])
            for s in checked
            if trace.kinds[s] in (ARG, EXTERNAL) and s not in self.wanted
        ]
        self.saved_outputs = [
            k
            for k, spec in enumerate(self.outputs)
            if spec[0] == "op"
            and any(
                np.may_share_memory(trace.values[op_outputs[spec[1]]]._data, a) for a in saved_data
            )
        ]
        self.n_ops = len(trace.instrs)
        self.verified = False  # its first replay is compared with eager (api.py)
        self.draws = bool(trace.draws)  # it draws dropout masks (that comparison redraws)
        # outputs that are inputs: resolved once to (kind, where) instead of per call
        self.outputs = [
            (*self.input_from[boundary.index(spec[1])],) if spec[0] == "in" else spec
            for spec in self.outputs
        ]

    def run(self, leaves: list[Any], args: Any, kwargs: Any) -> Any:
        arrays = [leaves[p]._data for p in self.arg_positions]
        if self.externals:
            arrays += [t._data for t in self.externals]
        rng_state = _generator().bit_generator.state if self.draws else None
        outs, saved = self.forward(*arrays)
        node = None
        if self.backward is not None:
            inputs = [leaves[where] if kind == "arg" else where for kind, where in self.wanted_from]
            checks = [(inputs[i]._vc, inputs[i]._version, i) for i in self.checked_inputs]
            for kind, where in self.saved_from:
                t = leaves[where] if kind == "arg" else where
                checks.append((t._vc, t._vc[0], SAVED_INPUT))
            node = record_node(COMPILED, {}, inputs, self.mask, self.ns, Tensor, self.n_out)
            call = _Call(self, saved, inputs, args, kwargs, rng_state)
            if self.saves:
                node.saved = (call,)
            else:  # nothing saved: a second backward runs again, as eager's does (the engine
                node.params = {"call": call}  # frees `saved` only, and only a non-empty one)
            node.checks = tuple(checks)
        values: list[Any] = []
        for spec in self.outputs:
            if spec[0] != "op":  # an input returned as it is
                values.append(leaves[spec[1]] if spec[0] == "arg" else spec[1])
                continue
            _, index, tapes, cls, nr = spec
            t = _wrap(outs[index], tapes if nr is not None else 0, cls)
            if nr is not None:
                t.grad_fn = node
                t._out_nr = nr
            values.append(t)
        for k, source, chain in self.views:  # taken again by the view ops, as eager took it
            kind, where = source
            base = leaves[where] if kind == "arg" else where if kind == "ext" else values[where]
            for op, params in chain:
                base = base.detach() if op is ALIAS else dispatch(op, base, **params)
            values[k] = base
        if node is not None and self.saved_outputs:
            node.checks += tuple((values[k]._vc, values[k]._vc[0], -1) for k in self.saved_outputs)
        if type(self.template) is _Leaf:
            return values[0]
        return rebuild(self.template, values)

    def specialize(self) -> None:
        """After a first backward: the same program with only the fix-ups that fired."""
        assert self._lean_args is not None, "specialize() runs once, after the first backward"
        trace, order, diff, wanted, ns = self._lean_args
        self.lean, reads, self.lean_source = build_backward(
            trace, order, diff, wanted, ns, keep=set(self._fired), inlined=self._inlined
        )
        assert reads == self.reads, "the lean backward must read what the forward saves"
        self._lean_args = None  # the trace is no longer needed

    def heads_as_traced(self, gs: Sequence[Any]) -> bool:
        """Incoming gradients have the outputs' traced shapes and dtypes (so the lean
        backward's fix-ups are the ones needed)."""
        for g, (shape, dtype) in zip(gs, self.heads, strict=True):
            if g is not None and (g.dtype != dtype or g.shape != shape):
                return False
        return True

    def eager_backward(self, call: _Call, g: Any) -> tuple[Any, ...]:
        """A backward that must itself be recorded (create_graph, higher order): run `fn`
        eagerly again on the same inputs and differentiate that graph with the engine."""
        from ..autograd.engine_api import grad as untyped_grad

        grad: Callable[..., Any] = untyped_grad  # typed at the boundary (autograd isn't)

        rng = _generator() if call.rng_state is not None else None
        if rng is not None:  # the same dropout masks as the call, the stream left as it is
            now, rng.bit_generator.state = rng.bit_generator.state, call.rng_state
        try:
            with also_recording(self.mask):
                result = self.fn(*call.args, **call.kwargs)
        finally:
            if rng is not None:
                rng.bit_generator.state = now
        tensors: list[Tensor] = []
        split(result, tensors)
        gs = (g,) if self.n_out == 1 else tuple(g)
        outs: list[Tensor] = []
        heads: list[Any] = []
        seen: set[int] = set()
        for spec, t in zip(self.outputs, tensors, strict=True):
            if (
                spec[0] == "op"
                and spec[4] is not None
                and gs[spec[4]] is not None
                and id(t) not in seen
            ):
                seen.add(id(t))
                outs.append(t)
                heads.append(gs[spec[4]])
        if not outs:
            return tuple(None for _ in call.inputs)
        return tuple(
            grad(outs, call.inputs, grad_outputs=heads, create_graph=True, allow_unused=True)
        )
