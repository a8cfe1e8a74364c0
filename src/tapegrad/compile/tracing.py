"""Tracing: run `fn` once eagerly and write down every op it dispatches, on slots.

A *slot* is one value of the program: an argument, an external tensor read live at each
call (a parameter), a Python constant, or the output of one traced op. The trace also
notes why it cannot be replayed faithfully (a value read, random numbers drawn, a tensor
changed in place, a gradient written), in which case `tg.compile` runs `fn` eagerly.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.node import ACCUMULATE, Node
from ..tensor import Tensor
from . import hook
from .hook import TRACING

if TYPE_CHECKING:
    from .step import BackwardEvent

__all__ = ["ALIAS", "ARG", "CONST", "EXTERNAL", "OP", "TRACING", "Instr", "PatchTarget", "Trace"]

ARG, EXTERNAL, CONST, OP = "arg", "external", "const", "op"
# a module-level function or method a guard replaces while tracing: (owner, attribute name,
# the wrapper factory taking the original)
PatchTarget = tuple[Any, str, Callable[[Any], Any]]


@dataclass
class Instr:
    """One traced op: `slots[out] = op.forward(xp, *slots[ins], **params)`."""

    # a registry `Op` or a pseudo-op (an alias, a Function call, an effect, a draw): duck
    # typed on `name`, `forward`, `save_idx`/`saved_indices`, `view` and optional flags
    op: Any
    ins: tuple[int, ...]
    params: dict[str, Any]
    out: int
    xp: Any  # the array module (NumPy), None for a pseudo-instruction without arrays
    node: Node | None  # the eager graph node made while tracing (None when nothing recorded)
    edges: tuple[bool, ...]  # per input: does the node have an edge to it (it gets a gradient)
    param_slots: dict[str, int] = field(default_factory=dict)  # array parameter -> its slot


class _Alias:
    """The pseudo-op of `Trace.alias`: the same array, no gradient."""

    name = "detach"
    save_idx = ()
    view = True

    @staticmethod
    def forward(xp: Any, x: Any) -> Any:
        return x


ALIAS = _Alias()


def _array_module(t: Tensor) -> Any:
    from ..ops.registry import _MODULES

    return _MODULES.get(type(t._data))


@dataclass
class Trace:
    kinds: list[str] = field(default_factory=list)  # per slot: ARG, EXTERNAL, CONST or OP
    values: list[Any] = field(default_factory=list)  # per slot: the Tensor (or constant)
    versions: list[int | None] = field(default_factory=list)  # a tensor's version first seen
    arg_pos: dict[int, int] = field(default_factory=dict)  # slot -> position among the args
    instrs: list[Instr] = field(default_factory=list)
    # (tensor, grad, a copy of its values) when first seen
    external_grads: list[tuple[Tensor, Tensor | None, Any]] = field(default_factory=list)
    problem: str | None = None  # why this trace can't be replayed, if it can't
    backward: BackwardEvent | None = None  # the backward() call, if any
    # optimizer / zero_grad calls (step.py): (instruction count, the backward before it,
    # the unwrapped method, its object, args, kwargs)
    calls: list[tuple[int, Any, Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]]] = field(
        default_factory=list
    )
    in_call: int = 0  # inside backward() or an optimizer call: their own work isn't traced
    watched: list[Tensor] = field(default_factory=list)  # arguments and found tensors (step.py)
    effects: list[Any] = field(default_factory=list)  # bookkeeping the replay redoes (effects.py)
    in_batch_norm: int = 0  # inside a BatchNorm layer whose bookkeeping effects.py records
    last_print: Any = None  # their state after the last event (step.fingerprint)
    value_read: str | None = None  # the first value read (which makes fn eager for good)
    draws: list[tuple[Any, Any]] = field(default_factory=list)  # generator states around draws
    _slot_of: dict[int, int] = field(default_factory=dict)  # id(tensor) -> slot
    _marked: dict[int, tuple[Tensor, int]] = field(default_factory=dict)  # id -> (t, tapes)
    _storage: dict[int, Tensor] = field(default_factory=dict)  # id(array) -> its tensor

    # ---------------------------------------------------------------- slots
    def _new_slot(self, kind: str, value: Any) -> int:
        self.kinds.append(kind)
        self.values.append(value)
        self.versions.append(value._version if isinstance(value, Tensor) else None)
        return len(self.kinds) - 1

    def mark(self, t: Tensor) -> None:
        """Make ops on `t` visible to the trace (until `unmark_all`)."""
        if id(t) not in self._marked:
            self._marked[id(t)] = (t, t._tapes)
            self._storage.setdefault(id(t._data), t)
            t._tapes |= TRACING

    def add_arg(self, t: Tensor, pos: int) -> int:
        slot = self._slot_of.get(id(t))
        if slot is None:
            slot = self._slot_of[id(t)] = self._new_slot(ARG, t)
            self.arg_pos[slot] = pos
            self.mark(t)
        return slot

    def slot_of(self, a: Any) -> int:
        """The slot an op input lives in, made on first sight for externals and constants."""
        if not isinstance(a, Tensor):
            return self._new_slot(CONST, a)
        found = self._slot_of.get(id(a))
        if found is not None:
            return found
        if a._tapes & TRACING and id(a) not in self._marked:
            self.fail("it changes a traced tensor in place (a shadow of it reached an op)")
        elif (
            a.grad_fn is not None
            and id(a) not in self._marked
            # vmap's replay takes such a value as a constant, and checks itself whether a
            # tape outside needs its graph (func/batched_replay.py)
            and not getattr(self, "per_sample_values", False)
        ):
            self.fail(
                "a tensor with a graph that tapegrad's op table did not make (a custom "
                "Function, or an outside value) reached an op"
            )
        slot = self._slot_of[id(a)] = self._new_slot(EXTERNAL, a)
        self._storage.setdefault(id(a._data), a)
        g = a._grad
        self.external_grads.append((a, g, None if g is None else g._data.copy()))
        return slot

    # ---------------------------------------------------------------- ops
    def _param_slots(self, params: dict[str, Any]) -> dict[str, int]:
        """Array parameters that are a traced tensor's storage (batch norm's running
        statistics, a loss's weight): the replay passes that tensor's array of the call."""
        found: dict[str, int] = {}
        for k, v in params.items():
            if isinstance(v, np.ndarray):
                t = self._storage.get(id(v))
                if t is not None and t._data is v:
                    found[k] = self.slot_of(t)
                elif self.derived(v):  # a reshaped index (take_along_dim without dim)
                    self.fail(INDEX_REASON)
            elif type(v) is tuple and any(self.derived(e) for e in v):
                self.fail(INDEX_REASON)  # an indexing key (index_add's, index_put_'s)
        return found

    def derived(self, a: Any) -> bool:
        """`a` is an array that views a traced tensor's storage (a reshaped index array, say)
        without being it: an op that gets it as a parameter would take it for a constant."""
        while isinstance(a, np.ndarray):
            t = self._storage.get(id(a))
            if t is not None and t._data is a:
                return True
            a = a.base
        return False

    def append(
        self, op: Any, args: tuple[Any, ...], params: dict[str, Any], result: Tensor
    ) -> None:
        if self.in_call:
            self.fail(f"op {op.name} ran inside backward() or an optimizer call")
        if (
            op.name == "batch_norm"
            and params.get("running_mean") is not None
            and params.get("training")
            and not self.in_batch_norm
        ):
            self.fail(
                "batch norm statistics are updated outside a tapegrad BatchNorm layer "
                "(whose bookkeeping a replay would not redo)"
            )
        ins = tuple(self.slot_of(a) for a in args)
        param_slots = self._param_slots(params) if params else {}
        out = self._slot_of[id(result)] = self._new_slot(OP, result)
        self._marked[id(result)] = (result, result._tapes & ~TRACING)
        self._storage.setdefault(id(result._data), result)
        node = result.grad_fn
        edges = tuple(e is not None for e in node.next) if node is not None else (False,) * len(ins)
        xp = _array_module(result)
        if xp is None:
            self.fail(f"op {op.name} ran on a {type(result._data).__name__}, not a NumPy array")
        self.instrs.append(Instr(op, ins, params, out, xp, node, edges, param_slots))

    def alias(self, source: Tensor, out: Tensor) -> None:
        """`out` shares `source`'s storage without any tape (`detach()`, `.data`): a slot of
        its own, filled by passing the array through, so the replay sees the fresh value."""
        ins = (self.slot_of(source),)
        slot = self._slot_of[id(out)] = self._new_slot(OP, out)
        self._marked[id(out)] = (out, out._tapes)
        out._tapes |= TRACING
        self.instrs.append(Instr(ALIAS, ins, {}, slot, _array_module(out), None, (False,)))

    def output_slot(self, t: Tensor) -> int:
        """A slot for `t`, an output of an opaque call the caller appends an instruction
        for (a custom Function's): later ops on `t` are traced."""
        slot = self._slot_of[id(t)] = self._new_slot(OP, t)
        self._marked[id(t)] = (t, t._tapes & ~TRACING)
        self._storage.setdefault(id(t._data), t)
        t._tapes |= TRACING
        return slot

    def apply_function(
        self,
        original: Callable[..., Any],
        cls: Any,
        ctx: Any,
        args: Sequence[Any],
        kwargs: dict[str, Any],
    ) -> Any:
        """A custom Function applied to traced tensors: one opaque call (`functions.py`).
        A trace for another purpose (ONNX export) overrides it."""
        from .functions import traced_apply

        return traced_apply(self, original, cls, ctx, args, kwargs)

    def effect_slot(self) -> int:
        """A slot for an effect pseudo-instruction (it produces nothing)."""
        return self._new_slot(CONST, None)

    def fail(self, why: str) -> None:
        if self.problem is None:
            self.problem = why

    def unmark_all(self) -> None:
        for t, _ in self._marked.values():
            t._tapes &= ~TRACING
        self._marked.clear()


HOOKS_REASON = "it registers tensor hooks or retain_grad() on tensors inside it"
INDEX_REASON = (
    "it indexes with a tensor it was given or computed (x[idx], x[mask], x[i] = v): the "
    "index becomes NumPy indices in the op's parameters, which a replay would take for "
    "constants"
)


def _index_noticed(original: Callable[..., Any]) -> Callable[..., Any]:
    """`ops.index.normalize_key` (every indexing entry turns tensor indices into arrays
    there): a traced tensor among the indices, or an array viewing one, stops the replay
    of this signature."""

    def normalize_key(key: Any, *args: Any, **kwargs: Any) -> Any:
        trace = hook.local.trace
        if trace is not None and not trace.in_call:
            for k in key if type(key) is tuple else (key,):
                if (isinstance(k, Tensor) and k._tapes & TRACING) or trace.derived(k):
                    trace.fail(INDEX_REASON)  # (derived: index_select's reshaped index)
        return original(key, *args, **kwargs)

    normalize_key.__doc__ = original.__doc__
    return normalize_key


def targets() -> list[PatchTarget]:
    """What `step.step_guard` patches for the trace (see `_index_noticed`)."""
    from ..ops import index

    return [(index, "normalize_key", _index_noticed)]


# ---------------------------------------------------------------- value reads
_READS = (
    "item",
    "tolist",
    "numpy",
    "asnumpy",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__array__",
)
_guard_lock = threading.Lock()
_guard_depth = 0
_originals: dict[str, Any] = {}


def _caller_line() -> str:
    """file:line of the first frame outside tapegrad (where fn read the value)."""
    import os

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    first = sys._getframe(2)
    frame: FrameType | None = first
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(here + os.sep):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return f"{first.f_code.co_filename}:{first.f_lineno}"


def _guarded(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def read(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        trace = hook.local.trace
        if (
            trace is not None
            and self._tapes & TRACING
            and trace.value_read is None
            and not trace.in_call
        ):
            trace.value_read = (
                f"it reads a tensor's value (.{name.strip('_')}()) at {_caller_line()}"
            )
        return original(self, *args, **kwargs)

    read.__name__ = name
    read.__doc__ = original.__doc__
    return read


def _detach_traced(original: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    def detach(self: Tensor) -> Tensor:
        out = original(self)
        trace = hook.local.trace
        if trace is not None and self._tapes & TRACING:
            trace.alias(self, out)
        return out

    detach.__doc__ = original.__doc__
    return detach


def _data_traced(original: property) -> property:
    fget = _getter(original)

    def data(self: Tensor) -> Any:
        out = fget(self)
        trace = hook.local.trace
        if trace is not None and self._tapes & TRACING:
            trace.alias(self, out)
        return out

    return property(data, original.fset, None, original.__doc__)


def _grad_read_noticed(original: property) -> property:
    fget = _getter(original)

    def grad(self: Tensor) -> Any:
        out = fget(self)
        trace = hook.local.trace
        if trace is not None and out is not None and not trace.in_call:
            trace.fail("it reads a .grad (a tensor that backward() replaces between calls)")
        return out

    return property(grad, original.fset, original.fdel, original.__doc__)


def _getter(p: property) -> Callable[[Any], Any]:
    if p.fget is None:
        raise TypeError(f"{p!r} has no getter")
    return p.fget


def _hook_noticed(original: Callable[..., Any]) -> Callable[..., Any]:
    """A hook registered on a leaf inside `fn` (an argument, a parameter) outlives the call:
    eager registers one more at every call, a replay none. (A hook on an intermediate is
    seen on its node when the trace ends.)"""

    def register(self: Tensor, fn: Callable[..., Any]) -> Any:
        trace = hook.local.trace
        if trace is not None and not trace.in_call and self.grad_fn is None:
            trace.fail(HOOKS_REASON)
        return original(self, fn)

    register.__name__ = original.__name__
    register.__doc__ = original.__doc__
    return register


class value_read_guard:
    """While entered (by any thread), Tensor's value-reading methods tell the trace,
    `detach()` and `.data` are traced as aliases, and a `.grad` read or a hook registered on
    a leaf stops the replay. (Patched on the class only while some thread
    traces: eager code never pays for it.)"""

    def __enter__(self) -> value_read_guard:
        global _guard_depth
        with _guard_lock:
            if _guard_depth == 0:
                for name in _READS:
                    original = Tensor.__dict__.get(name)
                    if original is not None:
                        _originals[name] = original
                        setattr(Tensor, name, _guarded(name, original))
                wrappers: tuple[tuple[str, Callable[[Any], Any]], ...] = (
                    ("register_hook", _hook_noticed),
                    ("register_post_accumulate_grad_hook", _hook_noticed),
                    ("detach", _detach_traced),
                    ("data", _data_traced),
                    ("grad", _grad_read_noticed),
                )
                for name, wrap in wrappers:
                    original = Tensor.__dict__[name]
                    _originals[name] = original
                    setattr(Tensor, name, wrap(original))
            _guard_depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        global _guard_depth
        with _guard_lock:
            _guard_depth -= 1
            if _guard_depth == 0:
                for name, original in _originals.items():
                    setattr(Tensor, name, original)
                _originals.clear()


def backward_order(instrs: list[Instr], roots: list[Node], own_mask: int = -1) -> list[Instr]:
    """The traced instructions with a node, in the order the eager engine would run their
    rules for a backward following tapes `own_mask` (so gradients are summed in the same
    order, bit for bit)."""
    from ..engine.backward import _order

    by_node = {id(i.node): i for i in instrs if i.node is not None}
    order, _, _ = _order(roots, own_mask, set())
    return [by_node[id(n)] for n in reversed(order) if n.op is not ACCUMULATE and id(n) in by_node]
