"""Differential fuzzing of forward-mode AD and `tg.func` against PyTorch (float64, CPU).

tests/autograd/test_forward_ad_ops.py checks each op's tangent on its own samples; this
module calls the public surface the way user code does and runs the same call in PyTorch:

- forward AD through the op table (`tapegrad.ops.registry.OPS`, each op's samples drawn
  from two seeds, random tangents on every float input): `tg.autograd.forward_ad`'s
  `dual_level`/`make_dual`/`unpack_dual` against `torch.autograd.forward_ad`, and
  forward-over-reverse Hessian-vector products (the tangent of `autograd.grad`'s result);
- `tg.func` against `torch.func` with each function written once over a namespace (`tg` or
  `torch`): grad/value_and_grad (argnums, has_aux, pytrees), vjp (has_aux, several
  outputs, dict/tuple outputs), jvp, jacrev/jacfwd (argnums, has_aux), hessian, vmap
  (in_dims ints/None/tuples/nested/negative, out_dims, chunk_size, randomness), and their
  compositions (vmap(grad), jacfwd(jacrev), vmap(jvp), grad(grad), vmap(jacrev));
- functional_call over nn layers, per-sample gradients through it, vmap over Linear,
  Conv2d, LSTM and eval-mode BatchNorm2d;
- misuse: where torch.func raises, tapegrad must raise a contract exception that names the
  transform and the problem (not a NumPy error, not a wrong value).

`KNOWN` lists the cases where tapegrad deliberately differs (fnmatch over the case label,
with the reason); they still run, and a crash outside the contract fails them. The run is
seeded and deterministic.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import forward_ad as fwAD
from tapegrad.ops.registry import OPS

torch = pytest.importorskip("torch")
with warnings.catch_warnings():  # torch.func imports torch.jit.script (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch.autograd.forward_ad as tfwAD
    import torch.func as tfunc

# torch imports torch.jit.script (deprecated) lazily, on its first forward-AD call
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

CONTRACT = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError)
MAX_SAMPLES = 3  # per op
# ops whose samples are slow to run in both libraries (convolutions): one sample per seed
SLOW_OPS = {"conv", "conv_transpose", "conv_weight_grad", "dropout", "batch_norm"}
SEEDS = (11,)  # sample seeds (the op-table tests use 0)

# label pattern -> why tapegrad differs from torch there
KNOWN: dict[str, str] = {
    "vmap-index bool mask sum": "vmap over data-dependent shapes (a boolean mask, nonzero, "
    "masked_select) runs per sample and stacks the results when their shapes agree; torch "
    "refuses dynamic shapes",
    "vmap-index allclose branch": "vmap over Python control flow on values (allclose, .item()) "
    "runs per sample; torch refuses it",
    "error functional_call unknown name": "functional_call refuses a name the module has no "
    "parameter or buffer of (AttributeError naming the module's names): a misspelt key would "
    "otherwise do nothing; torch (strict=False) sets it as a new attribute for the call",
}


# label pattern -> where torch 2.13 itself is wrong; those cases compare with a reference
# computed another way in torch (the per-sample loop, or the same call spelled differently)
TORCH_WRONG: dict[str, str] = {
    "jacfwd * argnums=-1 *": "torch.func.jacfwd with a negative argnums returns zeros; the "
    "reference is the same call with the argnum made positive",
    "vmap tuple_out in_dims=(*None*) out_dims=[-1]*": "torch.func.vmap ignores out_dims for an "
    "output that does not depend on the mapped inputs (its batch goes to dim 0), and fails on "
    "a negative or chunked one (sizes like 34359738369); the reference is torch's per-sample "
    "loop stacked at out_dims",
    "vmap nested_out in_dims=(*None*) out_dims=[-1]*": "same",
    "vmap* lstm*": "torch.func.vmap has no batching rule for aten::lstm (nor a fallback); the "
    "reference is torch's per-sample loop",
    "vmap* gru": "same, for aten::gru",
}


# label pattern -> why tapegrad's result carries a graph (requires_grad) where torch's is a
# plain tensor; the values are still compared
GRAPH_KEPT: dict[str, str] = {
    "*vmap(hessian)*": "vmap's per-sample fallback, after a traced run that used forward AD, "
    "keeps sample 0's graph: the backward rules that ran on dual gradients made tensors the "
    "trace can't tell from ones captured from a tape outside",
    "vmap(grad(functional_call)) lstm*": "same, for the gate Functions of tg.nn.LSTM",
    "vmap(grad(functional_call)) gru": "same, for tg.nn.GRU",
}


def _torch_wrong(label: str) -> bool:
    return any(fnmatch.fnmatchcase(label, pat) for pat in TORCH_WRONG)


def _known(label: str) -> bool:
    return any(fnmatch.fnmatchcase(label, pat) for pat in KNOWN)


def _close(ours: Any, theirs: Any, what: str, rtol: float = 1e-7, atol: float = 1e-9) -> list[str]:
    a = np.asarray(_np(ours), dtype=np.float64)
    b = np.asarray(_np(theirs), dtype=np.float64)
    if a.shape != b.shape:
        return [f"{what}: shape {a.shape} != torch's {b.shape}"]
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return [f"{what}: NaN pattern differs"]
    fin = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~fin & ~np.isnan(a)], b[~fin & ~np.isnan(b)]):
        return [f"{what}: Inf pattern differs"]
    if not np.allclose(a[fin], b[fin], rtol=rtol, atol=atol):
        return [f"{what}: values differ by up to {np.max(np.abs(a[fin] - b[fin])):.3g}"]
    return []


def _np(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, tg.Tensor):
        return np.asarray(x.detach()._data)
    return x


def _tree_close(ours: Any, theirs: Any, what: str, **tol: float) -> list[str]:
    """Compare two nested tuples/lists/dicts of tensors leaf by leaf (structure too)."""
    if isinstance(theirs, dict):
        if not isinstance(ours, dict) or sorted(ours) != sorted(theirs):
            return [f"{what}: structure {_shape_of(ours)} != torch's {_shape_of(theirs)}"]
        return [p for k in theirs for p in _tree_close(ours[k], theirs[k], f"{what}[{k!r}]", **tol)]
    if isinstance(theirs, (tuple, list)):
        if not isinstance(ours, (tuple, list)) or len(ours) != len(theirs):
            return [f"{what}: structure {_shape_of(ours)} != torch's {_shape_of(theirs)}"]
        return [
            p
            for i, (o, t) in enumerate(zip(ours, theirs))
            for p in _tree_close(o, t, f"{what}[{i}]", **tol)
        ]
    if isinstance(theirs, torch.Tensor):
        if not isinstance(ours, tg.Tensor):
            return [f"{what}: got {type(ours).__name__}, torch a Tensor"]
        if ours.requires_grad != theirs.requires_grad:
            return [f"{what}: requires_grad={ours.requires_grad}, torch's {theirs.requires_grad}"]
        return _close(ours, theirs, what, **tol)
    if ours != theirs:
        return [f"{what}: {ours!r} != torch's {theirs!r}"]
    return []


def _shape_of(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _shape_of(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_shape_of(v) for v in x)
    if isinstance(x, (tg.Tensor, torch.Tensor)):
        return tuple(x.shape)
    return type(x).__name__


def _quiet_torch(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():  # torch.func imports torch.jit.script (deprecated)
        warnings.simplefilter("ignore")
        return fn()


# ---------------------------------------------------------------------------------------
# 1. forward AD through the op table


def _op_cases():
    for name, op in sorted(OPS.items()):
        if not op.differentiable or op.torch_ref is None or op.samples is None:
            continue
        for seed in SEEDS:
            for index, (args, params) in enumerate(op.samples(np.random.default_rng(seed))):
                if index >= (1 if name in SLOW_OPS else MAX_SAMPLES):
                    break
                args = [
                    a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                    for a in args
                ]
                floats = [
                    i
                    for i, a in enumerate(args)
                    if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                ]
                if floats:
                    yield f"{name}[{seed}:{index}]", op, args, params, floats


def _tg_inputs(args, tangents, grad):
    return [
        fwAD.make_dual(tg.tensor(a.copy(), requires_grad=grad), tg.tensor(tangents[i]))
        if i in tangents
        else (tg.tensor(a.copy()) if isinstance(a, np.ndarray) else a)
        for i, a in enumerate(args)
    ]


def _torch_inputs(args, tangents, grad):
    out = []
    for i, a in enumerate(args):
        if i in tangents:
            p = torch.from_numpy(a.copy()).requires_grad_(grad)
            out.append(tfwAD.make_dual(p, torch.from_numpy(tangents[i])))
        elif isinstance(a, np.ndarray):
            out.append(torch.from_numpy(a.copy()))
        else:
            out.append(a)
    return out


def _torch_hvp(op, args, params, floats, tangents, v):
    """torch's reference for the forward-over-reverse HVP: per float input, the gradient
    of <v, out> and its derivative along the tangents, by reverse-over-reverse (torch's
    double backward; its forward-over-reverse is wrong for det, cofactor and cumprod)."""
    leaves = [torch.from_numpy(args[i].copy()).requires_grad_() for i in floats]
    full = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    for i, leaf in zip(floats, leaves):
        full[i] = leaf
    try:
        out = op.torch_ref(torch, *full, **params)
        if not out.requires_grad:
            return None
        gs = torch.autograd.grad(
            out, leaves, torch.from_numpy(v), create_graph=True, allow_unused=True
        )
        gs = [torch.zeros_like(x) if g is None else g for g, x in zip(gs, leaves)]
        dot = sum((g * torch.from_numpy(tangents[i])).sum() for g, i in zip(gs, floats))
        if not dot.requires_grad:
            hs = [None] * len(leaves)
        else:
            hs = torch.autograd.grad(dot, leaves, allow_unused=True)
    except (RuntimeError, NotImplementedError):
        return None
    return [
        (g.numpy(force=True).copy(), np.zeros(x.shape) if h is None else h.numpy(force=True).copy())
        for g, h, x in zip(gs, hs, leaves)
    ]


def _hvp_case(op, args, params, tangents, v, ref) -> list[str]:
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with fwAD.dual_level():
                leaves = {i: tg.tensor(args[i].copy(), requires_grad=True) for i in tangents}
                inputs = [
                    fwAD.make_dual(leaves[i], tg.tensor(tangents[i]))
                    if i in leaves
                    else (tg.tensor(a.copy()) if isinstance(a, np.ndarray) else a)
                    for i, a in enumerate(args)
                ]
                out = op(*inputs, **params)
                gs = tg.autograd.grad(out, list(leaves.values()), tg.tensor(v), allow_unused=True)
                for k, (g, r) in enumerate(zip(gs, ref)):
                    if r is None:
                        continue
                    ref_g, ref_t = r
                    if g is None:
                        if np.any(ref_g):
                            problems.append(f"grad {k}: None where torch's is nonzero")
                        continue
                    p, t = fwAD.unpack_dual(g)
                    problems += _close(p, ref_g, f"grad {k}")
                    if ref_t is None:
                        continue
                    if t is None:
                        if np.any(ref_t):
                            problems.append(f"hvp {k}: no tangent where torch's is nonzero")
                    else:
                        problems += _close(t, ref_t, f"hvp {k}", rtol=1e-6, atol=1e-8)
        except CONTRACT as e:
            problems.append(f"hvp: raised {type(e).__name__}: {e}"[:300])
    problems += [f"hvp leaked warning: {w.message}" for w in caught]
    return problems


def test_forward_ad_through_the_op_table_matches_torch():
    failures: list[str] = []
    count = ran = 0
    for label, op, args, params, floats in _op_cases():
        count += 1
        problems, did = _run_forward_case(op, args, params, floats, np.random.default_rng(count))
        ran += did
        if problems and not _known(f"fwad {label}"):
            failures += [f"fwad {label}: {p}" for p in problems]
    print(f"forward AD: {count} cases, {ran} compared with torch")
    assert count > 300
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures)


def _run_forward_case(op, args, params, floats, rng):
    tangents = {i: rng.standard_normal(args[i].shape) for i in floats}
    # torch first: its values are the reference, a refusal (no forward formula) skips
    try:
        with tfwAD.dual_level():
            t_inputs = _torch_inputs(args, tangents, False)
            ref_out = _quiet_torch(lambda: op.torch_ref(torch, *t_inputs, **params))
            if not isinstance(ref_out, torch.Tensor) or not ref_out.dtype.is_floating_point:
                return [], False
            ref_primal, ref_tangent = tfwAD.unpack_dual(ref_out)
            ref_primal = ref_primal.numpy(force=True).copy()
            ref_tangent = None if ref_tangent is None else ref_tangent.numpy(force=True).copy()
        v = rng.standard_normal(tuple(ref_out.shape))
    except (RuntimeError, NotImplementedError):
        return [], False
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with fwAD.dual_level():
                out = op(*_tg_inputs(args, tangents, False), **params)
                primal, tangent = fwAD.unpack_dual(out)
                problems += _close(primal, ref_primal, "primal", rtol=1e-10, atol=1e-12)
                if tangent is None:
                    if ref_tangent is not None and np.any(ref_tangent):
                        problems.append("tangent: None where torch's is nonzero")
                elif ref_tangent is None:
                    if np.any(tangent._data):
                        problems.append("tangent: nonzero where torch has none")
                else:
                    problems += _close(tangent, ref_tangent, "tangent")
        except CONTRACT as e:
            problems.append(f"tangent: raised {type(e).__name__}: {e}"[:300])
    problems += [f"leaked warning: {w.message}" for w in caught]
    ref_grads = _torch_hvp(op, args, params, floats, tangents, v)
    if ref_grads is not None and not problems:
        problems += _hvp_case(op, args, params, tangents, v, ref_grads)
    return problems, True


# ---------------------------------------------------------------------------------------
# 2. tg.func against torch.func: each function is written once, over a namespace L (tg or
# torch), and called with the same float64 values in both


def _lib_tree(lib, tree):
    """numpy arrays (nested in tuples/lists/dicts) as tensors of `lib` (fresh copies)."""
    if isinstance(tree, dict):
        return {k: _lib_tree(lib, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_lib_tree(lib, v) for v in tree)
    if isinstance(tree, np.ndarray):
        return torch.from_numpy(tree.copy()) if lib is torch else tg.tensor(tree.copy())
    return tree


def _func_of(lib):
    return tfunc if lib is torch else tg.func


# scalar-valued functions: name -> (argument shapes, f(L, *args))
SCALAR_FUNCS: dict[str, tuple[list[tuple[int, ...]], Callable[..., Any]]] = {
    "sinexp": ([(4,), (4,)], lambda L, x, y: (L.sin(x) * y).sum() + (x * x * L.exp(y)).mean()),
    "mlp": ([(3, 4), (4, 2), (2,)], lambda L, x, w, b: (L.tanh(x @ w + b) ** 2).sum()),
    "lse": ([(2, 5)], lambda L, x: L.logsumexp(x, 1).sum()),
    "logsm": (
        [(3, 4), (3, 4)],
        lambda L, x, y: -(x.log_softmax(-1) * y.softmax(-1)).sum(),
    ),
    "ratio": ([(5,), (5,)], lambda L, x, y: (x / (1 + y * y)).sum() + L.sqrt((x * x).sum() + 1)),
    "mat": ([(3, 3)], lambda L, a: L.trace(a @ a.T) + (a.sigmoid() * a).sum()),
    "where": ([(6,)], lambda L, x: L.where(x > 0, x * x, L.sin(x)).sum()),
    "cumsum": ([(5,)], lambda L, x: (L.cumsum(x, 0) ** 2).sum()),
    "maxclamp": ([(6,)], lambda L, x: x.abs().amax() + x.clamp(-0.5, 0.5).sum() * x.sum()),
    "einsum": ([(2, 3), (3, 2)], lambda L, a, b: L.einsum("ij,jk->ik", a, b).tanh().sum()),
    "var": ([(3, 4)], lambda L, x: x.var(1).sum() + (x.amax(0) * x.mean(0)).sum()),
    "scalar0d": ([(), (3,)], lambda L, s, x: (s * x).sin().sum() * s),
    "views": (
        [(2, 3), (3,)],
        lambda L, a, x: (
            (a.reshape(3, 2).T * x.unsqueeze(1)[:2].squeeze(1).unsqueeze(-1)).pow(3).sum()
        ),
    ),
}

# tensor-valued functions (one output or a tuple/list/dict of them)
VECTOR_FUNCS: dict[str, tuple[list[tuple[int, ...]], Callable[..., Any]]] = {
    "vec": ([(4,)], lambda L, x: (L.tanh(x) * L.flip(x, [0])) ** 2),
    "mat_out": ([(2, 3), (3,)], lambda L, a, x: (a * x).sin() + x.exp()),
    "outer": ([(3,), (2,)], lambda L, x, y: L.outer(x, y).tanh()),
    "tuple_out": ([(3,), (2, 3)], lambda L, x, y: (x * y, (y**2).sum(0).exp())),
    "dict_out": ([(3,), (3,)], lambda L, x, y: {"a": x.exp() * y, "b": (x * y).sum()}),
    "nested_out": ([(3,), (3,)], lambda L, x, y: [x.sin(), (y * x, y.cos().sum())]),
    "softmax": ([(2, 4)], lambda L, x: x.softmax(-1) * x),
    "matmul": ([(2, 3), (3, 3)], lambda L, a, b: L.tanh(a @ b) @ b.T),
}


def _draw(rng, shapes):
    return [rng.standard_normal(s) for s in shapes]


def _with_aux(f):
    """f returning (value, aux) with an aux tree of tensors (torch.func takes tensors only)."""
    return lambda L, *xs: (f(L, *xs), {"twice": xs[0] * 2, "pair": (xs[-1].sum(),)})


def _pair(label, ours, theirs, loop=None, **tol):
    """A case: tapegrad's call, torch.func's, and (for TORCH_WRONG cases) a reference
    computed without the broken torch.func path."""
    return label, ours, theirs, loop, tol


def _grad_cases(rng):
    for name, (shapes, f) in SCALAR_FUNCS.items():
        n = len(shapes)
        argnums_options: list[Any] = [0, n - 1, -1, tuple(range(n))]
        if n > 1:
            argnums_options.append((n - 1, 0))
        for argnums in argnums_options:
            for aux in (False, True):
                for which in ("grad", "grad_and_value"):
                    xs = _draw(rng, shapes)
                    g = _with_aux(f) if aux else f

                    def run(lib, g=g, xs=xs, argnums=argnums, aux=aux, which=which):
                        fn = getattr(_func_of(lib), which)
                        return fn(lambda *a: g(lib, *a), argnums=argnums, has_aux=aux)(
                            *_lib_tree(lib, xs)
                        )

                    yield _pair(
                        f"{which} {name} argnums={argnums} has_aux={aux}",
                        lambda run=run: run(tg),
                        lambda run=run: run(torch),
                    )
    # a pytree of parameters (dict and tuple) as one argument
    for aux in (False, True):
        params = {"w": rng.standard_normal((4, 2)), "b": (rng.standard_normal(2),)}
        x = rng.standard_normal((3, 4))

        def tree_loss(L, p, x):
            return (L.tanh(x @ p["w"] + p["b"][0]) ** 2).mean()

        g = _with_aux(tree_loss) if aux else tree_loss

        def run(lib, g=g, params=params, x=x, aux=aux):
            fn = _func_of(lib).grad(lambda p, x: g(lib, p, x), has_aux=aux)
            return fn(_lib_tree(lib, params), _lib_tree(lib, x))

        yield _pair(f"grad pytree-dict has_aux={aux}", lambda r=run: r(tg), lambda r=run: r(torch))


def _pytree_cases(rng):
    """Arguments that are dicts/tuples/lists of tensors (parameters) through every transform."""
    params = {
        "w": rng.standard_normal((2, 3)),
        "b": (rng.standard_normal(2), [rng.standard_normal(())]),
    }
    x = rng.standard_normal(3)

    def f(L, p, x):
        return L.tanh(p["w"] @ x + p["b"][0]) * p["b"][1][0]

    def loss(L, p, x):
        return (f(L, p, x) ** 2).sum() + (p["w"] ** 3).sum()

    def T(L, a):
        return _lib_tree(L, a)

    ts = _cotangents(rng, _lib_tree(torch, params))
    cot = rng.standard_normal(2)
    calls: dict[str, Callable[[Any], Any]] = {
        "vjp dict": lambda L: _func_of(L).vjp(lambda p: f(L, p, T(L, x)), T(L, params))[1](
            T(L, cot)
        ),
        "vjp dict+tensor": lambda L: _func_of(L).vjp(
            lambda p, y: f(L, p, y), T(L, params), T(L, x)
        )[1](T(L, cot)),
        "jvp dict": lambda L: _func_of(L).jvp(
            lambda p: f(L, p, T(L, x)), (T(L, params),), (T(L, ts),)
        ),
        "jacrev dict": lambda L: _func_of(L).jacrev(lambda p: f(L, p, T(L, x)))(T(L, params)),
        "jacfwd dict": lambda L: _func_of(L).jacfwd(lambda p: f(L, p, T(L, x)))(T(L, params)),
        "jacrev argnums=(0,1) dict": lambda L: _func_of(L).jacrev(
            lambda p, y: f(L, p, y), argnums=(0, 1)
        )(T(L, params), T(L, x)),
        "jacfwd argnums=(0,1) dict has_aux": lambda L: _func_of(L).jacfwd(
            lambda p, y: (f(L, p, y), y * 2), argnums=(0, 1), has_aux=True
        )(T(L, params), T(L, x)),
        "hessian dict": lambda L: _func_of(L).hessian(lambda p: loss(L, p, T(L, x)))(T(L, params)),
        "jvp(grad) dict hvp": lambda L: _func_of(L).jvp(
            _func_of(L).grad(lambda p: loss(L, p, T(L, x))), (T(L, params),), (T(L, ts),)
        ),
        "grad(grad-norm) dict": lambda L: _func_of(L).grad(
            lambda p: sum(
                (g**2).sum() for g in _flat(_func_of(L).grad(lambda q: loss(L, q, T(L, x)))(p))
            )
        )(T(L, params)),
        "vmap(jacrev) dict": lambda L: _func_of(L).vmap(
            _func_of(L).jacrev(lambda p, y: f(L, p, y)), in_dims=(None, 0)
        )(T(L, params), T(L, np.stack([x, 2 * x, -x]))),
    }
    for label, call in calls.items():
        yield _pair(f"pytree {label}", lambda c=call: c(tg), lambda c=call: c(torch), rtol=1e-6)


def _closure_cases(rng):
    """Transforms of functions that close over another transform's variables (the inner
    result must stay differentiable for the outer one) and transforms of vmap."""
    x0, y0 = rng.standard_normal(3), rng.standard_normal(3)
    X, W, A = (
        rng.standard_normal((4, 3)),
        rng.standard_normal((3, 2)),
        rng.standard_normal((2, 3, 4)),
    )

    def T(L, a):
        return _lib_tree(L, a)

    def F(L):
        return _func_of(L)

    calls: dict[str, Callable[[Any], Any]] = {
        "grad(grad)": lambda L: F(L).grad(
            lambda x: F(L).grad(lambda y: (x * y * y).sum())(T(L, y0)).pow(2).sum()
        )(T(L, x0)),
        "jacrev(vmap)": lambda L: F(L).jacrev(
            lambda x: F(L).vmap(lambda y: (x * y).sin())(T(L, X))
        )(T(L, x0)),
        "jacfwd(vmap)": lambda L: F(L).jacfwd(
            lambda x: F(L).vmap(lambda y: (x * y).sin())(T(L, X))
        )(T(L, x0)),
        "vmap(grad)": lambda L: F(L).vmap(
            lambda x: F(L).grad(lambda w: (w * x).sin().sum())(T(L, y0))
        )(T(L, X)),
        "jvp(grad)": lambda L: F(L).jvp(
            lambda x: F(L).grad(lambda y: (x * y * y).sum())(T(L, y0)), (T(L, x0),), (T(L, y0),)
        ),
        "vmap(jacrev)": lambda L: F(L).vmap(lambda x: F(L).jacrev(lambda y: x * y.sin())(T(L, y0)))(
            T(L, X)
        ),
        "vmap(jacfwd)": lambda L: F(L).vmap(lambda x: F(L).jacfwd(lambda y: x * y.sin())(T(L, y0)))(
            T(L, X)
        ),
        "grad(vmap)": lambda L: F(L).grad(
            lambda w: F(L).vmap(lambda x: (x @ w).tanh().sum())(T(L, X)).sum()
        )(T(L, W)),
        "vmap(vmap(grad))": lambda L: F(L).vmap(F(L).vmap(F(L).grad(lambda a: (a**3).sum())))(
            T(L, A)
        ),
        "jacfwd(jacfwd)": lambda L: F(L).jacfwd(
            lambda x: F(L).jacfwd(lambda y: x * y * y)(T(L, y0))
        )(T(L, x0)),
        "grad(jacfwd)": lambda L: F(L).grad(
            lambda y: F(L).jacfwd(lambda z: z.exp() * z.sum())(y).sum()
        )(T(L, y0)),
        "vmap(hessian)": lambda L: F(L).vmap(
            lambda x: F(L).hessian(lambda y: (x * y.sin()).sum())(T(L, y0))
        )(T(L, X)),
        "jvp(vmap)": lambda L: F(L).jvp(
            F(L).vmap(lambda a: a.sin() * a.sum()), (T(L, X),), (T(L, X * 2),)
        ),
        "vjp(vmap)": lambda L: F(L).vjp(F(L).vmap(lambda a: a.sin() * a.sum()), T(L, X))[1](
            T(L, X)
        ),
        "vmap(jvp)": lambda L: F(L).vmap(
            lambda x: F(L).jvp(lambda y: (x * y).exp(), (T(L, y0),), (x,))[1]
        )(T(L, X)),
        "jacrev(jvp)": lambda L: F(L).jacrev(
            lambda x: F(L).jvp(lambda y: y.sin() * x, (T(L, y0),), (x,))[1]
        )(T(L, x0)),
        "grad(vjp)": lambda L: F(L).grad(
            lambda x: F(L).vjp(lambda y: (x * y).sin(), T(L, y0))[1](x)[0].sum()
        )(T(L, x0)),
    }
    for label, call in calls.items():
        yield _pair(f"closure {label}", lambda c=call: c(tg), lambda c=call: c(torch), rtol=1e-6)


def _cotangents(rng, out):
    """numpy cotangents shaped like a torch output tree."""
    if isinstance(out, dict):
        return {k: _cotangents(rng, v) for k, v in out.items()}
    if isinstance(out, (tuple, list)):
        return type(out)(_cotangents(rng, v) for v in out)
    return rng.standard_normal(tuple(out.shape))


def _vjp_jvp_cases(rng):
    for name, (shapes, f) in {**VECTOR_FUNCS, **SCALAR_FUNCS}.items():
        for aux in (False, True):
            xs = _draw(rng, shapes)
            g = _with_aux(f) if aux else f
            ref_out = f(torch, *_lib_tree(torch, xs))
            cot = _cotangents(rng, ref_out)
            cot2 = _cotangents(rng, ref_out)

            def run_vjp(lib, g=g, xs=xs, cot=cot, cot2=cot2, aux=aux):
                res = _func_of(lib).vjp(lambda *a: g(lib, *a), *_lib_tree(lib, xs), has_aux=aux)
                # vjp_fn called twice (torch allows it)
                return (res[0], res[1](_lib_tree(lib, cot)), res[1](_lib_tree(lib, cot2)), *res[2:])

            yield _pair(
                f"vjp {name} has_aux={aux}", lambda r=run_vjp: r(tg), lambda r=run_vjp: r(torch)
            )
            ts = _draw(rng, shapes)

            def run_jvp(lib, g=g, xs=xs, ts=ts, aux=aux):
                return _func_of(lib).jvp(
                    lambda *a: g(lib, *a),
                    tuple(_lib_tree(lib, xs)),
                    tuple(_lib_tree(lib, ts)),
                    has_aux=aux,
                )

            yield _pair(
                f"jvp {name} has_aux={aux}", lambda r=run_jvp: r(tg), lambda r=run_jvp: r(torch)
            )


def _jacobian_cases(rng):
    for name, (shapes, f) in {**VECTOR_FUNCS, **SCALAR_FUNCS}.items():
        n = len(shapes)
        for argnums in ([0, tuple(range(n))] if n > 1 else [0, (0,)]) + ([-1] if n > 1 else []):
            for which in ("jacrev", "jacfwd"):
                for aux in (False, True) if argnums == 0 else (bool(rng.integers(2)),):
                    xs = _draw(rng, shapes)
                    g = _with_aux(f) if aux else f

                    def run(lib, g=g, xs=xs, argnums=argnums, aux=aux, which=which):
                        fn = getattr(_func_of(lib), which)
                        return fn(lambda *a: g(lib, *a), argnums=argnums, has_aux=aux)(
                            *_lib_tree(lib, xs)
                        )

                    positive = argnums % n if isinstance(argnums, int) else argnums
                    yield _pair(
                        f"{which} {name} argnums={argnums} has_aux={aux}",
                        lambda r=run: r(tg),
                        lambda r=run: r(torch),
                        loop=lambda r=run, a=positive: r(torch, argnums=a),
                    )
    for name, (shapes, f) in SCALAR_FUNCS.items():
        n = len(shapes)
        for argnums in [0, tuple(range(n))] if n > 1 else [0]:
            xs = _draw(rng, shapes)

            def run_h(lib, f=f, xs=xs, argnums=argnums):
                return _func_of(lib).hessian(lambda *a: f(lib, *a), argnums=argnums)(
                    *_lib_tree(lib, xs)
                )

            yield _pair(
                f"hessian {name} argnums={argnums}",
                lambda r=run_h: r(tg),
                lambda r=run_h: r(torch),
                rtol=1e-6,
                atol=1e-8,
            )
            small = sum(int(np.prod(sh)) for sh in shapes) <= 10  # jacfwd(jacfwd) is n^2 jvps
            pairs = [("jacfwd", "jacrev"), ("jacrev", "jacrev")] + [("jacfwd", "jacfwd")] * small
            for outer, inner in pairs:

                def run_c(lib, f=f, xs=xs, outer=outer, inner=inner):
                    F = _func_of(lib)
                    inner_fn = getattr(F, inner)(lambda *a: f(lib, *a))
                    return getattr(F, outer)(inner_fn)(*_lib_tree(lib, xs))

                yield _pair(
                    f"{outer}({inner}) {name}",
                    lambda r=run_c: r(tg),
                    lambda r=run_c: r(torch),
                    rtol=1e-6,
                    atol=1e-8,
                )


def _second_order_cases(rng):
    """grad(grad(f)) on scalar functions of a 0-d input; grad of a grad's sum; jvp of grad."""
    one_d = {
        "poly": lambda L, x: x**3 * L.sin(x),
        "exp_tanh": lambda L, x: L.exp(L.tanh(x)) / (1 + x * x),
        "log1p": lambda L, x: L.log1p(x * x) * L.cos(x),
    }
    for name, f in one_d.items():
        x = rng.standard_normal(())

        def run_gg(lib, f=f, x=x):
            F = _func_of(lib)
            return F.grad(F.grad(lambda a: f(lib, a)))(_lib_tree(lib, x))

        yield _pair(f"grad(grad) {name}", lambda r=run_gg: r(tg), lambda r=run_gg: r(torch))

        def run_ggg(lib, f=f, x=x):
            F = _func_of(lib)
            return F.grad(F.grad(F.grad(lambda a: f(lib, a))))(_lib_tree(lib, x))

        yield _pair(
            f"grad(grad(grad)) {name}",
            lambda r=run_ggg: r(tg),
            lambda r=run_ggg: r(torch),
            rtol=1e-6,
        )
    for name, (shapes, f) in SCALAR_FUNCS.items():
        xs = _draw(rng, shapes)
        ts = _draw(rng, shapes)

        def run_gs(lib, f=f, xs=xs):
            F = _func_of(lib)
            inner = F.grad(lambda *a: f(lib, *a))
            return F.grad(lambda *a: (inner(*a) ** 2).sum())(*_lib_tree(lib, xs))

        yield _pair(
            f"grad(sum grad^2) {name}", lambda r=run_gs: r(tg), lambda r=run_gs: r(torch), rtol=1e-6
        )

        def run_jg(lib, f=f, xs=xs, ts=ts):
            F = _func_of(lib)
            inner = F.grad(lambda *a: f(lib, *a), argnums=tuple(range(len(xs))))
            return F.jvp(inner, tuple(_lib_tree(lib, xs)), tuple(_lib_tree(lib, ts)))

        yield _pair(
            f"jvp(grad) {name}", lambda r=run_jg: r(tg), lambda r=run_jg: r(torch), rtol=1e-6
        )


def _batched(rng, shape, dim, size):
    """A batch of `size` samples of `shape`, the batch at dimension `dim`."""
    arr = rng.standard_normal((size, *shape))
    return np.moveaxis(arr, 0, dim) if dim is not None else rng.standard_normal(shape)


def _torch_loop_vmap(f, in_dims, out_dims, args):
    """torch's per-sample loop, stacked at out_dims: vmap's meaning (one in_dim per argument)."""
    tree = torch.utils._pytree
    dims = [in_dims] * len(args) if isinstance(in_dims, int) else list(in_dims)
    size = next(tree.tree_leaves(a)[0].shape[d] for a, d in zip(args, dims) if d is not None)
    outs = [
        f(
            *[
                a if d is None else tree.tree_map(lambda t, d=d, i=i: t.select(d, i), a)
                for a, d in zip(args, dims)
            ]
        )
        for i in range(size)
    ]
    flat = [torch.utils._pytree.tree_flatten(o) for o in outs]
    n = len(flat[0][0])
    odims = torch.utils._pytree.tree_leaves(out_dims) if isinstance(out_dims, tuple) else None
    odims = odims if odims and len(odims) == n else [out_dims] * n
    stacked = []
    for k, d in enumerate(odims):
        items = [leaves[k] for leaves, _ in flat]
        if d is None:
            if any(not torch.equal(items[0], it) for it in items):
                raise ValueError("out_dims=None for an output that differs per sample")
            stacked.append(items[0])
        else:
            stacked.append(torch.stack(items, dim=d))
    return torch.utils._pytree.tree_unflatten(stacked, flat[0][1])


def _vmap_cases(rng):
    size = 3
    for name, (shapes, f) in {**VECTOR_FUNCS, **SCALAR_FUNCS}.items():
        n = len(shapes)
        in_dim_options: list[Any] = [0, tuple([0] + [None] * (n - 1))]
        in_dim_options.append(tuple(-1 if len(s) else 0 for s in shapes))
        in_dim_options.append(tuple(len(s) if k % 2 == 0 else None for k, s in enumerate(shapes)))
        if n > 1:
            in_dim_options.append(tuple([None] * (n - 1) + [0]))
        for in_dims in in_dim_options:
            dims = [in_dims] * n if isinstance(in_dims, int) else list(in_dims)
            xs = [
                _batched(rng, s, None if d is None else (d if d >= 0 else len(s) + 1 + d), size)
                for s, d in zip(shapes, dims)
            ]
            if all(d is None for d in dims):
                continue
            for out_dims in (0, -1, 1):
                for chunk in (None, 2) if out_dims == 0 else (None,):

                    def run(lib, f=f, xs=xs, in_dims=in_dims, out_dims=out_dims, chunk=chunk):
                        mapped = _func_of(lib).vmap(
                            lambda *a: f(lib, *a),
                            in_dims=in_dims,
                            out_dims=out_dims,
                            chunk_size=chunk,
                        )
                        return mapped(*_lib_tree(lib, xs))

                    yield _pair(
                        f"vmap {name} in_dims={in_dims} out_dims={out_dims} chunk={chunk}",
                        lambda r=run: r(tg),
                        lambda r=run: r(torch),
                        loop=lambda f=f, xs=xs, i=in_dims, o=out_dims: _torch_loop_vmap(
                            lambda *a: f(torch, *a), i, o, _lib_tree(torch, xs)
                        ),
                    )
    # nested in_dims over a tuple argument and a dict argument
    pair = (rng.standard_normal((size, 3)), rng.standard_normal(3))
    z = rng.standard_normal((4, size))
    d = {"w": rng.standard_normal((3, size)), "b": rng.standard_normal(())}

    def run_nested(lib):
        def f(p, z, d):
            x, y = p
            return (x * y).sum() * z + d["w"].sum() + d["b"]

        return _func_of(lib).vmap(f, in_dims=((0, None), 1, {"w": 1, "b": None}))(
            *_lib_tree(lib, (pair, z, d))
        )

    yield _pair("vmap nested in_dims tuple/dict", lambda: run_nested(tg), lambda: run_nested(torch))
    # out_dims per output, for a tuple output
    xs = [rng.standard_normal((size, 3)), rng.standard_normal((size, 2, 3))]
    for out_dims in ((0, 1), (1, 0), (-1, None), (None, 2)):

        def run_od(lib, out_dims=out_dims):
            f = VECTOR_FUNCS["tuple_out"][1]
            in_dims = (0, 0) if None not in out_dims else (None, 0)
            args = _lib_tree(lib, xs)
            if None in out_dims:
                args[0] = args[0][0]
            return _func_of(lib).vmap(lambda *a: f(lib, *a), in_dims=in_dims, out_dims=out_dims)(
                *args
            )

        yield _pair(
            f"vmap tuple_out out_dims={out_dims}", lambda r=run_od: r(tg), lambda r=run_od: r(torch)
        )
    # vmap of vmap, with different dims
    x = rng.standard_normal((2, 4, 3))
    y = rng.standard_normal((3, 2))

    def run_vv(lib):
        F = _func_of(lib)
        inner = F.vmap(lambda a, b: (a * b).sin().sum(), in_dims=(0, None))
        return F.vmap(inner, in_dims=(0, 1))(*_lib_tree(lib, (x, y)))

    yield _pair("vmap(vmap) in_dims=(0,1)/(0,None)", lambda: run_vv(tg), lambda: run_vv(torch))
    # keyword arguments are not mapped
    x = rng.standard_normal((size, 4))
    scale = rng.standard_normal(4)

    def run_kw(lib):
        return _func_of(lib).vmap(lambda a, s=None: (a * s).exp())(
            _lib_tree(lib, x), s=_lib_tree(lib, scale)
        )

    yield _pair("vmap kwargs unmapped", lambda: run_kw(tg), lambda: run_kw(torch))


def _vmap_index_cases(rng):
    """vmap over integer and bool inputs (labels, indices, masks): the per-sample patterns."""
    size = 4
    x = rng.standard_normal((size, 5, 3))
    w = rng.standard_normal((3, 4))
    labels = rng.integers(0, 4, (size, 5))
    idx = rng.integers(-3, 3, (size, 2))
    mask = rng.random((size, 5, 3)) > 0.5
    table = rng.standard_normal((6, 3))
    tokens = rng.integers(0, 6, (size, 4))

    def nnf(L):
        return torch.nn.functional if L is torch else tg.nn.functional

    calls: dict[str, Callable[[Any], Any]] = {
        "cross_entropy per-sample grad": lambda L: _func_of(L).vmap(
            _func_of(L).grad(lambda w_, a, y: nnf(L).cross_entropy(a @ w_, y)), in_dims=(None, 0, 0)
        )(_lib_tree(L, w), _lib_tree(L, x), _lib_tree(L, labels)),
        "cross_entropy smoothing": lambda L: _func_of(L).vmap(
            lambda a, y: nnf(L).cross_entropy(a @ _lib_tree(L, w), y, label_smoothing=0.1)
        )(_lib_tree(L, x), _lib_tree(L, labels)),
        "nll_loss sum": lambda L: _func_of(L).vmap(
            lambda a, y: nnf(L).nll_loss((a @ _lib_tree(L, w)).log_softmax(-1), y, reduction="sum")
        )(_lib_tree(L, x), _lib_tree(L, labels)),
        "integer index": lambda L: _func_of(L).vmap(lambda a, i: a[i] * 2)(
            _lib_tree(L, x), _lib_tree(L, idx)
        ),
        "bool mask where": lambda L: _func_of(L).vmap(lambda a, m: L.where(m, a, -a).exp())(
            _lib_tree(L, x), _lib_tree(L, mask)
        ),
        "embedding": lambda L: _func_of(L).vmap(
            lambda t: nnf(L).embedding(t, _lib_tree(L, table)), in_dims=0
        )(_lib_tree(L, tokens)),
        "embedding grad": lambda L: _func_of(L).vmap(
            _func_of(L).grad(lambda tab, t: (nnf(L).embedding(t, tab) ** 2).sum()),
            in_dims=(None, 0),
        )(_lib_tree(L, table), _lib_tree(L, tokens)),
        "gather": lambda L: _func_of(L).vmap(lambda a, i: L.gather(a, 0, i))(
            _lib_tree(L, x), _lib_tree(L, np.abs(idx)[:, :, None].repeat(3, -1) % 5)
        ),
        "one_hot": lambda L: _func_of(L).vmap(
            lambda y, a: (nnf(L).one_hot(y, 4).to(a.dtype) * (a @ _lib_tree(L, w))).sum()
        )(_lib_tree(L, labels), _lib_tree(L, x)),
        "argmax in loss": lambda L: _func_of(L).vmap(
            lambda a: a.amax(-1) * a.argmax(-1).to(a.dtype)
        )(_lib_tree(L, x)),
        "sort values": lambda L: _func_of(L).vmap(lambda a: L.sort(a, dim=-1).values.cumsum(-1))(
            _lib_tree(L, x)
        ),
        "topk grad": lambda L: _func_of(L).vmap(
            _func_of(L).grad(lambda a: L.topk(a.flatten(), 3).values.pow(2).sum())
        )(_lib_tree(L, x)),
        "masked_fill": lambda L: _func_of(L).vmap(lambda a, m: a.masked_fill(m, 0.0).sum(0))(
            _lib_tree(L, x), _lib_tree(L, mask)
        ),
        "scatter_add": lambda L: _func_of(L).vmap(
            lambda a, i: L.zeros(5, 3, dtype=a.dtype).scatter_add(0, i, a[:2])
        )(_lib_tree(L, x), _lib_tree(L, np.abs(idx)[:, :, None].repeat(3, -1) % 5)),
        "index_select": lambda L: _func_of(L).vmap(lambda a, i: L.index_select(a, 0, i))(
            _lib_tree(L, x), _lib_tree(L, np.abs(idx) % 5)
        ),
        "index_add": lambda L: _func_of(L).vmap(
            lambda a, i: L.zeros(5, 3, dtype=a.dtype).index_add(0, i, a[:2])
        )(_lib_tree(L, x), _lib_tree(L, np.abs(idx) % 5)),
        "0-d integer index": lambda L: _func_of(L).vmap(lambda a, i: a[i])(
            _lib_tree(L, x), _lib_tree(L, idx[:, 0])
        ),
        "argsort": lambda L: _func_of(L).vmap(lambda a: L.argsort(a, dim=0))(_lib_tree(L, x)),
        "topk indices": lambda L: _func_of(L).vmap(lambda a: L.topk(a, 2, dim=0).indices)(
            _lib_tree(L, x)
        ),
        "kthvalue grad": lambda L: _func_of(L).vmap(
            _func_of(L).grad(lambda a: L.kthvalue(a, 2, 0).values.pow(2).sum())
        )(_lib_tree(L, x)),
        "bool mask sum": lambda L: _func_of(L).vmap(lambda a, m: a[m].sum())(
            _lib_tree(L, x), _lib_tree(L, mask)
        ),
        "allclose branch": lambda L: _func_of(L).vmap(
            lambda a: a * 2 if L.allclose(a[0], a[1]) else a
        )(_lib_tree(L, x)),
    }
    for label, call in calls.items():
        yield _pair(f"vmap-index {label}", lambda c=call: c(tg), lambda c=call: c(torch))


def _composition_cases(rng):
    size = 4
    # per-sample gradients: vmap(grad(loss)) over the data, parameters shared
    for name, (shapes, f) in SCALAR_FUNCS.items():
        n = len(shapes)
        in_dims = tuple([None] + [0] * (n - 1)) if n > 1 else (0,)
        xs = [_batched(rng, s, None if d is None else 0, size) for s, d in zip(shapes, in_dims)]
        for argnums in (0, tuple(range(n))):

            def run(lib, f=f, xs=xs, in_dims=in_dims, argnums=argnums):
                F = _func_of(lib)
                return F.vmap(F.grad(lambda *a: f(lib, *a), argnums=argnums), in_dims=in_dims)(
                    *_lib_tree(lib, xs)
                )

            yield _pair(
                f"vmap(grad) {name} argnums={argnums} in_dims={in_dims}",
                lambda r=run: r(tg),
                lambda r=run: r(torch),
            )
        batched0 = [rng.standard_normal((size, *s)) for s in shapes]

        def run_vh(lib, f=f, xs=batched0):
            F = _func_of(lib)
            return F.vmap(F.hessian(lambda *a: f(lib, *a)))(*_lib_tree(lib, xs))

        yield _pair(
            f"vmap(hessian) {name}", lambda r=run_vh: r(tg), lambda r=run_vh: r(torch), rtol=1e-6
        )
    for name, (shapes, f) in VECTOR_FUNCS.items():
        xs = [rng.standard_normal((size, *s)) for s in shapes]
        ts = [rng.standard_normal((size, *s)) for s in shapes]

        def run_vj(lib, f=f, xs=xs, ts=ts):
            F = _func_of(lib)
            n = len(xs)

            def one(*a):
                return F.jvp(lambda *p: f(lib, *p), tuple(a[:n]), tuple(a[n:]))

            return F.vmap(one)(*_lib_tree(lib, xs + ts))

        yield _pair(f"vmap(jvp) {name}", lambda r=run_vj: r(tg), lambda r=run_vj: r(torch))

        def run_vjr(lib, f=f, xs=xs):
            F = _func_of(lib)
            return F.vmap(F.jacrev(lambda *p: f(lib, *p), argnums=tuple(range(len(xs)))))(
                *_lib_tree(lib, xs)
            )

        yield _pair(f"vmap(jacrev) {name}", lambda r=run_vjr: r(tg), lambda r=run_vjr: r(torch))

        def run_vjf(lib, f=f, xs=xs):
            F = _func_of(lib)
            return F.vmap(F.jacfwd(lambda *p: f(lib, *p)))(*_lib_tree(lib, xs))

        yield _pair(f"vmap(jacfwd) {name}", lambda r=run_vjf: r(tg), lambda r=run_vjf: r(torch))
        ref_out = f(torch, *[torch.from_numpy(x[0]) for x in xs])
        cots = [_cotangents(rng, ref_out) for _ in range(size)]
        cot_batch = _stack_tree(cots)

        def run_vv(lib, f=f, xs=xs, cot_batch=cot_batch):
            F = _func_of(lib)
            n = len(xs)

            def one(*a):
                _, fn = F.vjp(lambda *p: f(lib, *p), *a[:n])
                return fn(a[n])

            return F.vmap(one)(*_lib_tree(lib, xs), _lib_tree(lib, cot_batch))

        yield _pair(f"vmap(vjp) {name}", lambda r=run_vv: r(tg), lambda r=run_vv: r(torch))
        ts0 = [t[0] for t in ts]
        xs0 = [x[0] for x in xs]

        def run_gj(lib, f=f, xs=xs0, ts=ts0):
            # reverse-over-forward: the gradient of a jvp's squared norm
            F = _func_of(lib)

            def loss(*a):
                _, t = F.jvp(lambda *p: f(lib, *p), tuple(a), tuple(_lib_tree(lib, ts)))
                leaves = t.values() if isinstance(t, dict) else _flat(t)
                return sum((leaf**2).sum() for leaf in leaves)

            return F.grad(loss, argnums=tuple(range(len(xs))))(*_lib_tree(lib, xs))

        yield _pair(
            f"grad(jvp) {name}", lambda r=run_gj: r(tg), lambda r=run_gj: r(torch), rtol=1e-6
        )


def _flat(t):
    if isinstance(t, (tuple, list)):
        return [leaf for v in t for leaf in _flat(v)]
    if isinstance(t, dict):
        return [leaf for v in t.values() for leaf in _flat(v)]
    return [t]


def _stack_tree(trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: _stack_tree([t[k] for t in trees]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_stack_tree([t[i] for t in trees]) for i in range(len(first)))
    return np.stack(trees)


def _run_pair(label, ours, theirs, loop, tol) -> list[str]:
    if loop is not None and _torch_wrong(label):
        theirs = loop
    try:
        ref = _quiet_torch(theirs)
        ref_error = None
    except Exception as e:  # noqa: BLE001  torch refusing the case is the fact we want
        ref, ref_error = None, e
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = ours()
            error = None
        except Exception as e:  # noqa: BLE001  classified below
            got, error = None, e
    problems = [f"leaked warning: {w.message}" for w in caught]
    if error is not None and not isinstance(error, CONTRACT):
        problems.append(f"non-contract exception {type(error).__name__}: {error}"[:400])
    elif ref_error is not None:
        if error is None:
            problems.append(
                f"accepted what torch refuses ({type(ref_error).__name__}: {ref_error})"[:400]
            )
    elif error is not None:
        problems.append(f"refused what torch accepts: {type(error).__name__}: {error}"[:400])
    else:
        close = _tree_close(got, ref, "result", **tol)
        if any(fnmatch.fnmatchcase(label, pat) for pat in GRAPH_KEPT):
            close = [p for p in close if "requires_grad=True, torch's False" not in p]
        problems += close
    return problems


def _run_all(cases) -> tuple[int, int, list[str]]:
    count = known = 0
    failures: list[str] = []
    for label, ours, theirs, loop, tol in cases:
        count += 1
        problems = _run_pair(label, ours, theirs, loop, tol)
        if problems and _known(label):
            known += 1
            continue
        failures += [f"{label}: {p}" for p in problems]
    return count, known, failures


@pytest.mark.parametrize(
    "family",
    [
        _grad_cases,
        _pytree_cases,
        _closure_cases,
        _vjp_jvp_cases,
        _jacobian_cases,
        _second_order_cases,
        _vmap_cases,
        _vmap_index_cases,
        _composition_cases,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_func_transforms_match_torch_func(family):
    count, known, failures = _run_all(family(np.random.default_rng(2026)))
    print(f"{family.__name__}: {count} cases, {known} known differences")
    assert count >= 10
    assert not failures, f"{len(failures)} problems in {count} cases:\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------
# 3. nn layers: functional_call, gradients over parameters, per-sample gradients, vmap


def _layers():
    """(name, tapegrad layer, torch layer (float64), a sample's input shape, in eval mode)."""
    tnn = torch.nn
    return [
        ("linear", tg.nn.Linear(4, 3), tnn.Linear(4, 3), (2, 4)),
        (
            "mlp",
            tg.nn.Sequential(tg.nn.Linear(4, 5), tg.nn.Tanh(), tg.nn.Linear(5, 2)),
            tnn.Sequential(tnn.Linear(4, 5), tnn.Tanh(), tnn.Linear(5, 2)),
            (3, 4),
        ),
        ("conv2d", tg.nn.Conv2d(2, 3, 3, padding=1), tnn.Conv2d(2, 3, 3, padding=1), (1, 2, 5, 5)),
        (
            "conv2d-groups",
            tg.nn.Conv2d(4, 4, 3, stride=2, groups=2),
            tnn.Conv2d(4, 4, 3, stride=2, groups=2),
            (1, 4, 6, 6),
        ),
        ("lstm", tg.nn.LSTM(3, 4), tnn.LSTM(3, 4), (5, 1, 3)),
        (
            "lstm-batch-first",
            tg.nn.LSTM(3, 2, batch_first=True),
            tnn.LSTM(3, 2, batch_first=True),
            (1, 4, 3),
        ),
        ("batchnorm-eval", tg.nn.BatchNorm2d(3).eval(), tnn.BatchNorm2d(3).eval(), (2, 3, 4, 4)),
        ("layernorm", tg.nn.LayerNorm(4), tnn.LayerNorm(4), (3, 4)),
        ("gru", tg.nn.GRU(3, 2), tnn.GRU(3, 2), (4, 1, 3)),
    ]


def _layer_state(rng, torch_layer):
    """Random parameters and buffers as numpy arrays, by name."""
    params = {
        k: rng.standard_normal(tuple(v.shape)) * 0.5 for k, v in torch_layer.named_parameters()
    }
    buffers = {}
    for k, v in torch_layer.named_buffers():
        if v.dtype.is_floating_point:
            buffers[k] = np.abs(rng.standard_normal(tuple(v.shape))) + 0.5
        else:
            buffers[k] = v.numpy().copy()
    return params, buffers


def _first(out):
    """An RNN's (output, state) as its output: the loss uses every tensor."""
    return out


def _loss(L, out):
    leaves = _flat(out)
    return sum((leaf.tanh() ** 2).sum() for leaf in leaves)


def _nn_cases(rng):
    size = 3
    for name, tg_layer, torch_layer, shape in _layers():
        torch_layer = torch_layer.double()
        params, buffers = _layer_state(rng, torch_layer)
        layers = {tg: tg_layer, torch: torch_layer}
        x = rng.standard_normal(shape)

        def call(lib, p, b, *args, layers=layers):
            return _func_of(lib).functional_call(layers[lib], (p, b), args)

        def run_fc(lib, x=x, params=params, buffers=buffers, call=call):
            return call(lib, _lib_tree(lib, params), _lib_tree(lib, buffers), _lib_tree(lib, x))

        yield _pair(f"functional_call {name}", lambda r=run_fc: r(tg), lambda r=run_fc: r(torch))

        def run_grad(lib, x=x, params=params, buffers=buffers, call=call):
            b = _lib_tree(lib, buffers)
            fn = _func_of(lib).grad(lambda p, x: _loss(lib, call(lib, p, b, x)), argnums=(0, 1))
            return fn(_lib_tree(lib, params), _lib_tree(lib, x))

        yield _pair(
            f"grad(functional_call) {name}", lambda r=run_grad: r(tg), lambda r=run_grad: r(torch)
        )
        # per-sample gradients: every sample is a batch of one (the layer's own batch dim)
        batch_dim = 1 if name in ("lstm", "gru") else 0
        xs = rng.standard_normal((size, *shape))

        def run_psg(lib, xs=xs, params=params, buffers=buffers, call=call, bd=batch_dim):
            F = _func_of(lib)
            b = _lib_tree(lib, buffers)

            def loss(p, sample):
                return _loss(lib, call(lib, p, b, sample))

            return F.vmap(F.grad(loss), in_dims=(None, 0))(
                _lib_tree(lib, params), _lib_tree(lib, xs)
            )

        def loop_psg(params=params, buffers=buffers, xs=xs, call=call):
            b = _lib_tree(torch, buffers)
            g = tfunc.grad(lambda p, sample: _loss(torch, call(torch, p, b, sample)))
            return _torch_loop_vmap(g, (None, 0), 0, _lib_tree(torch, [params, xs]))

        yield _pair(
            f"vmap(grad(functional_call)) {name}",
            lambda r=run_psg: r(tg),
            lambda r=run_psg: r(torch),
            loop=loop_psg,
        )

        def run_vm(lib, xs=xs, params=params, buffers=buffers, call=call):
            F = _func_of(lib)
            p, b = _lib_tree(lib, params), _lib_tree(lib, buffers)
            return F.vmap(lambda sample: call(lib, p, b, sample))(_lib_tree(lib, xs))

        def loop_vm(params=params, buffers=buffers, xs=xs, call=call):
            p, b = _lib_tree(torch, params), _lib_tree(torch, buffers)
            return _torch_loop_vmap(
                lambda sample: call(torch, p, b, sample), 0, 0, [_lib_tree(torch, xs)]
            )

        yield _pair(
            f"vmap(layer) {name}", lambda r=run_vm: r(tg), lambda r=run_vm: r(torch), loop=loop_vm
        )
        # an ensemble: per-model parameters stacked, the same input
        stacked = {k: rng.standard_normal((2, *v.shape)) * 0.5 for k, v in params.items()}

        def run_ens(lib, x=x, stacked=stacked, buffers=buffers, call=call):
            F = _func_of(lib)
            b = _lib_tree(lib, buffers)
            return F.vmap(lambda p, x: call(lib, p, b, x), in_dims=(0, None))(
                _lib_tree(lib, stacked), _lib_tree(lib, x)
            )

        def loop_ens(stacked=stacked, buffers=buffers, x=x, call=call):
            b = _lib_tree(torch, buffers)
            return _torch_loop_vmap(
                lambda p, x: call(torch, p, b, x), (0, None), 0, _lib_tree(torch, [stacked, x])
            )

        yield _pair(
            f"vmap ensemble {name}",
            lambda r=run_ens: r(tg),
            lambda r=run_ens: r(torch),
            loop=loop_ens,
        )
        # forward mode over the parameters and the input, and forward-over-reverse HVPs
        t_params = {k: rng.standard_normal(v.shape) for k, v in params.items()}
        t_x = rng.standard_normal(shape)

        def run_jvp(lib, x=x, params=params, buffers=buffers, call=call, tp=t_params, tx=t_x):
            b = _lib_tree(lib, buffers)
            return _func_of(lib).jvp(
                lambda p, inp: call(lib, p, b, inp),
                (_lib_tree(lib, params), _lib_tree(lib, x)),
                (_lib_tree(lib, tp), _lib_tree(lib, tx)),
            )

        yield _pair(
            f"jvp(functional_call) {name}", lambda r=run_jvp: r(tg), lambda r=run_jvp: r(torch)
        )

        def run_hvp(lib, x=x, params=params, buffers=buffers, call=call, tp=t_params, tx=t_x):
            F = _func_of(lib)
            b = _lib_tree(lib, buffers)
            g = F.grad(lambda p, inp: _loss(lib, call(lib, p, b, inp)), argnums=(0, 1))
            return F.jvp(
                g,
                (_lib_tree(lib, params), _lib_tree(lib, x)),
                (_lib_tree(lib, tp), _lib_tree(lib, tx)),
            )

        yield _pair(
            f"jvp(grad(functional_call)) {name}",
            lambda r=run_hvp: r(tg),
            lambda r=run_hvp: r(torch),
            rtol=1e-6,
        )

        def run_fwad(lib, x=x, params=params, buffers=buffers, call=call, tp=t_params, tx=t_x):
            # the forward_ad API directly: dual parameters and input, tangent of every output
            ad = fwAD if lib is tg else tfwAD
            b = _lib_tree(lib, buffers)
            with ad.dual_level():
                p = {
                    k: ad.make_dual(v, _lib_tree(lib, tp[k]))
                    for k, v in _lib_tree(lib, params).items()
                }
                inp = ad.make_dual(_lib_tree(lib, x), _lib_tree(lib, tx))
                outs = _flat(call(lib, p, b, inp))
                return [ad.unpack_dual(o).tangent for o in outs]

        yield _pair(
            f"forward_ad(layer) {name}", lambda r=run_fwad: r(tg), lambda r=run_fwad: r(torch)
        )
        if np.prod(shape) <= 24:

            def run_jac(lib, x=x, params=params, buffers=buffers, call=call):
                F = _func_of(lib)
                p, b = _lib_tree(lib, params), _lib_tree(lib, buffers)
                out = lambda x: _flat(call(lib, p, b, x))[0]  # noqa: E731
                return F.jacrev(out)(_lib_tree(lib, x)), F.jacfwd(out)(_lib_tree(lib, x))

            yield _pair(
                f"jacrev/jacfwd(layer) {name}", lambda r=run_jac: r(tg), lambda r=run_jac: r(torch)
            )


def test_nn_layers_under_func_match_torch_func():
    count, known, failures = _run_all(_nn_cases(np.random.default_rng(7)))
    print(f"nn: {count} cases, {known} known differences")
    assert count >= 40
    assert not failures, f"{len(failures)} problems in {count} cases:\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------
# 4. misuse: torch.func raises, tapegrad must raise a contract exception naming the
# transform; and vmap's randomness modes


def _error_cases(rng):
    """(label, word the message must contain, f(lib) that misuses the API)."""
    x32 = rng.standard_normal((3, 2))
    x42 = rng.standard_normal((4, 2))
    v3 = rng.standard_normal(3)

    def T(lib, a):
        return _lib_tree(lib, a)

    def rand(lib, x):
        return x + (torch.rand_like(x) if lib is torch else tg.rand_like(x))

    def dropout(lib, x):
        fn = torch.nn.functional.dropout if lib is torch else tg.nn.functional.dropout
        return fn(x, 0.5, training=True)

    def randn(lib, x):
        return x * (
            torch.randn(2, dtype=torch.float64) if lib is torch else tg.randn(2, dtype=tg.float64)
        )

    cases: list[tuple[str, str, Callable[[Any], Any]]] = [
        (
            "vmap batch sizes differ",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a, b: a * b)(T(L, x32), T(L, x42)),
        ),
        (
            "vmap in_dims out of range",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=2)(T(L, x32)),
        ),
        (
            "vmap in_dims negative out of range",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=-3)(T(L, x32)),
        ),
        (
            "vmap in_dims too many entries",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=(0, 0))(T(L, x32)),
        ),
        (
            "vmap in_dims a list",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=[0])(T(L, x32)),
        ),
        (
            "vmap in_dims a float",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=(0.5,))(T(L, x32)),
        ),
        (
            "vmap in_dims nested mismatch",
            "vmap",
            lambda L: _func_of(L).vmap(lambda p: p[0] * p[1], in_dims=((0, 0, 0),))(
                (T(L, x32), T(L, x32))
            ),
        ),
        (
            "vmap in_dim on a Python number",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a, s: a * s, in_dims=(0, 0))(T(L, x32), 2.0),
        ),
        (
            "vmap every in_dim None",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, in_dims=None)(T(L, x32)),
        ),
        (
            "vmap in_dim on a 0-d tensor",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2)(T(L, np.asarray(1.5))),
        ),
        ("vmap no inputs", "vmap", lambda L: _func_of(L).vmap(lambda: T(L, v3))()),
        (
            "vmap out_dims out of range",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, out_dims=3)(T(L, x32)),
        ),
        (
            "vmap out_dims too many",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: a * 2, out_dims=(0, 0))(T(L, x32)),
        ),
        ("vmap returns a float", "vmap", lambda L: _func_of(L).vmap(lambda a: 2.0)(T(L, x32))),
        (
            "vmap returns a string",
            "vmap",
            lambda L: _func_of(L).vmap(lambda a: (a, "s"))(T(L, x32)),
        ),
        (
            "vmap randomness unknown",
            "randomness",
            lambda L: _func_of(L).vmap(lambda a: a, randomness="sometimes")(T(L, x32)),
        ),
        (
            "vmap randomness=error rand_like",
            "random",
            lambda L: _func_of(L).vmap(lambda a: rand(L, a))(T(L, x32)),
        ),
        (
            "vmap randomness=error dropout",
            "random",
            lambda L: _func_of(L).vmap(lambda a: dropout(L, a))(T(L, x32)),
        ),
        (
            "vmap randomness=error randn",
            "random",
            lambda L: _func_of(L).vmap(lambda a: randn(L, a))(T(L, x32)),
        ),
        (
            "vmap(grad) randomness=error",
            "random",
            lambda L: _func_of(L).vmap(_func_of(L).grad(lambda a: rand(L, a).sum()))(T(L, x32)),
        ),
        (
            "vmap chunk_size 0",
            "chunk_size",
            lambda L: _func_of(L).vmap(lambda a: a, chunk_size=0)(T(L, x32)),
        ),
        ("grad of a vector", "grad", lambda L: _func_of(L).grad(lambda a: a * 2)(T(L, v3))),
        ("grad of a float", "grad", lambda L: _func_of(L).grad(lambda a: 2.0)(T(L, v3))),
        (
            "grad argnums out of range",
            "argnums",
            lambda L: _func_of(L).grad(lambda a: a.sum(), argnums=1)(T(L, v3)),
        ),
        (
            "grad argnums negative out of range",
            "argnums",
            lambda L: _func_of(L).grad(lambda a: a.sum(), argnums=-2)(T(L, v3)),
        ),
        (
            "grad argnums a float",
            "argnums",
            lambda L: _func_of(L).grad(lambda a: a.sum(), argnums=0.5)(T(L, v3)),
        ),
        (
            "grad argnums empty",
            "argnums",
            lambda L: _func_of(L).grad(lambda a: a.sum(), argnums=())(T(L, v3)),
        ),
        (
            "grad of an int tensor",
            "grad",
            lambda L: _func_of(L).grad(lambda a: (a * a).sum())(T(L, np.arange(3))),
        ),
        (
            "grad has_aux not a pair",
            "has_aux",
            lambda L: _func_of(L).grad(lambda a: a.sum(), has_aux=True)(T(L, v3)),
        ),
        (
            "grad has_aux a triple",
            "has_aux",
            lambda L: _func_of(L).grad(lambda a: (a.sum(), a, a), has_aux=True)(T(L, v3)),
        ),
        (
            "vjp cotangent shape",
            "shape",
            lambda L: _func_of(L).vjp(lambda a: a * 2, T(L, v3))[1](T(L, x32)),
        ),
        (
            "vjp cotangent structure",
            "structure",
            lambda L: _func_of(L).vjp(lambda a: (a, a), T(L, v3))[1](T(L, v3)),
        ),
        ("vjp output not a tensor", "vjp", lambda L: _func_of(L).vjp(lambda a: 2.0, T(L, v3))),
        (
            "jvp primals not a tuple",
            "primals",
            lambda L: _func_of(L).jvp(lambda a: a, T(L, v3), (T(L, v3),)),
        ),
        (
            "jvp tangents not a tuple",
            "tangents",
            lambda L: _func_of(L).jvp(lambda a: a, (T(L, v3),), T(L, v3)),
        ),
        (
            "jvp tangent shape",
            "shape",
            lambda L: _func_of(L).jvp(lambda a: a, (T(L, v3),), (T(L, x32),)),
        ),
        (
            "jvp count mismatch",
            "jvp",
            lambda L: _func_of(L).jvp(lambda a: a, (T(L, v3),), (T(L, v3), T(L, v3))),
        ),
        (
            "jvp output not a tensor",
            "jvp",
            lambda L: _func_of(L).jvp(lambda a: 2.0, (T(L, v3),), (T(L, v3),)),
        ),
        (
            "jvp int primal",
            "jvp",
            lambda L: _func_of(L).jvp(lambda a: a, (T(L, np.arange(3)),), (T(L, np.arange(3)),)),
        ),
        (
            "jacrev argnums out of range",
            "argnums",
            lambda L: _func_of(L).jacrev(lambda a: a * 2, argnums=2)(T(L, v3)),
        ),
        (
            "jacfwd argnums out of range",
            "argnums",
            lambda L: _func_of(L).jacfwd(lambda a: a * 2, argnums=2)(T(L, v3)),
        ),
        (
            "jacrev output not a tensor",
            "jacrev",
            lambda L: _func_of(L).jacrev(lambda a: 2.0)(T(L, v3)),
        ),
        (
            "jacfwd output not a tensor",
            "jacfwd",
            lambda L: _func_of(L).jacfwd(lambda a: 2.0)(T(L, v3)),
        ),
        (
            "jacfwd int input",
            "jacfwd",
            lambda L: _func_of(L).jacfwd(lambda a: a * 2)(T(L, np.arange(3))),
        ),
        (
            "jacrev int input",
            "jacrev",
            lambda L: _func_of(L).jacrev(lambda a: a * 2)(T(L, np.arange(3))),
        ),
        ("hessian of a float", "hessian", lambda L: _func_of(L).hessian(lambda a: 2.0)(T(L, v3))),
        (
            "grad(vmap) batch sizes differ",
            "vmap",
            lambda L: _func_of(L).grad(
                lambda a: _func_of(L).vmap(lambda p, q: p * q)(a, T(L, x42)).sum()
            )(T(L, x32)),
        ),
        (
            "vmap(jacrev) out_dims out of range",
            "vmap",
            lambda L: _func_of(L).vmap(_func_of(L).jacrev(lambda a: a.sin()), out_dims=4)(
                T(L, x32)
            ),
        ),
    ]
    yield from cases


def _functional_call_errors(rng):
    lin = {tg: tg.nn.Linear(2, 2), torch: torch.nn.Linear(2, 2).double()}
    w = rng.standard_normal((2, 2))
    x = rng.standard_normal((1, 2))

    def fc(L, params):
        return _func_of(L).functional_call(lin[L], params, (_lib_tree(L, x),))

    yield (
        "functional_call unknown name",
        "functional_call",
        lambda L: fc(L, {"weigth": _lib_tree(L, w)}),
    )
    yield (
        "functional_call name in two dicts",
        "functional_call",
        lambda L: fc(L, ({"weight": _lib_tree(L, w)}, {"weight": _lib_tree(L, w)})),
    )
    yield (
        "functional_call strict missing",
        "missing",
        lambda L: _func_of(L).functional_call(
            lin[L], {"weight": _lib_tree(L, w)}, (_lib_tree(L, x),), strict=True
        ),
    )


def _forward_ad_errors(rng):
    v3 = rng.standard_normal(3)
    ad = {tg: fwAD, torch: tfwAD}

    def T(L, a):
        return _lib_tree(L, a)

    def in_level(L, body):
        with ad[L].dual_level():
            return body()

    yield ("make_dual outside a level", "dual", lambda L: ad[L].make_dual(T(L, v3), T(L, v3)))
    yield (
        "make_dual tangent shape",
        "size",
        lambda L: in_level(L, lambda: ad[L].make_dual(T(L, v3), T(L, v3[:2]))),
    )
    yield (
        "make_dual int primal",
        "floating",
        lambda L: in_level(L, lambda: ad[L].make_dual(T(L, np.arange(3)), T(L, np.arange(3)))),
    )
    yield (
        "make_dual of a dual",
        "forward",
        lambda L: in_level(
            L, lambda: ad[L].make_dual(ad[L].make_dual(T(L, v3), T(L, v3)), T(L, v3))
        ),
    )


def _check_error(label, word, fn) -> list[str]:
    try:
        _quiet_torch(lambda: fn(torch))
        ref_error = None
    except Exception as e:  # noqa: BLE001
        ref_error = e
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(tg)
            error = None
        except Exception as e:  # noqa: BLE001
            error = e
    problems = [f"leaked warning: {w.message}" for w in caught]
    if ref_error is None:
        problems.append("torch accepts it: not a misuse (fix the case)")
    elif error is None:
        problems.append(
            f"accepted what torch refuses ({type(ref_error).__name__}: {ref_error})"[:300]
        )
    elif not isinstance(error, CONTRACT) and not (
        isinstance(error, AttributeError) and "functional_call" in label
    ):
        problems.append(f"non-contract exception {type(error).__name__}: {error}"[:300])
    elif word.lower() not in str(error).lower():
        problems.append(f"message does not say {word!r}: {type(error).__name__}: {error}"[:300])
    return problems


def test_misuse_raises_like_torch_func():
    failures: list[str] = []
    count = known = 0
    rng = np.random.default_rng(3)
    for label, word, fn in [
        *_error_cases(rng),
        *_functional_call_errors(rng),
        *_forward_ad_errors(rng),
    ]:
        count += 1
        problems = _check_error(label, word, fn)
        if problems and _known(f"error {label}"):
            known += 1
            continue
        failures += [f"error {label}: {p}" for p in problems]
    print(f"errors: {count} cases, {known} known differences")
    assert not failures, f"{len(failures)} problems in {count} cases:\n" + "\n".join(failures)


def _randomness_cases():
    """vmap's randomness modes: the same pattern of equal / distinct rows as torch.func."""
    draws = {
        "rand_like": lambda L, x: x + L.rand_like(x),
        "randn": lambda L, x: x * 0 + L.randn(16, dtype=L.float64),
        "dropout": lambda L, x: (torch.nn.functional if L is torch else tg.nn.functional).dropout(
            x + 1, 0.5, training=True
        ),
        "randn_like": lambda L, x: L.randn_like(x) * x + L.randn_like(x),
        "unbatched-randn": lambda L, x: L.randn(16, dtype=L.float64),
    }
    for name, draw in draws.items():
        for mode in ("same", "different"):
            for wrap in ("vmap", "vmap(grad)"):

                def run(L, draw=draw, mode=mode, wrap=wrap):
                    F = _func_of(L)
                    x = _lib_tree(L, np.zeros((4, 16)))  # 16 elements: rows can't collide
                    if wrap == "vmap":
                        f = lambda a: draw(L, a)  # noqa: E731
                    else:
                        f = F.grad(lambda a: (draw(L, a) * a).sum() + (a * a).sum())
                    out = _np(F.vmap(f, randomness=mode)(x))
                    rows = [out[i].tobytes() for i in range(out.shape[0])]
                    return out.shape, len(set(rows)) == 1, len(set(rows)) == len(rows)

                yield _pair(
                    f"randomness={mode} {wrap} {name}", lambda r=run: r(tg), lambda r=run: r(torch)
                )


def test_vmap_randomness_modes_match_torch_func():
    count, known, failures = _run_all(_randomness_cases())
    print(f"randomness: {count} cases, {known} known differences")
    assert not failures, f"{len(failures)} problems in {count} cases:\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------
# 5. forward AD as user code writes it: views, in-place changes, copies, casts, no_grad


def _no_grad_square(L, d):
    with L.no_grad():  # forward AD continues under no_grad, as in torch
        return d * d


def _in_place(d, method, *args):
    getattr(d, method)(*args)
    return d


def _forward_ad_api_cases(rng):
    x, t, y = (rng.standard_normal((3, 4)) for _ in range(3))
    ad = {tg: fwAD, torch: tfwAD}
    bodies: dict[str, Callable[[Any, Callable[[], Any], Any], Any]] = {
        "view row": lambda L, mk, y: mk()[1],
        "transpose": lambda L, mk, y: mk().T * 1,
        "detach": lambda L, mk, y: mk().detach(),
        "clone": lambda L, mk, y: mk().clone(),
        "mul_": lambda L, mk, y: _in_place(mk(), "mul_", 2.0),
        "add_ into a plain tensor": lambda L, mk, y: _in_place(y, "add_", mk()),
        "setitem into a plain tensor": lambda L, mk, y: _in_place(
            y, "__setitem__", slice(0, 2), mk()[:2]
        ),
        "no_grad": lambda L, mk, y: _no_grad_square(L, mk()),
        "reshape": lambda L, mk, y: mk().reshape(4, 3).exp(),
        "to float32": lambda L, mk, y: mk().to(L.float32),
        "where": lambda L, mk, y: L.where(y > 0, mk(), y),
        "stack": lambda L, mk, y: L.stack([mk(), y]),
        "unbind": lambda L, mk, y: mk().unbind(0),
        "split": lambda L, mk, y: mk().split(2, 0),
        "expand": lambda L, mk, y: mk()[:1].expand(3, 4) * 1,
        "pow with a dual exponent": lambda L, mk, y: L.pow(y.abs() + 0.5, mk()),
        "dual times itself": lambda L, mk, y: mk() * mk().sin(),
        "sort values": lambda L, mk, y: L.sort(mk(), 1).values,
        "cumprod": lambda L, mk, y: L.cumprod(mk(), 1),
        "masked_fill": lambda L, mk, y: mk().masked_fill(y > 0, 0.0),
        "norm": lambda L, mk, y: L.linalg.norm(mk()),
    }
    for name, body in bodies.items():

        def run(L, body=body):
            with ad[L].dual_level():

                def mk():
                    return ad[L].make_dual(_lib_tree(L, x), _lib_tree(L, t))

                out = body(L, mk, _lib_tree(L, y))
                outs = out if isinstance(out, tuple) else (out,)
                return tuple(_tangent_or_zeros(ad[L].unpack_dual(o).tangent, o) for o in outs)

        yield _pair(f"forward_ad {name}", lambda r=run: r(tg), lambda r=run: r(torch))


def _tangent_or_zeros(tangent, like):
    if tangent is not None:
        return tangent.detach() * 1  # torch's may be a ZeroTensor
    return (torch.zeros_like if isinstance(like, torch.Tensor) else tg.zeros_like)(like.detach())


def test_forward_ad_api_matches_torch():
    count, known, failures = _run_all(_forward_ad_api_cases(np.random.default_rng(5)))
    print(f"forward AD API: {count} cases, {known} known differences")
    assert not failures, f"{len(failures)} problems in {count} cases:\n" + "\n".join(failures)
