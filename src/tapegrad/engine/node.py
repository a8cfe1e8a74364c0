"""Graph nodes: what one recorded op keeps for its backward, and the leaf accumulators.

A Node never holds its own output tensor (output -> grad_fn -> output would be a reference
cycle that only the garbage collector frees). It keeps the output's *array* and version
counter instead, and rebuilds a tensor when a higher-order backward needs one.
"""
from __future__ import annotations

import itertools
import threading
import weakref

# marks "the op's output" inside Node.saved
OUT = object()
# Node.saved after backward freed it
FREED = object()


class Node:
    """One recorded op. Public face: `grad_fn` of a tensor (`name()`, `next_functions`)."""

    __slots__ = (
        "op", "params", "saved", "checks", "next", "in_meta", "tapes", "xp",
        "out_data", "out_counter", "n_out", "hooks", "retained", "trace", "__weakref__",
    )

    def __init__(self, op, params, saved, checks, nxt, in_meta, tapes, xp, n_out=1):
        self.op = op
        self.params = params
        self.saved = saved  # tuple: input Tensors, constants, or OUT
        self.checks = checks  # tuple of (version counter, version when saved, index) to verify
        self.next = nxt  # per input: (Node, output index) or None for a constant
        self.in_meta = in_meta  # per input: (shape, dtype) or None for a constant
        self.tapes = tapes
        self.xp = xp  # array namespace the forward ran on
        self.out_data = None
        self.out_counter = None  # the output's version counter (Tensor._vc)
        self.n_out = n_out
        self.hooks = None  # {output index: {handle id: hook}} from Tensor.register_hook
        self.retained = None  # {output index: weakref to tensor} from retain_grad()
        self.trace = None  # creation traceback, in anomaly mode

    # --- the PyTorch-style grad_fn interface ---------------------------------------
    def name(self) -> str:
        return self.op.backward_name

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else e for e in self.next)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def add_tensor_hook(self, index: int, hook) -> RemovableHandle:
        """Run `hook(grad)` on the gradient of output `index`; returns its handle."""
        if self.hooks is None:
            self.hooks = {}
        return RemovableHandle(self.hooks.setdefault(index, {}), hook)


class _Accumulate:
    backward_name = "AccumulateGrad"


ACCUMULATE = _Accumulate()
ALL_TAPES = -1  # an accumulator passes every tape filter; the leaf's own mask decides


_accum_lock = threading.Lock()


def accumulator(leaf) -> Node:
    """The AccumulateGrad node of a leaf, made once and cached on the leaf.

    Thread-safe: graphs built at once in several threads from a fresh leaf must all end
    in the *same* node, or a backward that looks for the leaf (`inputs=`, `autograd.grad`)
    misses the gradients that reached the other one. The lock is taken only while the
    node does not exist yet, so the common path stays one attribute read.
    """
    node = leaf._accum
    if node is None:
        with _accum_lock:
            node = leaf._accum  # another thread may have made it while we waited
            if node is None:
                node = Node(ACCUMULATE, None, (weakref.ref(leaf),), (), (), (), ALL_TAPES, None)
                leaf._accum = node
    return node


def leaf_of(node: Node):
    """The live leaf tensor of an AccumulateGrad node, or None."""
    return node.saved[0]()


_handle_ids = itertools.count()  # next() on a count is atomic under the GIL


class RemovableHandle:
    """Returned by register_hook; `remove()` takes the hook out again.

    The hook is stored in `table` under this handle's own id, so `remove()` takes out
    exactly this registration: the same function registered twice has two handles, and
    removing one of them (once or twice, harmless as in PyTorch) leaves the other.
    """

    __slots__ = ("_table", "id")

    def __init__(self, table: dict, hook) -> None:
        self.id = next(_handle_ids)
        self._table = table
        table[self.id] = hook

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
