"""The one backward function every entry point calls (Tensor.backward, autograd.grad,
record-scope backward, GradManager.backward).

It walks the graph from the roots without recursion, orders the nodes once (a reverse
post-order is a topological order), then runs each node's rule when its turn comes: by
then every consumer has contributed its gradient. Gradients for leaves are collected and
written at the end, so an error half-way leaves every `.grad` as it was.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import collector
from .node import ACCUMULATE, FREED, OUT, OUT_ONLY, Array, Node, leaf_of, release_leaf
from .state import AMBIENT, FORWARD, RECORD, state

if TYPE_CHECKING:
    from ..tensor import Tensor

# Bound by tapegrad.ops at import, through `configure` (the engine is below the op table
# and `tensor.py` and must not import them). Used before that, they raise NameError.
TENSOR_NS: Any  # the tensor namespace `ops.xp.T`: rules run on it for a higher-order backward
_wrap: Callable[..., Tensor]  # tensor.py's `_wrap(array, tapes=0)`
_Tensor: type[Tensor]

_ndarray = np.ndarray
_write_lock = threading.Lock()  # leaves may be shared between threads running backward

Grad = Any  # a gradient: a backend array (first order) or a Tensor (create_graph)
Key = tuple[Node, int]  # where a tensor's gradient arrives: (node, output index)
Write = tuple["Tensor", Grad, bool]  # (tensor, gradient, is a leaf) applied at the end


def configure(tensor_ns: Any, wrap: Callable[..., Tensor], tensor_type: type[Tensor]) -> None:
    global TENSOR_NS, _wrap, _Tensor
    TENSOR_NS, _wrap, _Tensor = tensor_ns, wrap, tensor_type


def _freed_error(node: Node) -> RuntimeError:
    return RuntimeError(
        f"Trying to backward through the graph a second time (through {node.name()}), or to "
        "use saved values after backward freed them. Saved intermediate values are freed when "
        "you call .backward() or autograd.grad(); pass retain_graph=True to the first call if "
        "you need to backward through the graph again."
    )


SAVED_INPUT = -2  # a version check's index for a tensor saved that is not one of the inputs


def _version_error(node: Node, counter: list[int], expected: int, index: int) -> RuntimeError:
    which = (
        "its output"
        if index == -1
        else "a tensor it saved"
        if index == SAVED_INPUT
        else f"input {index}"
    )
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {which} of {node.name()} is at version {counter[0]}; expected version "
        f"{expected} instead. Hint: do the in-place change on a copy (.clone()), or out of "
        "place, or make it after backward."
    )


def _order(
    root_nodes: list[Node], own_mask: int, target_nodes: set[Node]
) -> tuple[list[Node], set[Node], int]:
    """Nodes reachable from the roots through nodes of the backward's tapes, children first."""
    seen: set[Node] = set()
    order: list[Node] = []
    tapes = 0
    for root in root_nodes:
        if root in seen:
            continue
        seen.add(root)
        # the parents being walked, each with its own edge iterator to resume
        stack: list[tuple[Node, Iterator[Node | None]]] = []
        node, children = root, iter(root.next)
        while True:
            for child in children:
                if child is None:
                    continue
                if child in seen or not (child.tapes & own_mask or child in target_nodes):
                    continue
                seen.add(child)
                stack.append((node, children))
                node, children = child, iter(child.next)
                break
            else:  # every edge of node done: it comes after its inputs
                order.append(node)
                if node.op is not ACCUMULATE:
                    tapes |= node.tapes
                if not stack:
                    break
                node, children = stack.pop()
    return order, seen, tapes


def _useful(order: list[Node], target_nodes: set[Node]) -> set[Node]:
    """Nodes from which some target can be reached (order is children first)."""
    useful: set[Node] = set()
    for node in order:
        if node in target_nodes or any(c is not None and c in useful for c in node.next):
            useful.add(node)
    return useful


def _add(a: Grad, b: Grad) -> Grad:
    return b if a is None else a + b


def run_backward(roots: Sequence[Tensor], head_grads: Sequence[Grad], **options: Any) -> Any:
    """Backpropagate (see `_run_backward`), with Python's cyclic garbage collector paused.

    The graph being consumed is large, live and freed as the backward goes: a collection in
    the middle would only re-scan it (and made a 10^5-op backward about twice as slow per
    op as a 10^4-op one). Nothing the backward creates needs the collector; cycles made by
    user hooks are collected once it is back on.
    """
    pause = gc.isenabled()
    if pause:
        gc.disable()
    try:
        # rules leave NaN/Inf in the gradients silently, as PyTorch (sqrt' at 0 is inf)
        with np.errstate(all="ignore"):
            return _run_backward(roots, head_grads, **options)
    finally:
        collector.thaw()  # what the recorder froze is collectable again (collector.py)
        if pause:
            gc.enable()


def _run_backward(
    roots: Sequence[Tensor],
    head_grads: Sequence[Grad],
    *,
    own_mask: int,
    retain_graph: bool = False,
    create_graph: bool = False,
    capture: Sequence[Tensor] | None = None,
    write_only: Sequence[Tensor] | None = None,
    force_add: bool = False,
    allow_unused: bool = False,
) -> list[Tensor | None] | None:
    """Backpropagate `head_grads` from `roots` (tensors with a graph, validated by the caller).

    own_mask: the tapes this backward follows and whose leaves it writes.
    capture: tensors whose gradients are returned (autograd.grad); `.grad` is left alone.
    write_only: tensors (`inputs=`) that are the only ones written.
    force_add: accumulate into `.grad` whatever the leaf's grad_req says (GradManager).
    """
    targets = capture if capture is not None else write_only
    target_keys: dict[Key, list[int]] = {}
    if targets is not None:
        for i, t in enumerate(targets):
            target_keys.setdefault(_key(t), []).append(i)
    target_nodes = {k[0] for k in target_keys}

    root_nodes: list[Node] = []
    buffers: dict[Node, Any] = {}  # gradient so far (n_out > 1: a list, one per output)
    head_ids: set[int] = set()
    for t, g in zip(roots, head_grads):
        node, nr = _key(t)
        root_nodes.append(node)
        head_ids.add(id(g))
        _deposit(buffers, node, nr, g)

    order, seen, graph_tapes = _order(root_nodes, own_mask, target_nodes)
    # a graph with dual nodes inside a dual level: run rules on tensors, so grads get tangents
    higher = create_graph or bool(
        state.active & graph_tapes & (~own_mask & ~(AMBIENT | RECORD) | FORWARD)
    )
    useful = _useful(order, target_nodes) if targets is not None else None
    captured: dict[Key, Grad] = {}
    writes: list[Write] = []
    anomaly = state.anomaly
    if targets is None and not higher and not anomaly:
        _first_order(order, buffers, seen, own_mask, retain_graph, writes)
        _apply_writes(writes, head_ids, higher, force_add)
        return None

    pop = buffers.pop
    for node in reversed(order):
        if useful is not None and node not in useful:
            continue
        g = pop(node, None)
        if g is None:
            continue
        if node.op is ACCUMULATE:
            leaf = leaf_of(node)
            if not retain_graph:
                release_leaf(node)
            if targets is not None and node in target_nodes:
                captured[node, 0] = g
                if capture is not None:
                    continue
            if leaf is not None and capture is None and leaf._tapes & own_mask:
                writes.append((leaf, g, True))
            continue
        metas = node.in_meta
        if metas is None:  # every input it has an edge to is shaped and typed as its output
            shape, dtype = g.shape, g.dtype  # (heads are validated)
        g_out = g  # a rule's gradient that is this array has that shape and dtype
        if node.extra is not None and (node.hooks or node.retained):
            g = _run_tensor_hooks(node, g, writes, capture is None)
        if target_nodes and node in target_nodes:
            for nr in range(node.n_out):
                if (node, nr) in target_keys:
                    gi = g if node.n_out == 1 else g[nr]
                    captured[node, nr] = gi
                    if capture is None and gi is not None:
                        assert targets is not None  # target_nodes come from targets
                        writes.append((targets[target_keys[node, nr][0]], gi, False))
        if not node.tapes & own_mask:
            continue  # a target snapshotted by this tape: its history is not ours to follow
        # the node's rule, inline (it runs once per node): first order on the saved arrays,
        # a recorded (higher-order) backward on tensors through the tensor namespace
        saved = node.saved
        if saved is FREED:
            raise _freed_error(node)
        checks = node.checks
        if checks:
            for counter, expected, index in checks:
                if counter[0] != expected:
                    raise _version_error(node, counter, expected, index)
        if higher:
            xp = TENSOR_NS
            g = _as_tensor(g)
            args: tuple[Any, ...] | list[Any] = [
                _rebuild_output(node) if s is OUT else s for s in saved
            ]
        else:
            xp = node.xp
            if type(g) is not _ndarray and isinstance(g, _Tensor):
                g = g._data
            if saved is OUT_ONLY:  # the recorder's tuple for an op that saves its output
                args = (node.out_data,)
            elif len(saved) == 1:
                s = saved[0]
                args = (node.out_data if s is OUT else (s._data if isinstance(s, _Tensor) else s),)
            elif saved:
                arg_list = []
                for s in saved:
                    arg_list.append(
                        node.out_data if s is OUT else (s._data if isinstance(s, _Tensor) else s)
                    )
                args = tuple(arg_list)
            else:
                args = ()
        op = node.op
        edges = node.next
        if op.wants_needs:  # which inputs get a gradient: the edges this backward follows
            needs: tuple[bool, ...]
            if useful is None and len(edges) == 2:
                e0, e1 = edges
                needs = (e0 is not None and e0 in seen, e1 is not None and e1 in seen)
            else:
                needs_list = []
                for c in edges:
                    needs_list.append(
                        c is not None and c in seen and (useful is None or c in useful)
                    )
                needs = tuple(needs_list)
            if node.params:
                grads = op.rule(xp, g, *args, needs=needs, **node.params)
            else:
                grads = op.rule(xp, g, *args, needs=needs)
        elif node.params:
            grads = op.rule(xp, g, *args, **node.params)
        else:
            grads = op.rule(xp, g, *args)
        if len(grads) != len(edges):
            raise _arity_error(node, grads)
        if saved and not retain_graph:
            node.saved = FREED
            node.out_data = None
        i = -1
        for gi, child in zip(grads, edges):
            i += 1
            if gi is None or child is None:
                continue
            if child not in seen or (useful is not None and child not in useful):
                continue
            if metas is not None:
                shape, dtype = metas[i]  # type: ignore[misc]  # None only without an edge
            if metas is not None or gi is not g_out:  # else passed through (add): as it came
                if gi.shape != shape:
                    gi = (TENSOR_NS if higher else node.xp).sum_to(gi, shape)
                gdt = gi.dtype
                if gdt is not dtype and gdt != dtype:
                    gi = gi.astype(dtype)
            if anomaly:
                _check_finite(node, i, gi)
            if child.n_out == 1:
                prev = buffers.get(child)
                buffers[child] = gi if prev is None else prev + gi
            else:
                nrs = node.next_nr
                _deposit(buffers, child, 0 if nrs is None else nrs[i], gi)

    if targets is not None and capture is not None:
        return _collect(capture, target_keys, captured, allow_unused, higher)
    _apply_writes(writes, head_ids, higher, force_add)
    return None


def _first_order(
    order: list[Node],
    buffers: dict[Node, Any],
    seen: set[Node],
    own_mask: int,
    retain_graph: bool,
    writes: list[Write],
) -> None:
    """`_run_backward`'s loop for its common case: a first-order backward through the whole
    graph (no `inputs=`, no `autograd.grad` targets, no anomaly mode). The same steps, less
    the tests this case never needs: the loop's own bookkeeping is most of a small op's
    backward (bench/NOTES.md, stop 24). tests/engine/test_backward_first_order.py runs random
    graphs through both loops."""
    pop = buffers.pop
    get = buffers.get
    for node in reversed(order):
        g = pop(node, None)
        if g is None:
            continue
        op = node.op
        if op is ACCUMULATE:
            leaf = leaf_of(node)
            if not retain_graph:
                release_leaf(node)
            if leaf is not None and leaf._tapes & own_mask:
                writes.append((leaf, g, True))
            continue
        g_out = g  # a rule's gradient that is this array has its shape and dtype
        if node.extra is not None and (node.hooks or node.retained):
            g = _run_tensor_hooks(node, g, writes, True)
        if not node.tapes & own_mask:
            continue
        saved = node.saved
        if saved is FREED:
            raise _freed_error(node)
        for counter, expected, index in node.checks:
            if counter[0] != expected:
                raise _version_error(node, counter, expected, index)
        if type(g) is not _ndarray and isinstance(g, _Tensor):
            g = g._data
        if saved is OUT_ONLY:
            args: tuple[Any, ...] = (node.out_data,)
        elif len(saved) == 1:
            s = saved[0]
            args = (node.out_data if s is OUT else (s._data if isinstance(s, _Tensor) else s),)
        elif saved:
            arg_list = []
            for s in saved:
                arg_list.append(
                    node.out_data if s is OUT else (s._data if isinstance(s, _Tensor) else s)
                )
            args = tuple(arg_list)
        else:
            args = ()
        edges = node.next
        if op.wants_needs:
            needs: tuple[bool, ...]
            if len(edges) == 2:
                e0, e1 = edges
                needs = (e0 is not None and e0 in seen, e1 is not None and e1 in seen)
            else:
                needs = tuple([c is not None and c in seen for c in edges])
            if node.params:
                grads = op.rule(node.xp, g, *args, needs=needs, **node.params)
            else:
                grads = op.rule(node.xp, g, *args, needs=needs)
        elif node.params:
            grads = op.rule(node.xp, g, *args, **node.params)
        else:
            grads = op.rule(node.xp, g, *args)
        if len(grads) != len(edges):
            raise _arity_error(node, grads)
        if saved and not retain_graph:
            node.saved = FREED
            node.out_data = None
        metas = node.in_meta
        if metas is None:  # every input it has an edge to is shaped and typed as its output
            shape, dtype = g_out.shape, g_out.dtype
        i = -1
        for gi, child in zip(grads, edges):
            i += 1
            if gi is None or child is None or child not in seen:
                continue
            if metas is not None:
                shape, dtype = metas[i]  # type: ignore[misc]  # None only without an edge
            if metas is not None or gi is not g_out:  # else passed through (add): as it came
                if gi.shape != shape:
                    gi = node.xp.sum_to(gi, shape)
                gdt = gi.dtype
                if gdt is not dtype and gdt != dtype:
                    gi = gi.astype(dtype)
            if child.n_out == 1:
                prev = get(child)
                buffers[child] = gi if prev is None else prev + gi
            else:
                nrs = node.next_nr
                _deposit(buffers, child, 0 if nrs is None else nrs[i], gi)


def _key(t: Tensor) -> Key:
    fn = t.grad_fn
    if fn is not None:
        return fn, t._out_nr
    from .node import accumulator

    return accumulator(t), 0


def _deposit(buffers: dict[Node, Any], node: Node, nr: int, g: Grad) -> None:
    if node.n_out == 1:
        prev = buffers.get(node)
        buffers[node] = g if prev is None else prev + g
    else:
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.n_out
        slots[nr] = _add(slots[nr], g)


def _arity_error(node: Node, grads: Sequence[Grad]) -> RuntimeError:
    return RuntimeError(
        f"{node.name()}: the derivative rule returned {len(grads)} gradients for "
        f"{len(node.next)} inputs"
    )


def _as_tensor(g: Any) -> Any:
    if isinstance(g, (list, tuple)):
        return tuple(None if x is None else _as_tensor(x) for x in g)
    return g if isinstance(g, _Tensor) else _wrap(np.asarray(g) if np.isscalar(g) else g)


def _rebuild_output(node: Node) -> Tensor:
    """A node's saved output as a tensor, for a rule run on tensors (a recorded backward)."""
    counter = node.out_counter
    assert counter is not None  # the recorder sets it whenever a node saves its output
    t = _wrap(node.out_data, node.tapes)
    t.grad_fn = node
    t._vc = counter
    observer = state.on_output_rebuilt
    if observer is not None:
        observer(node, t)
    return t


@contextlib.contextmanager
def observing_rebuilt_outputs(observer: Callable[[Node, Tensor], None]) -> Iterator[None]:
    """Inside the block, in this thread, `observer(node, tensor)` sees every saved output a
    recorded backward (`create_graph=True`, a `grad` inside a transform) rebuilds as a tensor.

    The engine's one hook for a tracer: `vmap` links the rebuilt tensor to the traced result
    it was saved from, so that `out > 0` in relu's rule is traced, not a constant. Only the
    recorded path consults it (a first-order backward passes the saved array and never
    rebuilds); the previous observer comes back on exit, so blocks nest.
    """
    before = state.on_output_rebuilt
    state.on_output_rebuilt = observer
    try:
        yield
    finally:
        state.on_output_rebuilt = before


def _run_tensor_hooks(node: Node, g: Grad, writes: list[Write], write: bool) -> Grad:
    """Hooks and retain_grad on a non-leaf's gradient, output by output."""
    slots = [g] if node.n_out == 1 else list(g)
    for nr in range(node.n_out):
        gi = slots[nr]
        if gi is None:
            continue
        for hook in list((node.hooks or {}).get(nr, {}).values()):
            new = hook(_as_tensor(gi))
            if new is not None:
                gi = new if isinstance(gi, _Tensor) else new._data
        slots[nr] = gi
        ref = (node.retained or {}).get(nr)
        t = ref() if ref is not None else None
        if t is not None and write:
            writes.append((t, gi, False))
    return slots[0] if node.n_out == 1 else slots


def _check_finite(node: Node, i: int, g: Grad) -> None:
    data = g._data if isinstance(g, _Tensor) else g
    # one test for arrays, NumPy scalars (0-d results) and CuPy arrays alike; NaN < inf is False
    if not bool((abs(data) < np.inf).all()):
        where = f"\nThe forward op was created at:\n{node.trace}" if node.trace else ""
        raise RuntimeError(
            f"Function '{node.name()}' returned nan or inf values in its {i}th output "
            f"(the gradient for its input {i}).{where}"
        )


def _collect(
    capture: Sequence[Tensor],
    target_keys: dict[Key, list[int]],
    captured: dict[Key, Grad],
    allow_unused: bool,
    higher: bool,
) -> list[Tensor | None]:
    out: list[Tensor | None] = []
    for i, t in enumerate(capture):
        g = captured.get(_key(t))
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}, shape {tuple(t.shape)}) appears "
                "to not have been used in the graph. Set allow_unused=True if this is the "
                "desired behavior."
            )
        if g is not None and not isinstance(g, _Tensor):
            g = _wrap(
                np.asarray(g) if not hasattr(g, "shape") or np.isscalar(g) else g,
                0,
                getattr(type(t), "_array_class", _Tensor),
            )  # tensor.array_class(t)
        out.append(g)
    return out


def _owned(arr: Array, head_ids: set[int], stored_ids: set[int]) -> Array:
    """An array safe to keep as `.grad`: not the caller's, not another leaf's, not a view
    (later in-place accumulation into it must not write anywhere else)."""
    if np.isscalar(arr) or isinstance(arr, np.generic):
        arr = np.asarray(arr)  # a fresh 0-d array
    elif arr.base is not None or id(arr) in head_ids or id(arr) in stored_ids:
        arr = arr.copy()
    stored_ids.add(id(arr))
    return arr


def _apply_writes(writes: list[Write], head_ids: set[int], higher: bool, force_add: bool) -> None:
    """Hooks first (they may replace gradients), then every write under one lock, then the
    post-accumulate hooks: a hook that raises leaves every `.grad` as it was."""
    final: list[tuple[Tensor, Grad, str]] = []
    for t, g, is_leaf in writes:
        if is_leaf and t._hooks:
            for hook in list(t._hooks.values()):
                new = hook(_as_tensor(g))
                if new is not None:
                    g = new if higher else new._data
                    head_ids.add(id(g))  # the hook's array is the caller's: never keep it
        req = "add" if force_add or not is_leaf else t._grad_req
        if req != "null":
            final.append((t, g, req))
    stored_ids: set[int] = set()
    with _write_lock:
        for t, g, req in final:
            if not higher and isinstance(g, _Tensor):
                g = g._data
            accumulate_grad(t, g if higher else _owned(g, head_ids, stored_ids), req)
    for t, _, _ in final:
        if t._post_hooks and t.grad_fn is None:
            for hook in list(t._post_hooks.values()):
                hook(t)


def accumulate_grad(t: Tensor, g: Grad, req: str = "add") -> None:
    """Write (`req="write"`) or add (`"add"`) gradient `g` into `t.grad`.

    `g` is an array the caller owns (it may be kept as `.grad` and later added into in
    place), or a Tensor that may carry a graph (create_graph / an outer GradManager), which
    is kept as it is so the gradient stays differentiable. Call it under `_write_lock`.
    """
    old = t._grad
    if isinstance(g, _Tensor):
        t._grad = g if (old is None or req == "write") else TENSOR_NS.add(old, g)
        return
    if (
        req == "write"
        and old is not None
        and old.grad_fn is None
        and old._data.shape == t.shape
        and getattr(getattr(old._data, "flags", None), "writeable", True)
    ):
        # MXNet's "write": the values go INTO the buffer (the one given to mark_variables,
        # or a `g = x.grad` saved earlier sees them); a version bump marks the write
        old._data[...] = g
        old._vc[0] += 1
        return
    if old is None or req == "write" or old.grad_fn is not None:
        arr = g if (old is None or req == "write") else old._data + g
        if isinstance(arr, np.generic):  # 0-d arithmetic gives a NumPy scalar
            arr = np.asarray(arr)
        if arr.shape != t.shape:
            arr = arr.reshape(t.shape)
        if type(arr) is np.ndarray and not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr)  # a row-major .grad, as PyTorch's: .grad.view(-1)
        # tensor.array_class(t), inlined (the engine does not import tensor): a facade
        # array's gradient has its array type
        t._grad = _wrap(arr, 0, getattr(type(t), "_array_class", _Tensor))
    else:
        old._data += g
