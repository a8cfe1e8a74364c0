"""The recorder: the one place that turns a computation into a graph node.

Custom `Function`s and their delayed-error nodes, forward AD and compiled calls record
through `record_node`; the dispatcher (`ops.registry`) through `record_op`, the same node
for its one-output case by fewer steps (tests/engine/test_record_op.py holds the two
together). An edge to an input is made in exactly one way: to the input's `grad_fn` when it
has one, else to its leaf accumulator, and only for inputs tracked by one of the tapes in
`mask`.

It also keeps, for a tape that asked (a recording GradManager: `log_history`), weak
references to the nodes recorded for it, so that `drop_history` can take the tape's bit off
all of them when the recording ends: a tensor kept from that recording is then a constant
to every later recording of the bit (released, or reused by a new manager), because the
engine only follows nodes that carry the bit of the backward it runs.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import collector
from .node import InputMeta, Node, accumulator
from .state import state

if TYPE_CHECKING:
    from ..tensor import Tensor

_new_node = object.__new__
_countdown = collector.FREEZE_EVERY  # nodes to record before the next collector.recorded_many
# Per input a node keeps its own (shape, dtype) tuple. Sharing one record per signature saved
# ~100 bytes per recorded op but cost ~0.2 us per op (a dict lookup on the hot path): speed won.

_history: dict[int, list[weakref.ref[Node]]] = {}  # tape bit -> nodes recorded for it
_logged = 0  # the bits in _history, for one test per recorded node
# a long recording drops dead references now and then: when its log has doubled since the
# last time (amortized O(1) per node)
_COMPACT_MIN = 4096
_compact_at: dict[int, int] = {}


def _compact(bit: int, log: list[weakref.ref[Node]]) -> None:
    log[:] = [r for r in log if r() is not None]
    _compact_at[bit] = max(_COMPACT_MIN, 2 * len(log))


def log_history(bit: int) -> None:
    """Start keeping the nodes recorded for tape `bit` (until `drop_history(bit)`)."""
    global _logged
    _history.setdefault(bit, [])
    _logged |= bit


def drop_history(bit: int) -> None:
    """Take `bit` off every node recorded for it since `log_history(bit)`; stop logging."""
    global _logged
    refs = _history.pop(bit, ())
    _compact_at.pop(bit, None)
    _logged &= ~bit
    for ref in refs:
        node = ref()
        if node is not None:
            node.tapes &= ~bit


def record_node(
    op: Any,
    params: Any,
    inputs: Sequence[Any],
    mask: int,
    xp: Any,
    tensor_type: type[Tensor],
    n_out: int = 1,
    out: Any = None,
) -> Node:
    """A Node for `op` applied to `inputs`, tracked by tapes `mask`.

    Per input the node gets an edge and its (shape, dtype). The edge goes to the input's
    `grad_fn` when it has one, else to its leaf accumulator, and exists only for inputs
    tracked by a tape in `mask`; anything that is not a `tensor_type` (passed in: the engine
    does not import `tensor.py`) is a constant. The caller fills in `node.saved` and
    `node.checks` (what its rule needs may depend on which edges exist).

    `out`, the one output array when the caller has it (the dispatcher): when every tracked
    input has the output's shape and dtype (elementwise ops, the common case), the node keeps
    no per-input record at all (`in_meta` is None) and backward checks each gradient against
    the output's gradient instead.
    """
    global _countdown
    nxt: list[Node | None] = []
    other_output = False  # an input that is not output 0 of its node (split, unbind, ...)
    same = out is not None
    if same:
        out_shape, out_dtype = out.shape, out.dtype
    for a in inputs:
        if isinstance(a, tensor_type) and a._tapes & mask:
            fn = a.grad_fn
            if fn is not None:
                nxt.append(fn)
                if a._out_nr:
                    other_output = True
            else:
                ref = a._accum  # a weak reference (node.accumulator)
                nxt.append((ref and ref()) or accumulator(a))
            if same:
                data = a._data
                same = data.shape == out_shape and data.dtype == out_dtype
        else:
            nxt.append(None)
    meta: tuple[InputMeta | None, ...] | None = None
    if not same:
        # per input (shape, dtype); a Function (no `out`) keeps it for untracked tensors too
        keep_all = out is None
        meta = tuple(
            (a._data.shape, a._data.dtype)
            if isinstance(a, tensor_type) and (keep_all or e is not None)
            else None
            for a, e in zip(inputs, nxt)
        )
    # Node.__init__'s body, inlined: a Python __init__ called from type() costs about as much
    # as all of these stores together, and this runs once per recorded op
    node = _new_node(Node)
    node.op = op
    node.params = params
    node.saved = ()
    node.checks = ()
    node.next = tuple(nxt)
    node.next_nr = (
        tuple(a._out_nr if e is not None else 0 for a, e in zip(inputs, nxt))
        if other_output
        else None
    )
    node.in_meta = meta
    node.tapes = mask
    node.xp = xp
    node.out_data = None
    node.out_counter = None
    node.n_out = n_out
    node.extra = None
    if mask & _logged:
        _log(node, mask)
    _countdown -= 1
    if _countdown <= 0:  # keep the collector off the growing graph (collector.py)
        _countdown = collector.recorded_many()
    if state.anomaly:
        _note_trace(node)
    return node


def record_op(
    op: Any,
    params: Any,
    inputs: Sequence[Any],
    mask: int,
    xp: Any,
    tensor_type: type[Tensor],
    out: Any,
    same: bool = False,
) -> Node:
    """`record_node(op, params, inputs, mask, xp, tensor_type, 1, out)`: the dispatcher's
    call, with its one output array. `same=True`: the caller knows every tracked input has
    the output's shape and dtype (a ufunc on one floating array, or on one and a Python
    float), so it is not compared.

    The same node by fewer steps: one call per recorded op instead of record_node's
    (whose keyword defaults, list of edges and generic loops were a tenth of a small op's
    forward; bench/NOTES.md, stop 21). tests/engine/test_record_op.py holds the two to the
    same nodes.
    """
    global _countdown
    other_output = False
    if same:
        out_shape = out_dtype = None
    else:
        same = True
        out_shape = out.shape
        out_dtype = out.dtype
    if len(inputs) == 1 and inputs[0]._tapes & mask:  # a one-input op's input is a tensor
        a = inputs[0]
        fn = a.grad_fn
        if fn is None:
            ref = a._accum  # a weak reference (node.accumulator)
            fn = (ref and ref()) or accumulator(a)
        elif a._out_nr:
            other_output = True
        if out_shape is not None:
            data = a._data
            if data.shape != out_shape or (data.dtype is not out_dtype and data.dtype != out_dtype):
                same = False
        nxt: tuple[Node | None, ...] = (fn,)
    elif len(inputs) == 2:  # unrolled: the binary operators, `h * 2.0` and `a + b`
        a, b = inputs
        fn = None
        if type(a) not in _NUMBERS and isinstance(a, tensor_type) and a._tapes & mask:
            fn = a.grad_fn
            if fn is None:
                ref = a._accum
                fn = (ref and ref()) or accumulator(a)
            elif a._out_nr:
                other_output = True
            if out_shape is not None:
                data = a._data
                if data.shape != out_shape or (
                    data.dtype is not out_dtype and data.dtype != out_dtype
                ):
                    same = False
        fn_b = None
        if type(b) not in _NUMBERS and isinstance(b, tensor_type) and b._tapes & mask:
            fn_b = b.grad_fn
            if fn_b is None:
                ref = b._accum
                fn_b = (ref and ref()) or accumulator(b)
            elif b._out_nr:
                other_output = True
            if same and out_shape is not None:
                data = b._data
                if data.shape != out_shape or (
                    data.dtype is not out_dtype and data.dtype != out_dtype
                ):
                    same = False
        nxt = (fn, fn_b)
    else:
        edges: list[Node | None] = []
        for a in inputs:
            if type(a) in _NUMBERS or not (isinstance(a, tensor_type) and a._tapes & mask):
                edges.append(None)
                continue
            fn = a.grad_fn
            if fn is None:
                ref = a._accum
                fn = (ref and ref()) or accumulator(a)
            elif a._out_nr:
                other_output = True
            edges.append(fn)
            if same and out_shape is not None:
                data = a._data
                if data.shape != out_shape or (
                    data.dtype is not out_dtype and data.dtype != out_dtype
                ):
                    same = False
        nxt = tuple(edges)
    node = _new_node(Node)
    node.op = op
    node.params = params
    node.saved = ()
    node.checks = ()
    node.next = nxt
    node.next_nr = (
        tuple(a._out_nr if e is not None else 0 for a, e in zip(inputs, nxt))
        if other_output
        else None
    )
    node.in_meta = (
        None
        if same
        else tuple(
            (a._data.shape, a._data.dtype) if e is not None else None for a, e in zip(inputs, nxt)
        )
    )
    node.tapes = mask
    node.xp = xp
    node.out_data = None
    node.out_counter = None
    node.n_out = 1
    node.extra = None
    if mask & _logged:
        _log(node, mask)
    _countdown -= 1
    if _countdown <= 0:
        _countdown = collector.recorded_many()
    if state.anomaly:
        _note_trace(node)
    return node


_NUMBERS = frozenset((float, int, bool))  # constants, told from tensors by one set lookup


def _log(node: Node, mask: int) -> None:
    ref = weakref.ref(node)
    for bit, log in tuple(_history.items()):  # a copy: other threads may add a log
        if mask & bit:
            log.append(ref)
            if len(log) >= _compact_at.get(bit, _COMPACT_MIN):
                _compact(bit, log)


def _note_trace(node: Node) -> None:
    import traceback  # anomaly mode only: not a cost of `import tapegrad` (bench W7)

    node.trace = "".join(traceback.format_stack()[:-4])
