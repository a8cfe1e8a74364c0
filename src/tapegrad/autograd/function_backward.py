"""The backward side of `tg.autograd.Function`: the node rule that runs the user's
`backward` (on tensors, recorded only under `create_graph=True`), the checks on the gradients
it returns (count, shapes, dtypes, with messages naming the function), and
`once_differentiable`, whose results raise when differentiated a second time.
Re-exported by function.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .. import dtypes
from ..engine.recorder import record_node
from ..engine.state import state
from ..tensor import Tensor, _wrap
from .modes import no_grad

if TYPE_CHECKING:
    from .function import _FunctionOp

_B = TypeVar("_B", bound=Callable[..., Any])


def _fn_name(ctx: object) -> str:
    cls = ctx.__dict__.get("_tg_cls") or type(ctx)
    return str(cls.__name__)


class _DelayedErrorOp:
    """Output of a once_differentiable backward under create_graph: differentiating it raises."""

    wants_needs = False
    backward_name = "DelayedError"

    def __init__(self, fn_name: str) -> None:
        self.fn_name = fn_name

    def rule(self, xp: Any, g: Any, *saved: Any, **params: Any) -> Any:
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with "
            f"@once_differentiable ({self.fn_name}Backward); write its backward with "
            "differentiable tensor operations (and drop the decorator) to get higher-order "
            "gradients"
        )


def _call_backward(op: _FunctionOp, ctx: Any, grads: list[Any]) -> Any:
    if op.instance_style:
        return ctx.backward(*grads)
    return op.cls.backward(ctx, *grads)


def _run_backward(op: _FunctionOp, ctx: Any, g: Any) -> tuple[Any, ...]:
    """The node's rule: the user's backward on tensors, its result checked and unwrapped."""
    out_meta = ctx._tg_out_meta
    grads = [g] if len(out_meta) == 1 else list(g)
    higher = any(isinstance(x, Tensor) for x in grads)
    materialize = ctx._tg_materialize
    wrapped: list[Tensor | None] = []
    for i, gi in enumerate(grads):
        if gi is None:
            m = out_meta[i]
            if materialize and m is not None:
                gi = _wrap(m[2].zeros(m[0], dtype=m[1]))
        elif not isinstance(gi, Tensor):
            gi = _wrap(gi if hasattr(gi, "shape") and not np.isscalar(gi) else np.asarray(gi))
        wrapped.append(gi)

    ctx._tg_higher = higher
    if higher:  # create_graph: the user's backward is recorded like any computation
        res = _call_backward(op, ctx, wrapped)
    else:  # first order: nothing it does may record, even inside record() or enable_grad()
        with no_grad():
            res = _call_backward(op, ctx, wrapped)
    return _check_grads(op, ctx, res, higher)


def _check_grads(op: _FunctionOp, ctx: Any, res: Any, higher: bool) -> tuple[Any, ...]:
    name = op.backward_name
    if not isinstance(res, (tuple, list)):
        res = (res,)
    in_meta = ctx._tg_in_meta
    n_in = len(in_meta)
    if len(res) > n_in and all(r is None for r in res[n_in:]):
        res = res[:n_in]  # extra trailing Nones are allowed, as in PyTorch
    if len(res) != n_in:
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients (expected {n_in}, got "
            f"{len(res)}); {op.name}.backward must return one gradient per forward argument "
            "(None for arguments that need none)"
        )
    out: list[Any] = []  # per input: its gradient (a tensor, or its array), or None
    for i, r in enumerate(res):
        if r is None:
            out.append(None)
            continue
        if not isinstance(r, Tensor):
            raise TypeError(
                f"function {name} returned a {type(r).__name__} as gradient {i}; "
                f"{op.name}.backward must return Tensors (or None)"
            )
        meta = in_meta[i]
        if meta is None:  # a non-tensor argument: its "gradient" is ignored
            out.append(None)
            continue
        shape = meta[0]
        if r.shape != shape:
            try:
                ok = np.broadcast_shapes(r.shape, shape) == r.shape
            except ValueError:
                ok = False
            if not ok:
                raise RuntimeError(
                    f"function {name} returned an invalid gradient at index {i} - got "
                    f"{list(r.shape)} but expected shape compatible with {list(shape)} (the "
                    f"shape of input {i} of {op.name}.forward)"
                )
        if not dtypes.is_floating(r.dtype):
            raise TypeError(
                f"function {name} returned a gradient of dtype {r.dtype} at index {i}; "
                f"gradients must be floating point (input {i} is {meta[1]})"
            )
        out.append(r if higher else r._data)
    return tuple(out)


def once_differentiable(fn: _B) -> _B:
    """Decorate a Function's `backward` that is not itself differentiable.

    It then runs with recording off; under `create_graph=True` its results are marked so that
    differentiating them again raises a clear error instead of giving wrong (zero) gradients.

    >>> class Exp(tg.autograd.Function):
    ...     @staticmethod
    ...     @tg.autograd.once_differentiable
    ...     def backward(ctx, g):
    ...         ...
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        if not ctx.__dict__.get("_tg_higher"):
            return fn(ctx, *grads)
        with no_grad():
            res = fn(ctx, *grads)
        return _delay_error(ctx, grads, res)

    return wrapper  # type: ignore[return-value]  # (functools.wraps keeps fn's signature)


def _delay_error(ctx: Any, grads: Sequence[Any], res: Any) -> Any:
    ref = ctx.__dict__.get("_tg_node")
    node = ref() if ref is not None else None
    if node is None:
        return res
    grad_inputs = [g for g in grads if isinstance(g, Tensor) and g._tapes]
    mask = node.tapes
    for g in grad_inputs:
        mask |= g._tapes
    mask &= state.active
    if not mask:
        return res
    single = not isinstance(res, (tuple, list))
    items = [res] if single else list(res)
    # edges: the Function's own inputs, then the gradients that were tracked
    err = record_node(
        _DelayedErrorOp(_fn_name(ctx)), {}, grad_inputs, mask, node.xp, Tensor, n_out=len(items)
    )
    err.next, err.in_meta = node.next + err.next, node.in_meta + err.in_meta
    if node.next_nr is not None or err.next_nr is not None:
        own = node.next_nr or (0,) * len(node.next)
        err.next_nr = own + (err.next_nr or (0,) * (len(err.next) - len(own)))
    for i, r in enumerate(items):
        if isinstance(r, Tensor) and dtypes.is_floating(r.dtype):
            t = _wrap(r._data, mask)
            t.grad_fn, t._out_nr = err, i
            items[i] = t
    return items[0] if single else type(res)(items)
