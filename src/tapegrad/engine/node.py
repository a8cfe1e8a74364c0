"""Graph nodes: what one recorded op keeps for its backward, and the leaf accumulators.

A Node never holds its own output tensor (output -> grad_fn -> output would be a reference
cycle that only the garbage collector frees). It keeps the output's *array* and version
counter instead, and rebuilds a tensor when a higher-order backward needs one.
"""
from __future__ import annotations

import contextlib
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
        self.hooks = None  # {output index: [hook, ...]} from Tensor.register_hook
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

    def add_tensor_hook(self, index: int, hook) -> None:
        if self.hooks is None:
            self.hooks = {}
        self.hooks.setdefault(index, []).append(hook)


class _Accumulate:
    backward_name = "AccumulateGrad"


ACCUMULATE = _Accumulate()
ALL_TAPES = -1  # an accumulator passes every tape filter; the leaf's own mask decides


def accumulator(leaf) -> Node:
    """The AccumulateGrad node of a leaf, made once and cached on the leaf."""
    node = leaf._accum
    if node is None:
        node = Node(ACCUMULATE, None, (weakref.ref(leaf),), (), (), (), ALL_TAPES, None)
        leaf._accum = node
    return node


def leaf_of(node: Node):
    """The live leaf tensor of an AccumulateGrad node, or None."""
    return node.saved[0]()


class RemovableHandle:
    """Returned by register_hook; `remove()` takes the hook out again."""

    __slots__ = ("_list", "_hook")

    def __init__(self, hook_list: list, hook) -> None:
        self._list = hook_list
        self._hook = hook

    def remove(self) -> None:
        with contextlib.suppress(ValueError):  # removed twice: harmless, as in PyTorch
            self._list.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
