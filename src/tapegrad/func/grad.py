"""Reverse-mode transforms: `grad`, `value_and_grad`, `vjp`.

The arguments need not require grad: a transform differentiates fresh copies and never
touches any `.grad`. Inside another transform (or with inputs an outer tape tracks, or dual
tensors of forward AD) the results stay differentiable, so transforms nest.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..autograd.engine_api import grad as _autograd_grad
from ..creation import tensor as _tensor
from ..engine.state import AMBIENT, FORWARD, also_recording, state
from ..tensor import Tensor, _wrap
from ._tree import flatten, unflatten

__all__ = ["grad", "grad_and_value", "value_and_grad", "vjp"]

Argnums = int | tuple[int, ...]

_nesting = threading.local()  # how many transforms are running in this thread


class _Scope:
    """One running transform call; `open` turns False when it returns."""

    __slots__ = ("open",)

    def __init__(self) -> None:
        self.open = True


# id(fresh leaf) -> (a weak reference to it, the transform call that made it). A tensor
# defines an elementwise `==`, so a WeakKeyDictionary (which compares keys) can't hold it.
_owners: dict[int, tuple[weakref.ReferenceType[Tensor], _Scope]] = {}


@contextlib.contextmanager
def transform_scope() -> Iterator[int]:
    """Record on the ambient tape while the function runs; yields the nesting depth."""
    depth = _nesting.depth = getattr(_nesting, "depth", 0) + 1
    scope = _Scope()
    outer = getattr(_nesting, "scope", None)
    _nesting.scope = scope
    try:
        with also_recording(AMBIENT):
            yield depth
    finally:
        _nesting.depth -= 1
        _nesting.scope = outer
        scope.open = False


def _own(t: Tensor) -> None:
    """`t` is a fresh leaf of the running transform call: nothing outside it can ask for a
    gradient with respect to `t` once the call has returned (see `is_private_leaf`)."""
    scope = getattr(_nesting, "scope", None)
    if scope is not None:
        key = id(t)

        def forget(_: object, key: int = key) -> None:
            _owners.pop(key, None)

        _owners[key] = (weakref.ref(t, forget), scope)


def is_private_leaf(t: Tensor) -> bool:
    """Whether `t` is the fresh leaf of a transform call that has returned (a `vjp` whose
    `vjp_fn` lives on): a graph to it needs no keeping for anyone outside that call, as no
    one outside holds `t` to differentiate against (vmap's batched replay relies on it)."""
    got = _owners.get(id(t))
    return got is not None and got[0]() is t and not got[1].open


def fresh_input(x: Any, n: int, what: str = "grad") -> tuple[Tensor, bool]:
    """A tensor to differentiate against, and whether the result must stay differentiable
    (an outer transform or tape tracks `x`, or it is a dual tensor of forward AD)."""
    if isinstance(x, Tensor):
        active = state.active
        if x._tapes & active & ~FORWARD:
            # an identity node of our own: gradients flow to it (and, recorded, on to x)
            return x + 0.0, True
        if x._tapes & active & FORWARD:
            t = x + 0.0  # keeps x's tangent
            t.requires_grad_(True)
            _own(t)  # a new leaf of reverse mode all the same (x had no reverse tape)
            return t, True
        t = x.detach()
        _made_inside_vmap(x, t)
    else:
        t = _tensor(x)
    if t._data.dtype.kind not in "fc":
        raise TypeError(
            f"{what}: argument {n} has dtype {t.dtype}; only floating point arguments can be "
            "differentiated (pass floats, e.g. tg.tensor(2.0))"
        )
    t.requires_grad_(True)
    _own(t)
    return t, False


def _made_inside_vmap(x: Tensor, t: Tensor) -> None:
    """`t`, a fresh leaf to differentiate against, is made inside the function vmap traces
    (from `x`, captured or not): give it a slot, or vmap would take it, requiring grad, for a
    tensor captured from a tape outside (and run per sample, with graphs kept)."""
    from ..compile import hook

    trace = hook.local.trace
    if trace is not None and getattr(trace, "per_sample_values", False) and not t._tapes:
        trace.alias(x, t)


def argnums_tuple(argnums: Argnums, what: str) -> tuple[bool, tuple[int, ...]]:
    single = isinstance(argnums, int)
    if not single and not isinstance(argnums, tuple):
        raise TypeError(
            f"{what}: argnums must be an int or a tuple of ints, got {argnums!r} "
            f"({type(argnums).__name__})"
        )
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{what}: argnums must name at least one argument")
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{what}: argnums must be ints or a tuple of ints, got {n!r}")
    return single, nums


def check_argnums(nums: tuple[int, ...], args: Sequence[Any], what: str) -> None:
    for n in nums:
        if not -len(args) <= n < len(args):
            raise ValueError(
                f"{what}: Got argnums={n} but the function was called with {len(args)} "
                "positional arguments; argnums must index a positional argument"
            )


def grad(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of `func` (a scalar-valued function) as a function.

    Args:
        func: `func(*args, **kwargs)` returning a one-element tensor (or `(value, aux)` with
            `has_aux=True`).
        argnums: which positional argument(s) to differentiate: an int or a tuple of ints;
            a tuple gives a tuple of gradients.
        has_aux: `func` returns `(value, aux)`; the transform returns `(grad, aux)`.

    Returns:
        A function with `func`'s signature returning the gradient(s), shaped like the
        arguments.

    >>> tg.func.grad(lambda x: (x ** 3).sum())(tg.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """
    vg = value_and_grad(func, argnums=argnums, has_aux=has_aux)

    @functools.wraps(func)
    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_fn


def value_and_grad(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., tuple[Any, Any]]:
    """Like `grad`, but the new function returns `(value, gradient)`
    (`((value, aux), gradient)` with `has_aux=True`).

    >>> tg.func.value_and_grad(lambda x: x ** 2)(tg.tensor(3.0))
    (tensor(9.), tensor(6.))
    """
    single, nums = argnums_tuple(argnums, "grad")

    @functools.wraps(func)
    def vg_fn(*given: Any, **kwargs: Any) -> tuple[Any, Any]:
        args = list(given)
        check_argnums(nums, args, "grad")
        with transform_scope() as depth:
            # inside another transform the gradient may depend on its variables through
            # closures: keep it differentiable for the outer one
            create_graph = depth > 1
            wrt: list[Tensor] = []
            specs: list[tuple[Any, int]] = []
            for n in nums:  # an argument may be a tuple/list/dict of tensors (parameters)
                leaves, spec = flatten(args[n])
                fresh: list[Tensor] = []
                for leaf in leaves:
                    x, nested = fresh_input(leaf, n)
                    create_graph |= nested
                    fresh.append(x)
                args[n] = unflatten(fresh, spec)
                specs.append((spec, len(fresh)))
                wrt.extend(fresh)
            out = func(*args, **kwargs)
            value, aux = _split(out, has_aux, "grad")
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"grad(f)(*args): expected f(*args) to return a Tensor, got "
                    f"{type(value).__name__}"
                )
            if value._data.size != 1:
                raise RuntimeError(
                    f"grad(f)(*args): expected f(*args) to return a one-element tensor, got "
                    f"shape {tuple(value.shape)}; reduce it (e.g. .sum()), or use the vjp or "
                    "jacrev APIs instead"
                )
            found: Sequence[Tensor | None]
            if value.requires_grad:
                found = _autograd_grad(value, wrt, create_graph=create_graph, allow_unused=True)
            else:
                found = (None,) * len(wrt)
        gs = tuple(
            _wrap(np.zeros_like(x._data)) if g is None else g
            for g, x in zip(found, wrt, strict=True)
        )
        if not create_graph:  # nothing outside differentiates: plain tensors, as torch.func
            value = value.detach()
            aux = detached_tree(aux)
        per_arg: list[Any] = []
        start = 0
        for spec, n in specs:
            per_arg.append(unflatten(gs[start : start + n], spec))
            start += n
        g = per_arg[0] if single else tuple(per_arg)
        return ((value, aux) if has_aux else value), g

    return vg_fn


def grad_and_value(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., tuple[Any, Any]]:
    """torch.func's order: the new function returns `(gradient, value)`
    (`(gradient, (value, aux))` with `has_aux=True`); `value_and_grad` is JAX's order.

    >>> tg.func.grad_and_value(lambda x: x ** 2)(tg.tensor(3.0))
    (tensor(6.), tensor(9.))
    """
    vg = value_and_grad(func, argnums=argnums, has_aux=has_aux)

    @functools.wraps(func)
    def gv_fn(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        value, g = vg(*args, **kwargs)
        return g, value

    return gv_fn


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(func(*primals), vjp_fn)`: `vjp_fn(cotangents)` returns, for each primal, the
    vector-Jacobian product (a tuple, one entry per primal, shaped like it: a primal may be
    a tuple/list/dict of tensors). `cotangents` has the structure of the output (a tensor,
    or a tuple/list/dict of them); `vjp_fn` may be called again.

    >>> out, vjp_fn = tg.func.vjp(tg.sin, tg.tensor([0.0, 1.0]))
    >>> vjp_fn(tg.ones(2))
    (tensor([1.    , 0.5403]),)
    """
    return vjp_as(func, primals, has_aux, "vjp")


def vjp_as(
    func: Callable[..., Any], primals: Sequence[Any], has_aux: bool, what: str
) -> tuple[Any, ...]:
    """`vjp` for a transform named `what` (jacrev, hessian): errors name it."""
    with transform_scope() as depth:
        create_graph = depth > 1
        wrt: list[Tensor] = []  # every primal's leaves, in order
        specs: list[tuple[Any, int]] = []  # per primal: its tree spec, its number of leaves
        trees: list[Any] = []
        for n, p in enumerate(primals):  # a primal may be a tuple/list/dict of tensors
            leaves_in, pspec = flatten(p)
            fresh: list[Tensor] = []
            for leaf in leaves_in:
                x, nested = fresh_input(leaf, n, what)
                create_graph |= nested
                fresh.append(x)
            wrt.extend(fresh)
            specs.append((pspec, len(fresh)))
            trees.append(unflatten(fresh, pspec))
        out = func(*trees)
    out, aux = _split(out, has_aux, what)
    leaves, spec = flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"{what}(f, *primals): Expected f to be a function that has only Tensors as "
                f"outputs, got an output of type {type(leaf).__name__}"
            )

    def vjp_fn(
        cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None
    ) -> tuple[Any, ...]:
        cots, cot_spec = flatten(cotangents)
        if len(cots) != len(leaves):
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function: the output has {len(leaves)} tensors, the "
                f"cotangents {len(cots)}"
            )
        pairs: list[tuple[Tensor, Tensor]] = []
        for i, (o, c) in enumerate(zip(leaves, cots, strict=True)):
            c = c if isinstance(c, Tensor) else _tensor(c, dtype=o.dtype)
            if c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(c.shape)} and "
                    f"output[{i}] has a shape of {tuple(o.shape)}."
                )
            if o.requires_grad:
                pairs.append((o, c))
        keep = create_graph_default if create_graph is None else create_graph
        keep = keep or any(c.requires_grad for _, c in pairs) or getattr(_nesting, "depth", 0) > 0
        gs: Sequence[Tensor | None]
        if pairs:
            with also_recording(AMBIENT if keep else 0):
                gs = _autograd_grad(
                    [o for o, _ in pairs],
                    wrt,
                    [c for _, c in pairs],
                    retain_graph=retain_graph,
                    create_graph=keep,
                    allow_unused=True,
                )
        else:
            gs = (None,) * len(wrt)
        flat = [
            _wrap(np.zeros_like(x._data)) if g is None else g for g, x in zip(gs, wrt, strict=True)
        ]
        per_primal: list[Any] = []
        start = 0
        for pspec, n in specs:
            per_primal.append(unflatten(flat[start : start + n], pspec))
            start += n
        return tuple(per_primal)

    create_graph_default = create_graph
    if not create_graph:
        out = unflatten([leaf.detach() for leaf in leaves], spec)
        aux = detached_tree(aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def detached_tree(tree: Any) -> Any:
    """`tree` with its tensors detached (other leaves as they are)."""
    leaves, spec = flatten(tree)
    return unflatten([t.detach() if isinstance(t, Tensor) else t for t in leaves], spec)


def _split(out: Any, has_aux: bool, what: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{what}(f, ...): with has_aux=True, f must return a pair (output, aux)")
    return out[0], out[1]
