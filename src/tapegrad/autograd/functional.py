"""tg.autograd.functional: vjp jvp jacobian hessian hvp vhp, with PyTorch's signatures.

Each takes a function `func(*inputs)` of tensors and works on fresh copies of `inputs`, so
they need not require grad and the caller's `.grad` is never touched. `inputs` (and `v`) may
be one tensor or a tuple; results follow the same structure. With `create_graph=True` the
results stay differentiable with respect to the original inputs. `jvp` and `hvp` use the
double-vjp trick (reverse mode twice), so they need no forward-mode rules.

    >>> from tapegrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, tg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..engine.state import state
from ..tensor import Tensor, _wrap
from .engine_api import grad as _grad
from .modes import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

Func = Callable[..., Any]  # func(*inputs) -> a tensor or a tuple of tensors
Grads = Sequence[Tensor | None]


# ------------------------------------------------------------------ helpers
def _as_tuple(x: Any, arg: str, fn: str) -> tuple[tuple[Tensor, ...], bool]:
    single = isinstance(x, Tensor)
    items = (x,) if single else tuple(x) if isinstance(x, (tuple, list)) else None
    if items is None:
        raise TypeError(
            f"{fn}: {arg} must be a Tensor or a tuple of Tensors, got {type(x).__name__}"
        )
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{fn}: {arg}[{i}] is a {type(t).__name__}; wrap it with tg.tensor(...)"
            )
    return items, single


def _prepare(inputs: Sequence[Tensor], create_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensors to differentiate against: leaves, or (create_graph and the input is
    tracked) an identity node on top of the input, so grads still reach the original."""
    out: list[Tensor] = []
    for t in inputs:
        if create_graph and t._tapes & state.active:
            out.append(t + 0.0)
        else:
            leaf = t.detach()
            leaf.requires_grad_(True)
            out.append(leaf)
    return tuple(out)


def _outputs(func: Func, args: Sequence[Tensor], fn: str) -> tuple[tuple[Tensor, ...], bool]:
    res = func(*args)
    outs, single = _as_tuple(res, "the output of func", fn)
    return outs, single


def _fill_none(
    grads: Grads, like: Sequence[Tensor], strict: bool, fn: str, what: str
) -> tuple[Tensor, ...]:
    out: list[Tensor] = []
    for i, (g, t) in enumerate(zip(grads, like, strict=True)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"{fn}: the output is independent of {what} {i} (strict=True); pass "
                    "strict=False to get zeros instead"
                )
            g = _wrap(np.zeros_like(t._data))
        out.append(g)
    return tuple(out)


def _grad_of(
    outputs: Sequence[Tensor],
    wrt: Sequence[Tensor],
    grad_outputs: Sequence[Tensor],
    create_graph: bool,
    retain_graph: bool | None = None,
) -> Grads:
    """autograd.grad over the outputs that are in a graph (the others contribute zero)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o._tapes]
    if not pairs:
        return (None,) * len(wrt)
    return _grad(
        [o for o, _ in pairs],
        list(wrt),
        [g for _, g in pairs],
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
    )


def _check_v(v: Any, outputs: Sequence[Tensor], fn: str, what: str = "v") -> tuple[Tensor, ...]:
    if v is None:
        if len(outputs) != 1 or outputs[0]._data.size != 1:
            raise RuntimeError(
                f"{fn}: {what} can be omitted only when func returns a single tensor with one "
                f"element; it returned shapes {[tuple(o.shape) for o in outputs]}"
            )
        return (_wrap(np.ones_like(outputs[0]._data)),)
    vs, _ = _as_tuple(v, what, fn)
    if len(vs) != len(outputs):
        raise RuntimeError(f"{fn}: {what} has {len(vs)} tensors but there are {len(outputs)}")
    for i, (a, b) in enumerate(zip(vs, outputs, strict=True)):
        if a.shape != b.shape:
            raise RuntimeError(
                f"{fn}: {what}[{i}] has shape {tuple(a.shape)} but must match shape "
                f"{tuple(b.shape)}"
            )
    return vs


def _scalar_gradient(func: Func, args: Sequence[Tensor], fn: str) -> tuple[Tensor, Grads]:
    """`func`'s one-element output at `args` and its gradient, kept differentiable: the
    first derivative that hessian, vhp and hvp all differentiate once more."""
    outs, _ = _outputs(func, args, fn)
    if len(outs) != 1 or outs[0]._data.size != 1:
        raise RuntimeError(
            f"{fn}: func must return a single tensor with one element, got shapes "
            f"{[tuple(o.shape) for o in outs]}"
        )
    out = outs[0]
    return out, _grad_of([out], args, [_wrap(np.ones_like(out._data))], create_graph=True)


def _finish(ts: Grads, single: bool, create_graph: bool) -> Any:
    done = tuple(t if create_graph or t is None else t.detach() for t in ts)
    return done[0] if single else done


# ------------------------------------------------------------------ transforms
def vjp(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    v: Tensor | Sequence[Tensor] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Vector-Jacobian product: `(func(inputs), v^T J)`.

    Args:
        func: function of the tensors `inputs` returning a tensor or a tuple of tensors.
        inputs: a tensor or tuple of tensors.
        v: one tensor per output, shaped like it (may be omitted for a one-element output).
        create_graph: make the results differentiable.
        strict: raise when an input does not influence the output (else its result is zeros).

    >>> vjp(lambda x: x ** 2, tg.tensor([1.0, 2.0]), tg.ones(2))[1]
    tensor([2., 4.])
    """
    ins, single_in = _as_tuple(inputs, "inputs", "vjp")
    with enable_grad():  # the transforms record whatever the caller's mode
        args = _prepare(ins, create_graph)
        outs, single_out = _outputs(func, args, "vjp")
        vs = _check_v(v, outs, "vjp")
        grads = _grad_of(outs, args, vs, create_graph)
    grads = _fill_none(grads, args, strict, "vjp", "input")
    return _finish(outs, single_out, create_graph), _finish(grads, single_in, create_graph)


def jvp(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    v: Tensor | Sequence[Tensor] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Jacobian-vector product: `(func(inputs), J v)`, by differentiating a vjp (double vjp).

    `v` has one tensor per input (may be omitted for a single one-element input).

    >>> jvp(lambda x: x ** 2, tg.tensor([1.0, 2.0]), tg.ones(2))[1]
    tensor([2., 4.])
    """
    ins, single_in = _as_tuple(inputs, "inputs", "jvp")
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise RuntimeError(
                "jvp: v can be omitted only for a single input with one element; pass one "
                "tensor per input"
            )
        vs: tuple[Tensor, ...] = (_wrap(np.ones_like(ins[0]._data)),)
    else:
        vs, _ = _as_tuple(v, "v", "jvp")
        if len(vs) != len(ins):
            raise RuntimeError(f"jvp: v has {len(vs)} tensors but there are {len(ins)} inputs")
        for i, (a, b) in enumerate(zip(vs, ins, strict=True)):
            if a.shape != b.shape:
                raise RuntimeError(
                    f"jvp: v[{i}] has shape {tuple(a.shape)} but input {i} has shape "
                    f"{tuple(b.shape)}"
                )
    with enable_grad():  # the transforms record whatever the caller's mode
        args = _prepare(ins, create_graph)
        outs, single_out = _outputs(func, args, "jvp")
        # u -> u^T J is linear in u; its vjp with v is J v
        dummies = tuple(_wrap(np.zeros_like(o._data)).requires_grad_(True) for o in outs)
        g = _grad_of(outs, args, dummies, create_graph=True)
        pairs = [(gi, vi) for gi, vi in zip(g, vs, strict=True) if gi is not None and gi._tapes]
        if pairs:
            res = _grad(
                [p[0] for p in pairs],
                list(dummies),
                [p[1] for p in pairs],
                create_graph=create_graph,
                allow_unused=True,
            )
        else:
            res = (None,) * len(outs)
    res = _fill_none(res, outs, strict, "jvp", "output")
    return _finish(outs, single_out, create_graph), _finish(res, single_out, create_graph)


def _jacobian_rows(
    out: Tensor, args: Sequence[Tensor], create_graph: bool, strict: bool
) -> list[Tensor]:
    """The Jacobian of one output with respect to each arg (shape out.shape + arg.shape)."""
    n = out._data.size
    rows: list[list[Tensor]] = [[] for _ in args]
    for j in range(n):
        onehot = np.zeros(n, dtype=out._data.dtype)
        onehot[j] = 1
        found: Grads = (None,) * len(args)
        if out._tapes:
            found = _grad(
                [out],
                list(args),
                [_wrap(onehot.reshape(out.shape))],
                retain_graph=True,
                create_graph=create_graph,
                allow_unused=True,
            )
        gs = _fill_none(found, args, strict, "jacobian", "input")
        for k, g in enumerate(gs):
            rows[k].append(g)
    result: list[Tensor] = []
    for k, a in enumerate(args):
        shape = tuple(out.shape) + tuple(a.shape)
        if not create_graph:
            data = np.stack([g._data for g in rows[k]]) if n else np.zeros(shape, a.dtype)
            result.append(_wrap(data.reshape(shape)))
            continue
        # keep the result in the graph with only mul and add: sum_j e_j (x) row_j
        if out.ndim == 0:
            result.append(rows[k][0])
            continue
        total: Tensor | None = None
        for j, g in enumerate(rows[k]):
            e = np.zeros(n, dtype=g._data.dtype)
            e[j] = 1
            term = g * e.reshape(tuple(out.shape) + (1,) * a.ndim)
            total = term if total is None else total + term
        result.append(total if total is not None else _wrap(np.zeros(shape, a.dtype)))
    return result


def jacobian(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`.

    One input and one output: a tensor of shape `output.shape + input.shape`; a tuple of
    inputs gives a tuple (one per input); a tuple of outputs a tuple of those. `vectorize`
    is accepted and ignored (rows are computed one vjp at a time).

    >>> jacobian(lambda x: x * 3, tg.tensor([1.0, 2.0]))
    tensor([[3., 0.],
            [0., 3.]])
    """
    if strategy != "reverse-mode":
        raise ValueError(f"jacobian: only strategy='reverse-mode' is supported, got {strategy!r}")
    ins, single_in = _as_tuple(inputs, "inputs", "jacobian")
    with enable_grad():  # the transforms record whatever the caller's mode
        args = _prepare(ins, create_graph)
        outs, single_out = _outputs(func, args, "jacobian")
        rows = [_jacobian_rows(o, args, create_graph, strict) for o in outs]
    per_out = [_finish(tuple(r), single_in, create_graph) for r in rows]
    return per_out[0] if single_out else tuple(per_out)


def hessian(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar `func` at `inputs`: shape `input.shape + input.shape`
    (a tuple of tuples for several inputs).

    >>> hessian(lambda x: (x ** 3).sum(), tg.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    ins, single_in = _as_tuple(inputs, "inputs", "hessian")

    def first(*args: Tensor) -> Any:
        _, found = _scalar_gradient(func, args, "hessian")
        gs = _fill_none(found, args, strict, "hessian", "input")
        return gs[0] if single_in else gs

    return jacobian(first, inputs, create_graph=create_graph, strict=strict)


def vhp(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    v: Tensor | Sequence[Tensor] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """`(func(inputs), v^T H)` for a scalar `func`; `v` has one tensor per input.

    >>> vhp(lambda x: (x ** 3).sum(), tg.tensor([1.0, 2.0]), tg.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(
    func: Func,
    inputs: Tensor | Sequence[Tensor],
    v: Tensor | Sequence[Tensor] | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """`(func(inputs), H v)` for a scalar `func`, by the double-vjp trick (as PyTorch).

    >>> hvp(lambda x: (x ** 3).sum(), tg.tensor([1.0, 2.0]), tg.ones(2))[1]
    tensor([ 6., 12.])
    """
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(
    func: Func, inputs: Any, v: Any, create_graph: bool, strict: bool, fn: str
) -> tuple[Any, Any]:
    ins, single_in = _as_tuple(inputs, "inputs", fn)
    if v is None:
        if len(ins) != 1 or ins[0]._data.size != 1:
            raise RuntimeError(f"{fn}: v can be omitted only for a single one-element input")
        vs: tuple[Tensor, ...] = (_wrap(np.ones_like(ins[0]._data)),)
    else:
        vs = _check_v(v, ins, fn)
    with enable_grad():  # the transforms record whatever the caller's mode
        args = _prepare(ins, create_graph)
        out, jac = _scalar_gradient(func, args, fn)
        live = [
            (j, a, vi) for j, a, vi in zip(jac, args, vs, strict=True) if j is not None and j._tapes
        ]
        res: Grads
        if not live:
            res = (None,) * len(args)
        elif fn == "vhp":
            res = _grad(
                [x[0] for x in live],
                list(args),
                [x[2] for x in live],
                create_graph=create_graph,
                allow_unused=True,
            )
        else:  # H v = d/du [ (u^T H) v ]: differentiate the vjp of jac again, w.r.t. u
            dummies = [_wrap(np.zeros_like(x[0]._data)).requires_grad_(True) for x in live]
            back = _grad(
                [x[0] for x in live], list(args), dummies, create_graph=True, allow_unused=True
            )
            pairs = [(b, vi) for b, vi in zip(back, vs, strict=True) if b is not None and b._tapes]
            gs: Grads = (None,) * len(dummies)
            if pairs:
                gs = _grad(
                    [p[0] for p in pairs],
                    dummies,
                    [p[1] for p in pairs],
                    create_graph=create_graph,
                    allow_unused=True,
                )
            by_arg = {id(x[1]): g for x, g in zip(live, gs, strict=True)}
            res = tuple(by_arg.get(id(a)) for a in args)
    filled = _fill_none(res, args, strict, fn, "input")
    return _finish((out,), True, create_graph), _finish(filled, single_in, create_graph)
