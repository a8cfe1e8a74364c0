"""The recorder: the one function that turns a computation into a graph node.

The dispatcher (`ops.registry.Op.__call__`), custom `Function`s and their delayed-error
nodes all record through `input_edges` and `record_node`, so an edge to an input is made in
exactly one way: to the input's `grad_fn` when it has one, else to its leaf accumulator, and
only for inputs tracked by one of the tapes in `mask`.
"""
from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import collector
from .node import Edge, InputMeta, Node, VersionCheck, accumulator
from .state import state

if TYPE_CHECKING:
    from ..tensor import Tensor

_countdown = collector.FREEZE_EVERY  # nodes to record before the next collector.recorded_many
_SHARED_META: dict[tuple[tuple[int, ...], int], InputMeta] = {}
_MAX_SHARED_META = 4096
Edges = tuple[tuple[Edge | None, ...], tuple[InputMeta | None, ...]]


def input_edges(inputs: Sequence[Any], mask: int, tensor_type: type[Tensor]) -> Edges:
    """Per input: the edge a node keeps to it, and its (shape, dtype).

    The edge goes to the input's `grad_fn` when it has one, else to its leaf accumulator,
    and exists only for inputs tracked by a tape in `mask`; anything that is not a
    `tensor_type` (passed in: the engine does not import `tensor.py`) is a constant.
    """
    nxt: list[Edge | None] = []
    meta: list[InputMeta | None] = []
    for a in inputs:
        if isinstance(a, tensor_type):
            data = a._data
            # nodes share one (shape, dtype) record per distinct signature (about 100 bytes
            # less per recorded op). Keyed by the dtype's id: a cached record holds its
            # dtype, so that id cannot be reused; hashing a dtype itself is slow
            dtype = data.dtype
            key = (data.shape, id(dtype))
            m = _SHARED_META.get(key)
            if m is None:
                if len(_SHARED_META) >= _MAX_SHARED_META:  # many distinct shapes: start over
                    _SHARED_META.clear()
                m = _SHARED_META[key] = (key[0], dtype)
            meta.append(m)
            if a._tapes & mask:
                fn = a.grad_fn
                nxt.append((fn, a._out_nr) if fn is not None else (a._accum or accumulator(a), 0))
                continue
        else:
            meta.append(None)
        nxt.append(None)
    return tuple(nxt), tuple(meta)


def record_node(op: Any, params: Any, saved: tuple[Any, ...], checks: tuple[VersionCheck, ...],
                edges: Edges, mask: int, xp: Any, n_out: int = 1) -> Node:
    """A Node for `op`, tracked by tapes `mask`, with `edges` from `input_edges`."""
    global _countdown
    nxt, meta = edges
    node = Node(op, params, saved, checks, nxt, meta, mask, xp, n_out)
    _countdown -= 1
    if _countdown <= 0:  # keep the collector off the growing graph (collector.py)
        _countdown = collector.FREEZE_EVERY
        collector.recorded_many()
    if state.anomaly:
        node.trace = "".join(traceback.format_stack()[:-3])
    return node
