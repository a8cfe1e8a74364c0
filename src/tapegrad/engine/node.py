"""Graph nodes: what one recorded op keeps for its backward, and the leaf accumulators.

A Node never holds its own output tensor (output -> grad_fn -> output would be a reference
cycle that only the garbage collector frees). It keeps the output's *array* and version
counter instead, and rebuilds a tensor when a higher-order backward needs one.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..tensor import Tensor

# What the engine's types mean (aliases for readers and for mypy; nothing checks them at run
# time). Arrays are NumPy's or CuPy's: `Any`, as the engine never looks inside one.
Array = Any
# An edge is the input's Node itself, in Node.next (None: no edge); Node.next_nr has the
# output indices only when one of them is not 0. Most edges lead to a one-output node, and a
# (node, 0) pair per edge was a tuple to allocate, free and let the collector scan per op.
InputMeta = tuple[tuple[int, ...], Any]  # an input's (shape, dtype)
VersionCheck = tuple[list[int], int, int]  # (version counter, version when saved, input index)
TensorHook = Callable[["Tensor"], Optional["Tensor"]]
PostAccumulateHook = Callable[["Tensor"], None]
Hook = TensorHook | PostAccumulateHook

# marks "the op's output" inside Node.saved
OUT = object()
OUT_ONLY = (OUT,)  # Node.saved of every op that saves its output alone (shared, never changed)
# Node.saved after backward freed it
FREED = object()


class _Extras:
    """What few nodes have: hooks, retained gradients, a creation traceback."""

    __slots__ = ("hooks", "retained", "trace")

    def __init__(self) -> None:
        # {output index: {handle id: hook}} from Tensor.register_hook
        self.hooks: dict[int, dict[int, Hook]] | None = None
        # {output index: weakref to tensor} from retain_grad()
        self.retained: dict[int, weakref.ReferenceType[Tensor]] | None = None
        self.trace: str | None = None  # creation traceback, in anomaly mode


class Node:
    """One recorded op. Public face: `grad_fn` of a tensor (`name()`, `next_functions`)."""

    # `extra` holds what few nodes have (hooks, retained gradients, a traceback; None until
    # the first is set): a recorded op stores two fields fewer, and backward tests one
    __slots__ = (
        "op",
        "params",
        "saved",
        "checks",
        "next",
        "next_nr",
        "in_meta",
        "tapes",
        "xp",
        "out_data",
        "out_counter",
        "n_out",
        "extra",
        "__weakref__",
    )

    def __init__(
        self,
        op: Any,
        params: Any,
        saved: Any,
        checks: tuple[VersionCheck, ...],
        nxt: tuple[Node | None, ...],
        in_meta: tuple[InputMeta | None, ...] | None,
        tapes: int,
        xp: Any,
        n_out: int = 1,
    ) -> None:
        self.op = op  # an ops.registry.Op, a custom Function's op, or ACCUMULATE
        self.params = params  # the op's keyword parameters, passed to its rule
        # input Tensors, constants, or OUT; FREED after backward; (leaf,) for an ACCUMULATE
        self.saved = saved
        self.checks = checks  # versions to verify before the rule runs
        self.next = nxt  # per input: the Node that made it, or None (a constant, untracked)
        # per input: which output of that node it is; None when all are output 0
        self.next_nr: tuple[int, ...] | None = None
        # per input: (shape, dtype), None where there is no edge; None for the whole tuple when
        # every input with an edge is shaped and typed as the output (recorder.py)
        self.in_meta = in_meta
        self.tapes = tapes
        self.xp = xp  # array namespace the forward ran on
        self.out_data: Array = None
        self.out_counter: list[int] | None = None  # the output's version counter (Tensor._vc)
        self.n_out = n_out
        self.extra: _Extras | None = None

    def _extras(self) -> _Extras:
        extra = self.extra
        if extra is None:
            extra = self.extra = _Extras()
        return extra

    @property
    def hooks(self) -> dict[int, dict[int, Hook]] | None:
        """{output index: {handle id: hook}} from Tensor.register_hook, or None."""
        return None if self.extra is None else self.extra.hooks

    @hooks.setter
    def hooks(self, value: dict[int, dict[int, Hook]] | None) -> None:
        self._extras().hooks = value

    @property
    def retained(self) -> dict[int, weakref.ReferenceType[Tensor]] | None:
        """{output index: weakref to the tensor} from retain_grad(), or None."""
        return None if self.extra is None else self.extra.retained

    @retained.setter
    def retained(self, value: dict[int, weakref.ReferenceType[Tensor]] | None) -> None:
        self._extras().retained = value

    @property
    def trace(self) -> str | None:
        """Where the op was recorded (a formatted stack), in anomaly mode; else None."""
        return None if self.extra is None else self.extra.trace

    @trace.setter
    def trace(self, value: str | None) -> None:
        self._extras().trace = value

    # --- the PyTorch-style grad_fn interface ---------------------------------------
    def name(self) -> str:
        name: str = self.op.backward_name
        return name

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        nrs = self.next_nr or (0,) * len(self.next)
        return tuple(zip(self.next, nrs))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def add_tensor_hook(self, index: int, hook: TensorHook) -> RemovableHandle:
        """Run `hook(grad)` on the gradient of output `index`; returns its handle."""
        if self.hooks is None:
            self.hooks = {}
        return RemovableHandle(self.hooks.setdefault(index, {}), hook)


class _Accumulate:
    backward_name = "AccumulateGrad"


ACCUMULATE = _Accumulate()
ALL_TAPES = -1  # an accumulator passes every tape filter; the leaf's own mask decides


_accum_lock = threading.Lock()


def accumulator(leaf: Tensor) -> Node:
    """The AccumulateGrad node of a leaf: the one alive while any graph holds it, or a new one.

    As in PyTorch, the node holds its leaf until a backward has gone through it (a graph
    keeps its leaves alive: a hook on a leaf nothing else references still runs), and the
    leaf holds the node weakly (no cycle: the node goes with the last graph through it, and
    the next graph gets a fresh one). A backward that frees the graph's saved values lets go
    of the leaf too (`release_leaf`): MegEngine frees a tensor attached for one step once
    the step is done, even while its result lives on.

    Thread-safe: graphs built at once in several threads from a fresh leaf must all end
    in the *same* node, or a backward that looks for the leaf (`inputs=`, `autograd.grad`)
    misses the gradients that reached the other one. The lock is taken only while the
    node does not exist yet, so the common path stays two attribute reads and a call.
    """
    ref = leaf._accum
    node = ref() if ref is not None else None
    if node is None:
        with _accum_lock:
            ref = leaf._accum  # another thread may have made it while we waited
            node = ref() if ref is not None else None
            if node is None:
                node = Node(ACCUMULATE, None, (leaf,), (), (), (), ALL_TAPES, None)
                leaf._accum = weakref.ref(node)
    return node


def leaf_of(node: Node) -> Tensor | None:
    """The leaf tensor of an AccumulateGrad node; None once released and freed."""
    leaf = node.saved[0]
    if type(leaf) is weakref.ReferenceType:
        leaf = leaf()
    return leaf  # type: ignore[no-any-return]


def release_leaf(node: Node) -> None:
    """Hold an AccumulateGrad node's leaf weakly from now on (after a freeing backward).

    Not a leaf with hooks: another graph may still go through this node (built before the
    backward), and there its hooks must run, as in PyTorch; without hooks nothing can tell
    a leaf nobody else holds is gone."""
    leaf = node.saved[0]
    if type(leaf) is not weakref.ReferenceType and not (leaf._hooks or leaf._post_hooks):
        node.saved = (weakref.ref(leaf),)


def hold_leaf(leaf: Tensor) -> None:
    """Hold `leaf` strongly again in its AccumulateGrad node, if one is alive and lets go of
    it (`release_leaf`): a hook was just registered on it."""
    ref = leaf._accum
    node = ref() if type(ref) is weakref.ReferenceType else None
    if node is not None:
        held = node.saved[0]
        if type(held) is weakref.ReferenceType and held() is leaf:
            node.saved = (leaf,)


_handle_ids = itertools.count()  # next() on a count is atomic under the GIL


class RemovableHandle:
    """Returned by register_hook; `remove()` takes the hook out again.

    The hook is stored in `table` under this handle's own id, so `remove()` takes out
    exactly this registration: the same function registered twice has two handles, and
    removing one of them (once or twice, harmless as in PyTorch) leaves the other.
    """

    __slots__ = ("_table", "id")

    def __init__(self, table: dict[int, Any], hook: Hook) -> None:
        self.id = next(_handle_ids)
        self._table = table
        table[self.id] = hook

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
