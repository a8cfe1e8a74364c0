"""`vmap`'s fast path: trace the function on one sample, replay the trace on the whole batch.

The function runs once, on sample 0, under `tg.compile`'s tracer (compile/tracing.py), in a
transform scope so that a `grad` inside records its backward as ops too. Each traced op is
then run once on the batch by its batching rule (func/batching.py), on arrays, with no graph.
`run_traced_batched` returns a `Fallback` (run per sample; the traced run counts as the
first sample's, so `func` runs once per sample as before) whenever the replay would not give
exactly what the per-sample loop gives: an op that can't be batched (or a call its rule
declines), a value read (control flow may differ per sample), random numbers drawn (unless
every sample draws the same), an in-place change or a `.grad` written, an input or captured
tensor that a tape outside tracks (the replay records nothing), a result of an unexpected
shape.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import random as _random
from ..engine.backward import observing_rebuilt_outputs
from ..engine.state import FORWARD, state
from ..tensor import Tensor, _wrap
from . import batching_nn  # noqa: F401  (registers the conv, pooling and norm rules)
from ._tree import flatten, unflatten
from .batching import RULES, has_rule, run_batched

if TYPE_CHECKING:
    from ..compile.tracing import Trace
    from ..engine.node import Node
    from ._tree import Spec
    from .vmap import Dims

# a slot's value in the replay: (its array, whether it is batched)
Value = Callable[[int], tuple[Any, bool]]

_active = threading.local()  # the trace this thread's vmap is building


def _link_rebuilt_output(trace: Trace) -> Callable[[Node, Tensor], None]:
    """The engine's rebuilt-output observer for `trace`: a backward rule's saved output,
    rebuilt as a tensor while vmap traces, is the traced result it was saved from (so
    `out > 0` in relu's rule is traced, not a constant)."""

    from ..compile.tracing import EXTERNAL

    def observe(node: Node, t: Tensor) -> None:
        source = trace._storage.get(id(node.out_data))
        slot = None if source is None else trace._slot_of.get(id(source))
        # an output saved from a captured value (a vjp_fn's graph, recorded before the
        # trace) is a constant of the replay as that value is: left untraced (marked, a
        # dual one of forward AD would stop the trace)
        if slot is not None and trace.kinds[slot] != EXTERNAL:
            trace._slot_of[id(t)] = slot
            trace.mark(t)

    return observe


class Fallback:
    """ "Run the function once per sample instead": `first` is the traced run's result for
    sample 0, which the loop reuses (so `func` still runs exactly once per sample), and
    `rng_start` the generator's state before that run."""

    def __init__(
        self, why: str, first: Any = None, rng_start: Any = None, nested: bool = False
    ) -> None:
        self.why = why
        self.first = first
        self.rng_start = rng_start
        self.nested = nested  # run the other samples inside `nested_transforms()` too
        _active.why = why


@contextlib.contextmanager
def graph_unneeded() -> Iterator[None]:
    """The next `vmap` call of this thread (that one only, not one inside its function)
    need not keep a graph for the reverse tapes outside: its caller detaches the result
    (a top-level jacrev/jacfwd). A captured tensor that requires grad then lets it batch."""
    _active.graph_unneeded = True
    try:
        yield
    finally:
        _active.graph_unneeded = False


def fallback_reason() -> str | None:
    """Why this thread's last `vmap` call ran per sample (None: it ran batched)."""
    return getattr(_active, "why", None)


def looped_ops() -> list[str]:
    """The ops this thread's last batched `vmap` ran by looping their forward (no rule)."""
    return list(getattr(_active, "looped", []))


def _sample(leaf: Tensor, d: int) -> Tensor:
    return leaf[(slice(None),) * (d % leaf.ndim) + (0,)]


@contextlib.contextmanager
def nested_transforms() -> Iterator[None]:
    """Count as one more transform level, as vmap does while it traces: a `grad` inside then
    records its backward (as ops, which the trace sees) and its result stays differentiable,
    the way a transform inside another one behaves."""
    from .grad import _nesting

    _nesting.depth = getattr(_nesting, "depth", 0) + 1
    try:
        yield
    finally:
        _nesting.depth -= 1


def _detached(out: Any) -> Any:
    leaves, spec = flatten(out)
    return unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


def run_traced_batched(
    func: Callable[..., Any],
    leaves: list[Any],
    dims: list[int | None],
    spec: Spec,
    size: int,
    out_dims: Dims,
    randomness: str,
    kwargs: dict[str, Any],
) -> Any:
    """`func` mapped over the batch in one batched run, or a `Fallback`."""
    from ..compile import hook
    from ..compile.tracing import Trace, value_read_guard

    unneeded = getattr(_active, "graph_unneeded", False)
    _active.graph_unneeded = False  # for this call only: a vmap inside func asks again
    if hook.local.trace is not None:  # inside tg.compile's (or another vmap's) trace
        return Fallback("inside another trace")
    outer = state.active & FORWARD if unneeded else state.active
    for leaf in leaves:
        if isinstance(leaf, Tensor) and (leaf._tapes & outer or type(leaf._data) is not np.ndarray):
            return Fallback("an input is tracked by a tape outside, or not a NumPy array")
    _active.why = None
    _active.looped = []
    trace = Trace()
    trace.per_sample_values = True  # type: ignore[attr-defined]  # (ops/registry.py)
    samples: list[Any] = []
    batched: dict[int, Any] = {}  # slot -> the input's array, batch dimension first
    for pos, (leaf, d) in enumerate(zip(leaves, dims, strict=True)):
        if d is None:  # an argument slot too, so `detach()` on it (grad does) is traced
            if isinstance(leaf, Tensor):
                trace.add_arg(leaf, pos)
            samples.append(leaf)
            continue
        s = _sample(leaf, d)
        samples.append(s)
        batched[trace.add_arg(s, pos)] = np.moveaxis(leaf._data, d, 0)
    rng = _random.generator().bit_generator
    start = rng.state
    hook.local.trace = trace
    try:
        with (
            value_read_guard(),
            observing_rebuilt_outputs(_link_rebuilt_output(trace)),
            nested_transforms(),
        ):
            out = func(*unflatten(samples, spec), **kwargs)
    except Exception as e:  # the per-sample loop raises it again, with the user's own traceback
        rng.state = start
        return Fallback(f"{type(e).__name__} on the first sample")
    finally:
        hook.local.trace = None
        trace.unmark_all()
    why, captured = _why_not_batched(trace, rng.state != start, randomness, outer)
    if why is None:
        result = _replay(trace, batched, size, out, out_dims, func)
        if not isinstance(result, str):
            _active.why = None  # (a vmap nested inside func fell back, this one did not)
            return result
        why = result
    # the traced run was a real run of func on sample 0: the loop reuses it (func's effects
    # happen once per sample). Where a tape outside tracks a captured tensor, the graph of
    # the result matters: the loop runs the other samples one transform level deeper too,
    # like the traced one; otherwise nothing outside can tell, and a plain loop is faster.
    # A result tracked outside without a traced capture (a captured dual tensor of forward
    # AD: its ops run untraced) keeps its graph and tangent the same way.
    keep = captured or any(
        isinstance(leaf, Tensor) and leaf._tapes & outer & FORWARD for leaf in flatten(out)[0]
    )
    return Fallback(why, out if keep else _detached(out), start, nested=keep)


def _why_not_batched(
    trace: Trace, drew_random: bool, randomness: str, outer: int
) -> tuple[str | None, bool]:
    """(why the trace can't be replayed batched or None, whether a tape outside tracks a
    tensor func captured)."""
    from ..compile.tracing import EXTERNAL

    graphs = _OuterGraphs(outer)
    captured = any(
        kind == EXTERNAL and graphs.needed(trace.values[slot])
        for slot, kind in enumerate(trace.kinds)
    )
    if captured:
        return "a captured tensor is tracked by a tape outside", True
    if drew_random and randomness != "same":
        return "random numbers drawn", False
    for slot, v in enumerate(trace.values):  # an in-place change the replay wouldn't redo
        if isinstance(v, Tensor) and v._version != trace.versions[slot]:
            return f"a tensor of shape {tuple(v.shape)} changed in place", False
    for t, g, _ in trace.external_grads:  # a backward() inside wrote a .grad
        if t._grad is not g:
            return "a .grad was written", False
    if trace.problem or trace.value_read:
        return trace.value_read or trace.problem, False
    for i in trace.instrs:
        if not has_rule(i.op.name):
            return f"op {i.op.name} has no batching rule and can't be looped", False
    traced_nodes: set[int] | None = None  # the graph nodes the traced ops made
    clean: set[int] = set()  # nodes found to lead to no traced one
    for slot, kind in enumerate(trace.kinds):
        v = trace.values[slot]
        if kind != EXTERNAL:
            continue
        if type(v._data) is not np.ndarray:
            return "a tensor that is not a NumPy array reached an op", False
        if v.grad_fn is not None:
            # a value with a graph is a constant of the replay (a vjp_fn's saved tensor, a
            # saved output rebuilt, an op on those) unless it came from a traced value by
            # a way around the tracer (a custom Function's output): that one is sample 0's
            if traced_nodes is None:
                traced_nodes = _traced_nodes(trace)
            if _reaches(v.grad_fn, traced_nodes, clean):
                return (
                    "a tensor with a graph that tapegrad's op table did not make (a custom "
                    "Function's output) reached an op",
                    False,
                )
    return None, False


def _traced_nodes(trace: Trace) -> set[int]:
    """The ids of the graph nodes of the traced ops, and of the accumulators of the traced
    leaves (a `grad`'s fresh input)."""
    from ..engine.node import Node

    found = {id(i.node) for i in trace.instrs if i.node is not None}
    for t, _ in trace._marked.values():
        ref = getattr(t, "_accum", None)
        acc = ref() if ref is not None else None
        if isinstance(acc, Node):
            found.add(id(acc))
    return found


def _reaches(node: Node, targets: set[int], clean: set[int]) -> bool:
    """Whether the graph behind `node` has a node in `targets` (`clean`: nodes known not
    to, extended as found)."""
    stack: list[Node | None] = [node]
    while stack:
        n = stack.pop()
        if n is None or id(n) in clean:
            continue
        if id(n) in targets:
            return True
        clean.add(id(n))  # (no use once a target is found: the caller stops)
        stack.extend(n.next)
    return False


class _OuterGraphs:
    """Which captured tensors need their graph kept for a tape outside the vmap.

    The replay records no graph, so the per-sample loop runs where one is needed: a tape
    outside tracks the tensor (forward AD's, or a graph to a leaf someone outside may ask a
    gradient for). A graph that leads only to the fresh leaves of transform calls that have
    returned (the graph a `vjp` recorded for its `vjp_fn`: jacrev's `vmap(vjp_fn)`) is
    nobody else's: no one outside holds those leaves, so the replay's constant stands.
    """

    def __init__(self, outer: int) -> None:
        self.outer = outer
        self.seen: set[int] = set()  # nodes whose leaves are all private

    def needed(self, t: Tensor) -> bool:
        from ..engine.node import ACCUMULATE, leaf_of
        from .grad import is_private_leaf

        tapes = t._tapes & self.outer
        if not tapes:
            return False
        if tapes & FORWARD:
            return True
        if t.grad_fn is None:
            return not is_private_leaf(t)
        stack: list[Node | None] = [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in self.seen:
                continue
            self.seen.add(id(node))
            if node.op is ACCUMULATE:
                # a freed leaf no one can ask a gradient for; one a tape outside doesn't
                # track (forward AD's own) nobody outside differentiates against
                leaf = leaf_of(node)
                if leaf is not None and leaf._tapes & self.outer and not is_private_leaf(leaf):
                    return True
                continue
            stack.extend(node.next)
        return False


def _replay(
    trace: Trace,
    batched: dict[int, Any],
    size: int,
    out: Any,
    out_dims: Dims,
    func: Callable[..., Any],
) -> Any:
    """The batched result, or a string saying why not."""
    values = {slot: (arr, True) for slot, arr in batched.items()}

    def value(slot: int) -> tuple[Any, bool]:
        got = values.get(slot)
        if got is not None:
            return got
        v = trace.values[slot]
        return (v._data if isinstance(v, Tensor) else v), False

    for instr in trace.instrs:
        why = _array_parameter(trace, instr, value)
        if why is not None:
            return why
        args = [value(s) for s in instr.ins]
        # an array parameter that is a traced tensor's storage (batch norm's running
        # statistics passed to functional_call as buffers): shared, it is the very array the
        # params hold; per sample, the op would need it batched
        if any(value(s)[1] for s in instr.param_slots.values()):
            return f"op {instr.op.name} reads a batched tensor as a parameter"
        if not any(b for _, b in args):
            continue  # the same for every sample: the traced value stands
        expected = trace.values[instr.out]._data
        if instr.op.name not in RULES:
            _active.looped.append(instr.op.name)
        try:
            result = np.asarray(
                run_batched(
                    instr.op,
                    instr.xp,
                    [a for a, _ in args],
                    [b for _, b in args],
                    instr.params,
                    size,
                )
            )
        except Exception as e:  # a rule that declines (NoRule) or can't cope: the loop is exact
            return f"{instr.op.name}: {e}"
        if result.shape != (size,) + expected.shape:
            return f"{instr.op.name}'s rule gave shape {result.shape}"
        if result.dtype != expected.dtype:
            result = result.astype(expected.dtype)
        values[instr.out] = (result, True)
    return _outputs(trace, value, size, out, out_dims, list(batched.values()), func)


def _arrays_in(params: Any) -> Iterator[Any]:
    """The NumPy arrays among an op's parameters, nested in tuples/lists/dicts (an index
    key) too."""
    if isinstance(params, np.ndarray):
        yield params
    elif isinstance(params, (tuple, list)):
        for p in params:
            yield from _arrays_in(p)
    elif isinstance(params, dict):
        for p in params.values():
            yield from _arrays_in(p)


# ops whose array parameter may be computed from a traced tensor's raw array outside the op
# table (sort, topk, kthvalue, median and mode gather with indices from the values' order):
# an array of unknown origin there is sample 0's, not a constant
_DERIVED_INDICES = frozenset(("take_along_axis",))


def _array_parameter(trace: Trace, instr: Any, value: Value) -> str | None:
    """Why an op's array parameter stops the replay, or None. The replay passes the traced
    call's parameters to every sample, so an array among them must be one value for all.
    The storage of a batched traced tensor inside an indexing key (`x[i]` with `i` mapped),
    or indices computed from a sample's values (`sort`), would be sample 0's."""
    for arr in _arrays_in(instr.params):
        owner = trace._storage.get(id(arr))
        slot = None if owner is None else trace._slot_of.get(id(owner))
        if slot is None and arr.size > 1:  # a view of a traced array (`index.reshape(-1)`)
            slot = _sharing_slot(trace, arr)
        if slot is not None and value(slot)[1]:
            return f"op {instr.op.name} reads a batched tensor as a parameter"
        if slot is None and instr.op.name in _DERIVED_INDICES:
            return (
                f"op {instr.op.name} takes indices computed outside the op table (from a "
                "sample's values: sort, topk)"
            )
    return None


def _sharing_slot(trace: Trace, arr: Any) -> int | None:
    """The slot of a traced tensor whose array `arr` is a view of, or None."""
    for t in trace._storage.values():
        if np.may_share_memory(arr, t._data):
            return trace._slot_of.get(id(t))
    return None


def _outputs(
    trace: Trace,
    value: Value,
    size: int,
    out: Any,
    out_dims: Dims,
    inputs: list[Any],
    func: Callable[..., Any],
) -> Any:
    leaves, spec = flatten(out)
    odims: list[Any]
    if isinstance(out_dims, int) or out_dims is None:
        odims = [out_dims] * len(leaves)
    else:
        odims = flatten(out_dims)[0]
        if len(odims) != len(leaves):
            return "out_dims do not match the outputs"  # the loop raises the error
    results: list[Any] = []
    for k, (t, d) in enumerate(zip(leaves, odims, strict=True)):
        if not isinstance(t, Tensor) or (d is not None and not -(t.ndim + 1) <= d <= t.ndim):
            return "an output is not a tensor, or out_dims is out of range"
        slot = trace._slot_of.get(id(t))
        if slot is not None:
            arr, is_batched = value(slot)
        elif id(t._data) not in trace._storage:  # made from no traced value: one for all
            arr, is_batched = t._data, False
        else:
            return "an output shares a traced tensor's memory untraced"
        if d is None:
            if is_batched:
                from .vmap import _batched_out_dim_none

                _batched_out_dim_none(func, k)
            results.append(t)
            continue
        if not is_batched:
            arr = np.broadcast_to(arr[None], (size,) + arr.shape)
        if d != 0:
            arr = np.moveaxis(arr, 0, d)
        # fresh memory, as stacking gives: copy a broadcast, or a view of an input
        if not arr.flags.writeable or any(np.may_share_memory(arr, b) for b in inputs):
            arr = arr.copy()
        results.append(_wrap(arr, 0, type(t)))
    return unflatten(results, spec)
