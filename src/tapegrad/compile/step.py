"""Compiled training steps: forward, `loss.backward()`, optimizer calls, replayed.

While tracing, `Tensor.backward` (through `engine_api.run_backward`), `Optimizer.step`,
`Optimizer.zero_grad` and `Module.zero_grad` are noted as *events* and run for real. A step
whose events come as `[calls] forward ops [one backward] [calls]` replays as: the calls
before, the forward program, the backward program (the traced rules, in the engine's
order), the leaves' gradients written by the engine's own `_apply_writes`, the calls after.
The optimizer and zero_grad calls run their own code on arrays at replay, so parameters
and optimizer state change exactly as in eager. Anything else (GradManager, create_graph,
explicit head gradients, ops after the backward) leaves the step eager.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..engine.node import ACCUMULATE, Node, leaf_of
from ..engine.state import AMBIENT, RECORD
from ..tensor import Tensor, _wrap
from . import functions, fusion, hook
from .program import boundary_slots, build_backward, build_forward
from .replay import split
from .tracing import ARG, CONST, EXTERNAL, OP, Instr, PatchTarget, Trace, backward_order

_OWN = AMBIENT | RECORD  # the tapes Tensor.backward follows
_T = TypeVar("_T")
Head = tuple[int, tuple[int, ...], np.dtype[Any]]  # a backward root: slot, gradient shape, dtype
# per watched tensor: it, its version, its array, a summary of the values, its .grad and
# a summary of the gradient's values (None without one)
Fingerprint = list[tuple[Tensor, int, Any, Any, Tensor | None, Any]]


class BackwardEvent:
    def __init__(
        self,
        position: int,
        roots: Sequence[Tensor],
        heads: list[Head],
        order: list[Instr],
        leaves: list[Tensor],
    ) -> None:
        self.position, self.roots, self.heads = position, roots, heads
        self.order, self.leaves = order, leaves  # instrs in engine order; leaf tensors written


def _note_backward(
    trace: Trace, roots: Sequence[Tensor], grads: Sequence[Any], options: dict[str, Any]
) -> None:
    """Check a backward during the trace can be replayed, and keep what its replay needs
    (taken now: the engine frees saved values as it goes)."""
    if trace.backward is not None:
        return trace.fail("it calls backward() twice")
    unsupported = {
        k
        for k, v in options.items()
        if k not in ("own_mask", "retain_graph", "create_graph", "write_only")
        or (k == "create_graph" and v)
        or (k == "write_only" and v is not None)
    }
    if options.get("own_mask") != _OWN or unsupported:
        return trace.fail(
            "its backward() is of a kind not replayed (create_graph, inputs=, a GradManager)"
        )
    heads: list[Head] = []
    root_nodes: list[Node] = []
    for root, g in zip(roots, grads, strict=True):
        g = g._data if isinstance(g, Tensor) else g
        slot = trace._slot_of.get(id(root))
        if slot is None or trace.kinds[slot] != OP or root.grad_fn is None:
            return trace.fail("it calls backward() on a tensor the trace did not compute")
        root_nodes.append(root.grad_fn)
        if (
            type(g) is not np.ndarray
            or g.shape != root.shape
            or g.dtype != root.dtype
            or not np.all(g == 1)
        ):
            return trace.fail("its backward() has a head gradient other than ones")
        heads.append((slot, g.shape, g.dtype))
    from ..engine.backward import _order

    nodes, _, _ = _order(root_nodes, _OWN, set())
    known = {id(i.node) for i in trace.instrs if i.node is not None}
    leaves = []
    for node in reversed(nodes):
        if node.op is ACCUMULATE:
            leaf = leaf_of(node)
            if leaf is not None and leaf._tapes & _OWN:
                leaves.append(leaf)
        elif id(node) not in known:
            return trace.fail("its backward() reaches ops outside the step")
    for leaf in leaves:
        slot = trace._slot_of.get(id(leaf))
        if slot is None or trace.kinds[slot] not in (ARG, EXTERNAL):
            return trace.fail("its backward() writes a leaf the trace does not know")
    if any(i.node is not None and (i.node.hooks or i.node.retained) for i in trace.instrs):
        return trace.fail("it registers tensor hooks or retain_grad() inside the step")
    order = backward_order(trace.instrs, root_nodes, _OWN)
    trace.backward = BackwardEvent(len(trace.instrs), roots, heads, order, leaves)


def fingerprint(trace: Trace) -> Fingerprint:
    """Version, values and gradient (object and values) of every tensor the trace watches:
    the arguments, the tensors found in `fn`, the externals seen so far. (Values too: code
    may write into an array without bumping the version.)"""
    tensors = {id(t): t for t in trace.watched}
    tensors.update(
        (id(v), v) for k, v in zip(trace.kinds, trace.values, strict=True) if k == EXTERNAL
    )
    out: Fingerprint = []
    for t in tensors.values():
        g = t._grad
        out.append(
            (t, t._version, t._data, _summary(t._data), g, None if g is None else _summary(g._data))
        )
    return out


_SUMMED = 1 << 16  # bytes: a larger contiguous array is summarised by a checksum, not copied


def _summary(a: Any) -> Any:
    """What `_same` compares `a` with later: a copy, or for a large contiguous array the
    CRC-32 of its bytes (zlib's, read in place; ~1 ms per 4 MiB here). Copying and comparing
    every parameter at every event was about 40 % of tracing the bench MLP step. A CRC sees
    every change of up to 32 adjacent bits and any other with probability 1 - 2**-32; sums
    of the words (the checksums before) could not see values that moved (a swap, an
    in-place shuffle)."""
    if type(a) is np.ndarray and a.nbytes >= _SUMMED and a.flags.c_contiguous:
        return (a.shape, a.dtype, zlib.crc32(a.data))
    return a.copy()


def _same(a: Any, summary: Any) -> bool:
    if type(summary) is tuple:
        now = _summary(a)
        return type(now) is tuple and bool(now == summary)
    return bool(
        a.shape == summary.shape and np.array_equal(a, summary, equal_nan=a.dtype.kind in "fc")
    )


def check_untouched(trace: Trace) -> None:
    """Between events (and with no events, over the whole call) only traced ops may run: a
    change made there (gradient clipping on raw arrays, BatchNorm statistics, a write into
    `p._data`) would not be replayed."""
    _untouched_since_last_event(trace)


def _untouched_since_last_event(trace: Trace) -> None:
    for t, version, array, values, g, data in trace.last_print or ():
        if (
            t._version != version
            or t._data is not array
            or not _same(array, values)
            or t._grad is not g
            or (g is not None and not _same(g._data, data))
        ):
            trace.fail(
                "it changes a tensor in place or a .grad outside backward(), step() "
                "and zero_grad() (gradient clipping, an in-place op, a write into "
                ".data), which a replay would not repeat"
            )
            return


def _event(trace: Trace, run: Callable[[], _T]) -> _T:
    _untouched_since_last_event(trace)
    trace.in_call += 1
    try:
        return run()
    finally:
        trace.in_call -= 1
        trace.last_print = fingerprint(trace)


# ---------------------------------------------------------------- interception
_lock = threading.Lock()
_depth = 0
_saved: list[tuple[Any, str, Any]] = []  # (owner, name, the original attribute)


def _wrapped_backward(original: Callable[..., Any]) -> Callable[..., Any]:
    def run_backward(roots: Sequence[Tensor], grads: Sequence[Any], **options: Any) -> Any:
        trace = hook.local.trace
        if trace is None or trace.in_call:
            return original(roots, grads, **options)
        _note_backward(trace, roots, grads, options)
        return _event(trace, lambda: original(roots, grads, **options))

    return run_backward


def _wrapped_call(original: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        trace = hook.local.trace
        if trace is None or trace.in_call:
            return original(self, *args, **kwargs)
        if any(isinstance(a, Tensor) or callable(a) for a in (*args, *kwargs.values())):
            trace.fail(f"it calls {original.__qualname__} with a tensor or a closure")
        trace.calls.append((len(trace.instrs), trace.backward, original, self, args, kwargs))
        return _event(trace, lambda: original(self, *args, **kwargs))

    call.__doc__ = original.__doc__
    call.__name__ = original.__name__
    return call


def _targets() -> list[PatchTarget]:
    from ..autograd import engine_api
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer
    from . import effects, random_draws, tracing

    return [
        (engine_api, "run_backward", _wrapped_backward),
        (Optimizer, "step", _wrapped_call),
        (Optimizer, "zero_grad", _wrapped_call),
        (Module, "zero_grad", _wrapped_call),
        *effects.targets(),
        *random_draws.targets(),
        *tracing.targets(),
    ]


class step_guard:
    """While entered (by any thread), backward() and optimizer calls are noted as events
    (and custom Functions are opaque calls: `functions.apply_guard`)."""

    def __enter__(self) -> step_guard:
        global _depth
        with _lock:
            if _depth == 0:
                for owner, name, wrap in _targets():
                    original = owner.__dict__[name]
                    _saved.append((owner, name, original))
                    setattr(owner, name, wrap(original))
            _depth += 1
        functions.apply_guard().__enter__()  # custom Functions: a guard shared with tg.onnx
        return self

    def __exit__(self, *exc: object) -> None:
        global _depth
        functions.apply_guard().__exit__(*exc)
        with _lock:
            _depth -= 1
            if _depth == 0:
                for owner, name, original in reversed(_saved):
                    setattr(owner, name, original)
                _saved.clear()


# ---------------------------------------------------------------- the program
def explained(trace: Trace) -> tuple[set[int], set[int]]:
    """ids of tensors whose version (optimizer steps) or `.grad` (zero_grad, backward) the
    step's events may change."""
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer
    from . import effects

    versions, grads = effects.explained(trace), set[int]()
    for _, _, fn, obj, _, _ in trace.calls:
        params = (
            list(obj.parameters())
            if isinstance(obj, Module)
            else [p for g in obj.param_groups for p in g["params"]]
        )
        if isinstance(obj, Optimizer) and fn.__name__ == "step":
            versions.update(id(p) for p in params)
        grads.update(id(p) for p in params)
    if trace.backward is not None:
        grads.update(id(t) for t in trace.backward.leaves)
    return versions, grads


def step_problem(trace: Trace) -> str | None:
    _untouched_since_last_event(trace)  # after the last event, up to the return
    if trace.problem is not None:
        return trace.problem
    event = trace.backward
    if event is None:
        return "it calls an optimizer without a backward() (only whole steps are replayed)"
    if event.position != len(trace.instrs):
        return "it computes after backward() (only forward, backward, optimizer calls)"
    for position, before_backward, *_ in trace.calls:
        if before_backward is None and position != 0:
            return "it calls zero_grad() or step() between forward ops"
    return None


def constants(trace: Trace) -> list[Any]:
    """What a trace took for constants, per instruction: its array parameters (index keys
    too; not those read from a slot at each call), its constant array inputs, and its
    external inputs (a found tensor by identity, a tensor made inside `fn` by its values).
    Two traces of one signature on different inputs that disagree here took
    input-dependent values for constants (sort's and topk's indices, from the raw arrays)."""

    def digest(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return (v.shape, v.dtype.str, zlib.crc32(np.ascontiguousarray(v).data))
        if type(v) is tuple:
            return tuple(digest(e) for e in v)
        return None

    watched = {id(t) for t in trace.watched}
    out: list[Any] = []
    for instr in trace.instrs:
        params = tuple(  # an array read from a slot (statistics, a mask) is no constant
            (k, None if k in instr.param_slots else digest(v)) for k, v in instr.params.items()
        )
        ins = []
        for s in instr.ins:
            kind, value = trace.kinds[s], trace.values[s]
            if kind == CONST:
                ins.append(digest(value))
            elif kind == EXTERNAL:
                ins.append(id(value) if id(value) in watched else digest(value._data))
            else:
                ins.append(kind)
        out.append((getattr(instr.op, "name", None), params, tuple(ins)))
    return out


class StepProgram:
    """One compiled training step (see the module docstring)."""

    draws = False  # (its first replay traces again: its dropout draws need no comparison)

    def __init__(self, trace: Trace, result: Any, ns: Any) -> None:
        # no eager rerun to compare the first replay with (it would step twice): that call
        # traces again instead, and the two traces' constants must agree (api.py)
        self.verified = False
        self.constants = constants(trace)
        event = trace.backward
        assert event is not None, "step_problem() lets only a step with a backward through"
        tensors: list[Tensor] = []
        self.template = split(result, tensors)
        boundary = boundary_slots(trace)
        self.arg_positions = [trace.arg_pos[s] for s in boundary if trace.kinds[s] == ARG]
        self.externals = [trace.values[s] for s in boundary if trace.kinds[s] == EXTERNAL]
        roots = [slot for slot, _, _ in event.heads]
        self.heads = [(shape, dtype) for _, shape, dtype in event.heads]
        wanted = [trace._slot_of[id(t)] for t in event.leaves]
        # per leaf written: its position among the arguments, or the external tensor itself
        self.leaves: list[int | Tensor] = [
            trace.arg_pos[s] if trace.kinds[s] == ARG else trace.values[s] for s in wanted
        ]
        overrides = fusion.backward_overrides(trace, event.order, roots, wanted)
        producers = fusion.windows_kept(trace, event.order, overrides)
        self.backward, reads, self.backward_source = build_backward(
            trace, event.order, roots, wanted, ns, inlined={}, overrides=overrides
        )
        slots = [trace._slot_of[id(t)] for t in tensors]
        op_outputs = list(dict.fromkeys(s for s in slots if trace.kinds[s] == OP))
        # per output tensor: where its value comes from at a replay ("op": an output of the
        # forward program, of that array class; "arg": an argument's position; "ext": itself)
        self.outputs: list[tuple[str, Any, type[Tensor]]] = []
        for t, s in zip(tensors, slots, strict=True):
            if trace.kinds[s] == OP:
                self.outputs.append(("op", op_outputs.index(s), type(t)))
            elif trace.kinds[s] == ARG:
                self.outputs.append(("arg", trace.arg_pos[s], type(t)))
            else:
                self.outputs.append(("ext", t, type(t)))
        self.forward, self.forward_source = build_forward(
            trace, boundary, op_outputs, reads, producers
        )
        self.before = [(fn, obj, a, k) for _, bw, fn, obj, a, k in trace.calls if bw is None]
        self.after = [(fn, obj, a, k) for _, bw, fn, obj, a, k in trace.calls if bw is not None]

    def run(self, leaves: list[Any], args: Any, kwargs: Any) -> Any:
        from ..engine.backward import _apply_writes

        for fn, obj, a, k in self.before:
            fn(obj, *a, **k)
        arrays = [leaves[p]._data for p in self.arg_positions]
        arrays += [t._data for t in self.externals]
        outs, saved = self.forward(*arrays)
        heads = [np.ones(shape, dtype) for shape, dtype in self.heads]
        grads = self.backward(*heads, *saved)
        writes: list[tuple[Tensor, Any, bool]] = []
        for where, g in zip(self.leaves, grads, strict=True):
            if g is not None:
                writes.append((where if isinstance(where, Tensor) else leaves[where], g, True))
        _apply_writes(writes, {id(h) for h in heads}, False, False)
        for fn, obj, a, k in self.after:
            fn(obj, *a, **k)
        from .replay import rebuild

        values: list[Any] = []
        for kind, where, cls in self.outputs:
            if kind == "op":  # eager's loss has a freed graph; this one has none
                values.append(_wrap(outs[where], 0, cls))
            else:
                values.append(leaves[where] if kind == "arg" else where)
        return rebuild(self.template, values)
