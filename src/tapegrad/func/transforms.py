"""Forward-mode and Jacobian transforms: `jvp`, `jacrev`, `jacfwd`, `hessian`.

`jvp` runs on forward AD (`tg.autograd.forward_ad`). Forward levels do not nest, so a `jvp`
inside another forward transform (`jacfwd(jacfwd(f))`) computes its product in reverse
mode instead: J.t = d/du <J^T u, t> (the double-vjp trick), with the same result.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autograd import forward_ad as fwAD
from ..autograd.engine_api import grad as _autograd_grad
from ..creation import tensor as _tensor
from ..engine.state import AMBIENT, not_recording, state
from ..tensor import Tensor, _wrap
from ._tree import flatten, unflatten
from .grad import (
    Argnums,
    _split,
    argnums_tuple,
    check_argnums,
    detached_tree,
    fresh_input,
    transform_scope,
    vjp_as,
)

__all__ = ["hessian", "jacfwd", "jacrev", "jvp"]


def _as_tuple(x: object, what: str, name: str) -> tuple[Any, ...]:
    if not isinstance(x, tuple):
        raise RuntimeError(
            f"{what}: Expected {name} to be a tuple. E.g. it should be valid to call f(*{name})."
        )
    return x


def _float_tensor(x: Any, what: str, i: int) -> Tensor:
    t = x if isinstance(x, Tensor) else _tensor(x)
    if t.dtype.kind not in "fc":
        raise TypeError(
            f"{what}: primal {i} has dtype {t.dtype}; only floating point inputs "
            "have tangents (pass floats)"
        )
    return t


def jvp(
    func: Callable[..., Any],
    primals: tuple[Any, ...],
    tangents: tuple[Any, ...],
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """`(func(*primals), J.tangents)`: the Jacobian-vector product, in forward mode.

    Args:
        func: a function of tensors returning a tensor or a tuple/list/dict of tensors.
        primals: a tuple of tensors (or of tuples/lists/dicts of them), the point.
        tangents: the same structure of tensors of the same shapes, the direction.
        has_aux: `func` returns `(output, aux)`; the result is `(output, jvp_out, aux)`.

    >>> tg.func.jvp(tg.sin, (tg.tensor(0.0),), (tg.tensor(2.0),))
    (tensor(0.), tensor(2.))
    """
    return jvp_as(func, primals, tangents, has_aux, "jvp")


def jvp_as(
    func: Callable[..., Any],
    primals: tuple[Any, ...],
    tangents: tuple[Any, ...],
    has_aux: bool,
    what: str,
) -> tuple[Any, ...]:
    """`jvp` for a transform named `what` (jacfwd, hessian): errors name it."""
    primals = _as_tuple(primals, f"{what}(f, primals, tangents)", "primals")
    tangents = _as_tuple(tangents, f"{what}(f, primals, tangents)", "tangents")
    if len(primals) != len(tangents):
        raise RuntimeError(
            f"{what}(f, primals, tangents): Expected primals and tangents to have the same "
            f"python structure: {len(primals)} primals, {len(tangents)} tangents"
        )
    ps: list[Tensor] = []  # every primal's leaves (a primal may be a tuple/list/dict)
    ts: list[Tensor] = []
    specs: list[tuple[Any, int]] = []
    for i, (primal, tangent) in enumerate(zip(primals, tangents)):
        p_leaves, p_spec = flatten(primal)
        t_leaves, t_spec = flatten(tangent)
        if len(p_leaves) != len(t_leaves) or (p_spec is None) != (t_spec is None):
            raise RuntimeError(
                f"{what}(f, primals, tangents): Expected primals and tangents to have the same "
                f"python structure: primal {i} has {len(p_leaves)} tensors, tangent {i} "
                f"{len(t_leaves)}"
            )
        specs.append((p_spec, len(p_leaves)))
        for p_leaf, t_leaf in zip(p_leaves, t_leaves):
            p = _float_tensor(p_leaf, what, i)
            t = t_leaf if isinstance(t_leaf, Tensor) else _tensor(t_leaf, dtype=p.dtype)
            if p.shape != t.shape:
                raise RuntimeError(
                    f"{what}(f, primals, tangents): Expected primals and tangents to have the "
                    f"same shape: primal {i} has shape {tuple(p.shape)}, tangent {i} has shape "
                    f"{tuple(t.shape)}"
                )
            ps.append(p)
            ts.append(t)

    def call(*flat: Tensor) -> Any:
        trees, start = [], 0
        for spec, n in specs:
            trees.append(unflatten(flat[start : start + n], spec))
            start += n
        return func(*trees)

    if state.dual_level is not None:
        return _jvp_by_reverse(call, ps, ts, has_aux, what)
    top = _top_level(ps)
    with fwAD.dual_level():
        out = call(*[fwAD.make_dual(p, t) for p, t in zip(ps, ts)])
        out, aux = _split(out, has_aux, what)
        leaves, spec = flatten(out)
        primal_out: list[Tensor] = []
        tangent_out: list[Tensor] = []
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    f"{what}(f, primals, tangents): Expected f(*primals) to return only tensors, "
                    f"got unsupported type {type(leaf).__name__}"
                )
            p, t = fwAD.unpack_dual(leaf)
            primal_out.append(p)
            tangent_out.append(_wrap(np.zeros_like(leaf._data)) if t is None else t)
    result = unflatten(primal_out, spec), unflatten(tangent_out, spec)
    if top:  # nothing outside differentiates (a grad inside recorded): plain tensors
        result, aux = detached_tree(result), detached_tree(aux)
    return (*result, aux) if has_aux else result


def _jvp_by_reverse(
    func: Callable[..., Any],
    primals: list[Tensor],
    tangents: list[Tensor],
    has_aux: bool,
    what: str,
) -> tuple[Any, ...]:
    """J.t as d/du <J^T u, t> (for a jvp inside an active forward level)."""
    with transform_scope():
        wrt = [fresh_input(p, i, what)[0] for i, p in enumerate(primals)]
        out = func(*wrt)
        out, aux = _split(out, has_aux, what)
        leaves, spec = flatten(out)
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(
                    f"{what}(f, primals, tangents): Expected f(*primals) to return only "
                    f"tensors, got unsupported type {type(leaf).__name__}"
                )
        us = [_wrap(np.zeros_like(o._data)).requires_grad_(True) for o in leaves]
        pairs = [(o, u) for o, u in zip(leaves, us, strict=True) if o.requires_grad]
        found: list[Tensor | None] = [None] * len(leaves)
        if pairs:
            gs = _autograd_grad(
                [o for o, _ in pairs],
                wrt,
                [u for _, u in pairs],
                create_graph=True,
                allow_unused=True,
            )
            total: Tensor | None = None
            for g, t in zip(gs, tangents, strict=True):
                if g is not None:
                    term = (g * t).sum()
                    total = term if total is None else total + term
            if total is not None and total.requires_grad:
                jts = _autograd_grad(total, us, create_graph=True, allow_unused=True)
                found = list(jts)
        tangent_out = [
            _wrap(np.zeros_like(o._data)) if t is None else t
            for o, t in zip(leaves, found, strict=True)
        ]
    result = unflatten(leaves, spec), unflatten(tangent_out, spec)
    return (*result, aux) if has_aux else result


def _partial(
    func: Callable[..., Any],
    args: Sequence[Any],
    nums: tuple[int, ...],
    kwargs: dict[str, Any],
) -> Callable[..., Any]:
    def f(*xs: Any) -> Any:
        full = list(args)
        for n, x in zip(nums, xs):
            full[n] = x
        return func(*full, **kwargs)

    return f


def _top_level(primals: Sequence[Any]) -> bool:
    """No enclosing transform, dual level or tape needs the Jacobian to stay differentiable."""
    from .grad import _nesting

    active = state.active
    return (
        getattr(_nesting, "depth", 0) == 0
        and state.dual_level is None
        and not any(isinstance(p, Tensor) and p._tapes & active for p in primals)
    )


def _detached(tree: Any, top: bool) -> Any:
    return detached_tree(tree) if top else tree


def jacrev(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """The Jacobian of `func` with respect to argument(s) `argnums`, in reverse mode (the
    vector-Jacobian products of every output element, by one `vmap` of `vjp_fn`). Entry
    `[i..., j...]` is d out[i...] / d arg[j...], so its shape is `out.shape + arg.shape`; a
    tuple `argnums` gives a tuple, an argument that is a tuple/list/dict of tensors a
    Jacobian of that structure.

    >>> tg.func.jacrev(tg.sin)(tg.tensor([0.0, 1.0]))
    tensor([[1.    , 0.    ],
            [0.    , 0.5403]])
    """
    _check_chunk_size(chunk_size, "jacrev")
    transformed: Callable[..., Any] = _jacrev(func, argnums, has_aux, "jacrev")
    return transformed


def _check_chunk_size(chunk_size: Any, what: str) -> None:
    if chunk_size is not None and (
        not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1
    ):
        raise ValueError(
            f"{what}: chunk_size should be None or an int greater than 0 (got {chunk_size!r})"
        )


def _jacrev(func: Callable[..., Any], argnums: Argnums, has_aux: bool, what: str) -> Any:
    single, nums = argnums_tuple(argnums, what)

    @functools.wraps(func)
    def jac_fn(*args: Any, **kwargs: Any) -> Any:
        check_argnums(nums, args, what)
        primals = [args[n] for n in nums]  # each a tensor or a tuple/list/dict of them
        trees = [flatten(p) for p in primals]
        top = _top_level([leaf for leaves, _ in trees for leaf in leaves])
        res = vjp_as(_partial(func, args, nums, kwargs), primals, has_aux, what)
        out, vjp_fn = res[0], res[1]
        leaves, spec = flatten(out)
        jacs: list[Any] = []
        for k, o in enumerate(leaves):
            # one vmapped vjp over the output's unit cotangents (the other outputs' are
            # zeros, the same for every row), as torch.func.jacrev
            rows = _mapped_vjp(vjp_fn, leaves, spec, k, top)
            per_arg = tuple(
                unflatten(
                    [
                        _rows_to_jacobian(
                            None if rows is None else rows[j], m, o.shape, np.shape(leaf), o.dtype
                        )
                        for m, leaf in enumerate(p_leaves)
                    ],
                    p_spec,
                )
                for j, (p_leaves, p_spec) in enumerate(trees)
            )
            jacs.append(per_arg[0] if single else per_arg)
        jac = _detached(unflatten(jacs, spec), top)
        return (jac, _detached(res[2], top)) if has_aux else jac

    return jac_fn


def _graph_unneeded(top: bool) -> contextlib.AbstractContextManager[Any]:
    """Around a top-level Jacobian's vmap: its result is detached anyway, so a captured
    tensor that requires grad asks vmap for no graph (vmap would otherwise run once per row
    to keep one). Grad mode stays as it is inside `func`, as in torch.func."""
    from .batched_replay import graph_unneeded

    return graph_unneeded() if top else contextlib.nullcontext()


def _mapped_vjp(
    vjp_fn: Callable[..., tuple[Any, ...]], leaves: list[Tensor], spec: Any, k: int, top: bool
) -> tuple[Any, ...] | None:
    """`vjp_fn` of every unit cotangent of output `k` (row r: output k's element r),
    stacked first, by one `vmap`; None when output `k` is empty."""
    from .vmap import vmap

    o = leaves[k]
    n = int(np.prod(o.shape, dtype=np.int64))
    if n == 0:
        return None
    cots = [
        _wrap(np.eye(n, dtype=o.dtype).reshape((n, *o.shape)))
        if i == k
        else _wrap(np.zeros_like(x._data))
        for i, x in enumerate(leaves)
    ]
    dims = unflatten([0 if i == k else None for i in range(len(leaves))], spec)
    with _graph_unneeded(top):
        got: tuple[Any, ...] = vmap(vjp_fn, in_dims=(dims,))(unflatten(cots, spec))
    return got


def _rows_to_jacobian(
    rows: Any, m: int, out_shape: tuple[int, ...], in_shape: tuple[int, ...], dtype: Any
) -> Tensor:
    """Leaf `m` of one primal's stacked vjp rows as Jacobian entries J[out..., in...]."""
    shape = tuple(out_shape) + tuple(in_shape)
    if rows is None:
        return _wrap(np.zeros(shape, dtype=dtype))
    leaf: Tensor = flatten(rows)[0][m]
    return leaf.reshape(shape)


def jacfwd(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """The Jacobian of `func` with respect to argument(s) `argnums`, in forward mode (the
    Jacobian-vector products of every input element, by one `vmap` of `jvp`; `randomness`
    is that vmap's); the same layout as `jacrev`.

    >>> tg.func.jacfwd(lambda x: x ** 2)(tg.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "jacfwd: Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    transformed: Callable[..., Any] = _jacfwd(func, argnums, has_aux, "jacfwd", randomness)
    return transformed


def _jacfwd(
    func: Callable[..., Any],
    argnums: Argnums,
    has_aux: bool,
    what: str,
    randomness: str = "error",
) -> Any:
    single, nums = argnums_tuple(argnums, what)

    @functools.wraps(func)
    def jac_fn(*args: Any, **kwargs: Any) -> Any:
        check_argnums(nums, args, what)
        # each primal a tensor or a tuple/list/dict of them: its leaves as float tensors
        trees: list[tuple[list[Tensor], Any]] = []
        for n in nums:
            p_leaves, p_spec = flatten(args[n])
            trees.append(([_float_tensor(leaf, what, n) for leaf in p_leaves], p_spec))
        primals = tuple(unflatten(p_leaves, p_spec) for p_leaves, p_spec in trees)
        flat = [
            (j, m, leaf) for j, (p_leaves, _) in enumerate(trees) for m, leaf in enumerate(p_leaves)
        ]
        top = _top_level([leaf for _, _, leaf in flat])
        f = _partial(func, args, nums, kwargs)
        sizes = [int(np.prod(p.shape, dtype=np.int64)) for _, _, p in flat]
        total = sum(sizes)
        spec: Any = None
        aux: Any = None
        columns: list[Tensor | None]
        if total == 0:  # every primal is empty: evaluate once for the layout
            res = _evaluate(f, primals, has_aux, what)
            out_leaves, spec = flatten(res[0])
            columns = [None] * len(out_leaves)
            aux = res[1]
        else:
            # one vmapped jvp over every primal element's unit tangent, as torch.func.jacfwd
            out_leaves, spec, mapped, aux = _mapped_jvp(
                f, primals, trees, sizes, has_aux, what, randomness, top
            )
            columns = list(mapped)
        jacs: list[Any] = []
        for k, o in enumerate(out_leaves):
            per_arg = []
            start = 0
            for p_leaves, p_spec in trees:
                per_leaf = []
                for leaf in p_leaves:
                    n = int(np.prod(leaf.shape, dtype=np.int64))
                    per_leaf.append(_columns_to_jacobian(columns[k], start, n, o, leaf))
                    start += n
                per_arg.append(unflatten(per_leaf, p_spec))
            jacs.append(per_arg[0] if single else tuple(per_arg))
        jac = _detached(unflatten(jacs, spec), top)
        return (jac, _detached(aux, top)) if has_aux else jac

    return jac_fn


def _mapped_jvp(
    f: Callable[..., Any],
    primals: tuple[Any, ...],
    trees: list[tuple[list[Tensor], Any]],
    sizes: list[int],
    has_aux: bool,
    what: str,
    randomness: str,
    top: bool,
) -> tuple[list[Tensor], Any, list[Tensor], Any]:
    """`f`'s output leaves, their spec, per output leaf its tangents for every unit tangent
    of the primals (stacked first: row r is the r-th element over all primal leaves) and
    the aux; the jvps by one `vmap`."""
    from .vmap import vmap

    total = sum(sizes)
    tangents: list[Tensor] = []
    start = 0
    for (_, _, p), n in zip(
        ((j, m, p) for j, (ps, _) in enumerate(trees) for m, p in enumerate(ps)), sizes
    ):
        basis = np.zeros((total, n), dtype=p._data.dtype)
        basis[start : start + n] = np.eye(n, dtype=p._data.dtype)
        tangents.append(_wrap(basis.reshape((total, *p.shape))))
        start += n

    # the output and aux are the same for every tangent: one run's (the vmap's first)
    seen: list[Any] = []

    def one(*flat: Tensor) -> Any:
        ts, i = [], 0
        for p_leaves, p_spec in trees:
            ts.append(unflatten(flat[i : i + len(p_leaves)], p_spec))
            i += len(p_leaves)
        res = jvp_as(f, primals, tuple(ts), has_aux, what)
        if not seen:
            seen.append((res[0], res[2] if has_aux else None))
        return res[1]

    try:
        with _graph_unneeded(top):
            got = vmap(one, randomness=randomness)(*tangents)
    except RuntimeError as e:
        if "randomness error mode" not in str(e):
            raise
        fix = (
            "pass jacfwd(..., randomness='same') for the same numbers for every tangent, "
            "'different' for fresh ones, or draw them outside"
            if what == "jacfwd"
            else "draw the random numbers outside the function and pass them in"
        )
        raise RuntimeError(
            f"{what}: the function called a random operation while randomness='error' (it "
            f"runs once per tangent under vmap); {fix}"
        ) from None
    out_leaves, spec = flatten(seen[0][0])
    return out_leaves, spec, flatten(got)[0], seen[0][1]


def _columns_to_jacobian(
    columns: Tensor | None, start: int, n: int, out: Tensor, leaf: Tensor
) -> Tensor:
    """Entries J[out..., in...] for one primal leaf: rows `start:start+n` of the stacked
    tangents (one per element of the leaf) moved last."""
    shape = tuple(out.shape) + tuple(leaf.shape)
    if columns is None or n == 0:
        return _wrap(np.zeros(shape, dtype=out.dtype))
    rows = columns[start : start + n].reshape(n, -1)
    return rows.transpose(0, 1).reshape(shape)


def _evaluate(
    f: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, what: str
) -> tuple[Any, Any]:
    with not_recording(AMBIENT):
        out = f(*primals)
    return _split(out, has_aux, what)


def hessian(func: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian of a scalar function: `jacfwd(jacrev(func, argnums), argnums)`
    (forward-over-reverse), shaped `arg.shape + arg.shape`.

    >>> tg.func.hessian(lambda x: (x ** 3).sum())(tg.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    inner = _jacrev(func, argnums, False, "hessian")
    transformed: Callable[..., Any] = _jacfwd(inner, argnums, False, "hessian")
    return transformed
