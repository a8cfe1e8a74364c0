"""Forward-mode AD (PyTorch's `torch.autograd.forward_ad`): dual tensors carry a tangent.

    >>> import tapegrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 0.0]))
    ...     y = (x * x).sin()
    ...     jvp = fwAD.unpack_dual(y).tangent     # d/dt sin((x + t v)^2) at t = 0

How it works: a dual tensor carries the FORWARD tape bit (`engine.state`), which is active
only inside `dual_level()`. The dispatcher notices it in the branch it takes anyway for
tracked inputs and calls `dual_output`, which computes the output and its tangent J.t:
with the op's `jvp_rule` where it has one, else from its vjp rule. A vjp rule is linear in
`g`, so J.t = d/dg <vjp(g), t>: run the vjp on tensors with a tracked `g`, and one reverse
pass over that small graph gives J.t. Tangents live in the level (keyed by tensor, weakly),
never on the Tensor, and the level forgets them all on exit.

Forward-over-reverse: a dual output that is also recorded for backward gets a node tracked by
FORWARD too; a backward inside the level then runs its rules on tensors, so the gradients it
returns are dual (their tangents are Hessian-vector products).
"""

from __future__ import annotations

import weakref
from collections import namedtuple
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compile.hook import TRACING
from ..compile.hook import local as _tracing
from ..engine.backward import run_backward
from ..engine.node import OUT, accumulator
from ..engine.recorder import record_node
from ..engine.state import (
    FORWARD,
    ModeScope,
    allocate_tape_bit,
    also_recording,
    not_recording,
    state,
)
from ..ops import T
from ..ops.promotion import weak_scalar as _scalar
from ..ops.registry import _NAMESPACES, Op, _save
from ..tensor import Tensor, _wrap

if TYPE_CHECKING:
    from ..engine.node import Node
    from ..engine.state import _State

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

# the tape of the small reverse pass that derives J.t from a vjp rule (never a user's)
_G_TAPE = allocate_tape_bit()


class _Level:
    """One forward-AD level: the tangent of every live dual tensor made in it."""

    def __init__(self) -> None:
        # id(tensor) -> (weakref(tensor), tangent)
        self.by_id: dict[int, tuple[weakref.ref[Tensor], Tensor]] = {}
        # a node's output tangent (a custom Function's: one per output), for the output a
        # backward rebuilds from the node
        self.by_node: weakref.WeakKeyDictionary[Node, Tensor | tuple[Tensor | None, ...] | None] = (
            weakref.WeakKeyDictionary()
        )
        self.views: set[int] = set()  # ids of dual outputs of view ops

    def set(self, t: Tensor, tangent: Tensor) -> None:
        key = id(t)
        by_id, views = self.by_id, self.views

        def forget(ref: weakref.ref[Tensor], key: int = key) -> None:
            entry = by_id.get(key)
            if entry is not None and entry[0] is ref:
                del by_id[key]
                views.discard(key)

        self.by_id[key] = (weakref.ref(t, forget), tangent)

    def get(self, t: Tensor) -> Tensor | None:
        entry = self.by_id.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        node = t.grad_fn
        if node is not None:
            tangent = self.by_node.get(node)
            if tangent is not None:  # a custom Function's node holds one per output
                return tangent[t._out_nr] if isinstance(tangent, tuple) else tangent
            if not isinstance(node.op, Op):
                raise RuntimeError(
                    f"forward AD: this tensor comes from the custom Function {node.name()}, "
                    "which gave it no tangent (it was made outside this dual level, or its "
                    "jvp returned none); define the Function's jvp(ctx, *tangents) and call "
                    "it inside the level"
                )
        return None

    def close(self) -> None:
        """Forget every tangent and take the FORWARD bit off what is still alive."""
        for ref, _ in list(self.by_id.values()):
            t = ref()
            if t is not None:
                t._tapes &= ~FORWARD
        for node in list(self.by_node.keys()):
            node.tapes &= ~FORWARD
        self.by_id.clear()
        self.by_node.clear()
        self.views.clear()


def _current_level(what: str) -> _Level:
    level = state.dual_level
    if level is None:
        raise RuntimeError(
            f"{what}: no forward AD level exists; call it inside `with "
            "tg.autograd.forward_ad.dual_level():`"
        )
    return level


class dual_level(ModeScope):
    """A scope for forward AD: dual tensors made inside it carry tangents; on exit every
    tangent is forgotten (PyTorch's `forward_ad.dual_level`). Also a decorator.

    Forward AD keeps going inside `no_grad()` (as in PyTorch) and stops in
    `inference_mode()`. Levels do not nest.
    """

    def _enter(self, st: _State) -> None:
        if st.dual_level is not None:
            raise RuntimeError("Nested forward mode AD is not supported at the moment")
        st.dual_level = _Level()
        st.active |= FORWARD

    def __exit__(self, *exc: object) -> None:
        st = state
        level = st.dual_level
        st.dual_level = None
        super().__exit__(*exc)
        if level is not None:
            level.close()


_entered: list[dual_level] = []  # scopes opened by enter_dual_level, closed by exit_dual_level


def enter_dual_level() -> int:
    """Enter a forward AD level without a `with` block; returns its number (always 0)."""
    scope = dual_level()
    scope.__enter__()
    _entered.append(scope)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the level entered by `enter_dual_level` (and forget its tangents)."""
    if not _entered or state.dual_level is None:
        raise RuntimeError("exit_dual_level: no forward AD level was entered")
    _entered.pop().__exit__(None, None, None)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: `tensor`'s values (shared storage, differentiable in reverse mode as
    `tensor` itself) with `tangent` attached as it is.

    Args:
        tensor: a floating tensor, not already dual.
        tangent: a floating tensor of the same shape.
    """
    lv = _current_level("make_dual")
    for name, t in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"make_dual: expected the {name} to be a Tensor, got {type(t).__name__}"
            )
        if t.dtype.kind not in "fc":
            raise ValueError(f"Expected {name} to be floating point or complex, but got: {t.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tensor._tapes & FORWARD and lv.get(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            "same level 0 is not supported; use unpack_dual(t).primal first"
        )
    if tangent._tapes & FORWARD and lv.get(tangent) is not None:
        raise RuntimeError(
            "make_dual: the tangent is itself a dual tensor of this level; pass "
            "unpack_dual(tangent).primal"
        )
    dual = _shadow(tensor, tensor._tapes | FORWARD)
    lv.set(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """`(primal, tangent)` of a dual tensor: the primal is a view of `tensor` without the
    tangent (differentiable in reverse mode), the tangent as stored. A tensor that is not
    dual (or any tensor outside a level) gives `(tensor, None)`."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    lv = state.dual_level
    if lv is None or not tensor._tapes & FORWARD:
        return UnpackedDualTensor(tensor, None)
    tangent = lv.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_shadow(tensor, tensor._tapes & ~FORWARD), tangent)


def _shadow(t: Tensor, tapes: int) -> Tensor:
    """A tensor sharing `t`'s storage, version counter and place in the reverse graph."""
    s = _wrap(t._data, tapes, type(t))
    s._vc = t._vc
    if tapes & TRACING and _tracing.trace is not None:
        # vmap/tg.compile trace this (their trace fails on a dual op anyway): the shadow is
        # the traced tensor under another name, not a tensor captured from outside
        _tracing.trace.alias(t, s)
    if t.grad_fn is not None:
        s.grad_fn, s._out_nr = t.grad_fn, t._out_nr
    elif t._tapes & ~FORWARD:  # a tracked leaf: gradients through s must reach t
        # s resolves to t's own accumulator (alive or made anew), never to one of its own
        s._accum = lambda: accumulator(t)
    return s


def _primal(t: Any) -> Any:
    """What a rule sees of a dual input: the same tensor without its tangent."""
    if isinstance(t, Tensor) and t._tapes & FORWARD:
        return _shadow(t, t._tapes & ~FORWARD)
    return t


# --------------------------------------------------------------------- the dispatcher side
def dual_output(
    op: Op,
    args: tuple[Any, ...],
    params: dict[str, Any],
    out: Any,
    mask: int,
    xp: Any,
    cls: type[Tensor],
) -> Tensor:
    """Called by the dispatcher for an op with a dual input: the output, dual, recorded for
    backward too when a reverse tape tracks an input."""
    lv = state.dual_level
    assert lv is not None  # FORWARD is active (a dual input reached the op) only in a level
    tangents = tuple(
        lv.get(a) if isinstance(a, Tensor) and a._tapes & FORWARD else None for a in args
    )
    reverse = mask & ~FORWARD
    has_tangent = any(t is not None for t in tangents)
    if not has_tangent:
        mask = reverse
    node = None
    result = _wrap(out, mask, cls)
    if reverse:
        save_idx = op.saved_indices(len(args))
        node = record_node(op, params, args, reverse, _NAMESPACES[xp], Tensor)
        node.tapes = mask  # edges only to reverse-tracked inputs; the node carries every bit
        saved, checks = (
            _save(save_idx, args, result, op.save_for, node.next) if save_idx else ((), ())
        )
        node.saved, node.checks = saved, checks
        if op.saves_out and (op.save_for is None or any(s is OUT for s in saved)):
            node.out_data = out
            node.out_counter = result._vc
        result.grad_fn = node
    if not has_tangent:
        return result
    tangent = _output_tangent(op, args, params, result, tangents, reverse, xp)
    lv.set(result, tangent)
    if node is not None:
        lv.by_node[node] = tangent
    if op.view:
        lv.views.add(id(result))
    return result


def _output_tangent(
    op: Op,
    args: Sequence[Any],
    params: dict[str, Any],
    result: Tensor,
    tangents: tuple[Tensor | None, ...],
    reverse: int,
    xp: Any,
) -> Tensor:
    # the tangent must stay differentiable when a reverse tape tracks a primal or a tangent,
    # and its ops must reach the tracer when a tangent is traced (vmap(jvp), as jacfwd maps
    # its basis: on arrays the tangent of every sample would be sample 0's)
    active = state.active | TRACING
    composing = bool(reverse) or any(t is not None and t._tapes & active for t in tangents)
    out = result._data
    if op.jvp_rule is None:
        tangent = _tangent_from_vjp(op, args, params, result, tangents, composing)
    elif composing:
        primals = [_primal(a) for a in args]
        saved = [primals[i] for i in op.saved_indices(len(args)) if i != -1]
        tangent = op.jvp_rule(T, tangents, *saved, out=_primal(result), **params)
    else:
        arrays = [a._data if isinstance(a, Tensor) else _scalar(a) for a in args]
        saved = [arrays[i] for i in op.saved_indices(len(args)) if i != -1]
        t_arrays = tuple(None if t is None else t._data for t in tangents)
        tangent = op.jvp_rule(_NAMESPACES[xp], t_arrays, *saved, out=out, **params)
    return _fit(tangent, out, op)


def _fit(tangent: Any, out: Any, op: Op) -> Tensor:
    """The tangent as a tensor of the output's shape and dtype."""
    if tangent is None:
        return _wrap(np.zeros_like(out))
    if isinstance(tangent, Tensor):
        fitted: Tensor = tangent
        if fitted.shape != out.shape:
            fitted = T.broadcast_to(fitted, out.shape)
        if fitted.dtype != out.dtype:
            fitted = fitted.astype(out.dtype)
        return fitted
    tangent = np.asarray(tangent) if np.isscalar(tangent) else tangent
    if tangent.shape != out.shape:
        tangent = np.broadcast_to(tangent, out.shape).copy()
    if tangent.dtype != out.dtype:
        tangent = tangent.astype(out.dtype)
    return _wrap(tangent)


def _tangent_from_vjp(
    op: Op,
    args: Sequence[Any],
    params: dict[str, Any],
    result: Tensor,
    tangents: tuple[Tensor | None, ...],
    composing: bool,
) -> Any:
    """J.t = d/dg <vjp(g), t>, for an op with no forward rule of its own."""
    if composing:
        primals = [_primal(a) for a in args]
        out = _primal(result)
    else:
        primals = [_wrap(a._data) if isinstance(a, Tensor) else _scalar(a) for a in args]
        out = _wrap(result._data)
    saved = [out if i == -1 else primals[i] for i in op.saved_indices(len(args))]
    g = _wrap(np.zeros_like(result._data), _G_TAPE)
    rule = op.rule
    if rule is None:
        raise RuntimeError(
            f"forward AD: op {op.name!r} has neither a jvp rule nor a vjp rule to derive the "
            "tangent from; register one (@op.jvp or @op.vjp) or mark it differentiable=False"
        )
    with not_recording(FORWARD), also_recording(_G_TAPE):
        if op.wants_needs:
            needs = tuple(t is not None for t in tangents)
            grads = rule(T, g, *saved, needs=needs, **params)
        else:
            grads = rule(T, g, *saved, **params)
        total = None
        for gi, ti in zip(grads, tangents, strict=False):
            if gi is None or ti is None or not isinstance(gi, Tensor):
                continue
            term = T.sum(gi * ti)
            total = term if total is None else total + term
        if total is None or not total._tapes & _G_TAPE:
            return None  # the output does not depend on any input with a tangent
        head = _wrap(np.ones_like(total._data)) if composing else np.ones_like(total._data)
        (jt,) = run_backward(
            [total], [head], own_mask=-1, create_graph=composing, capture=[g], allow_unused=True
        )
    return jt


# --------------------------------------------------------------------- in-place ops
def before_inplace(t: Tensor, old: Tensor) -> None:
    """`apply_inplace` is about to run an op on `old` (t as it was): give it t's tangent."""
    lv = state.dual_level
    assert lv is not None  # apply_inplace calls it only while FORWARD is active: in a level
    if id(t) in lv.views and lv.get(t) is not None:
        raise NotImplementedError(
            "forward AD: an in-place change to a view of a dual tensor is not supported (its "
            "base's tangent would not follow); change a copy (.clone()) or work out of place"
        )
    if t._tapes & FORWARD:
        tangent = lv.get(t)
        if tangent is not None:
            lv.set(old, tangent)


def after_inplace(result: Tensor, t: Tensor) -> None:
    """`t` now holds `result`: it takes result's tangent."""
    lv = state.dual_level
    assert lv is not None  # as in before_inplace
    tangent = lv.get(result)
    if tangent is not None:
        lv.set(t, tangent)
