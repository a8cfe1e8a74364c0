"""Differential fuzzing of `tg.compile` against eager: a compiled function writes exactly
what eager writes (issue 14).

Random programs, each run twice from the same seed in two worlds, one eager and one under
`tg.compile`, for six calls (signatures A A A B B A: the first call traces, the next
replays, the first replay is checked against eager, B traces again or is the same
signature, the last call replays A's program again), with fresh input values at every
call. After each call the two worlds must agree bit for bit on:

- the outputs (values, NaN pattern, dtype, shape, requires_grad);
- the gradients a backward outside the function gives (`.grad` of the leaves; plain,
  `retain_graph=True` twice, `create_graph=True` second order, hooks on leaves and outputs),
  and those a backward inside it writes;
- parameters, gradients, optimizer state and buffers (BatchNorm's running statistics and
  batch counts) after each training step, whole steps compiled or the loss alone;
- the arguments' values (a function may write into them: eager for that signature);
- the random generator's state (dropout's masks);
- exceptions: eager raising means compiled raising the same type.

Ingredients of the tensor programs: unary and binary ops with broadcasting and Python
scalars, reductions with dim/keepdim, matmul, views (reshape, transpose, slicing, expand,
diagonal, unbind, split, select) and in-place ops on views of non-leaves (`add_`, `mul_`,
`copy_`, indexing assignment: CopySlices), detach, `no_grad` blocks, a Python scalar
argument (a new value traces again), requires_grad toggled between calls, float32 and
float64, shapes changed between calls, calls under `no_grad`, the same leaves reused with
new values (gradients accumulate), value reads (`.item()`: eager from then on with one
CompileWarning), hooks and `retain_grad()` inside, in-place writes into arguments, a
`.grad` read, a `backward()` inside. Training programs: Linear, Conv2d, BatchNorm (train,
eval, switched), Dropout, LSTM under SGD (momentum, Nesterov, weight decay), Adam
(amsgrad) and AdamW, `zero_grad(set_to_none=True/False)` inside or outside, learning rates
changed between calls, a batch size changed. And MXNet's `hybridize()` and MegEngine's
`jit.trace` on small programs against their eager selves.

`KNOWN` lists, by fnmatch pattern over the case label, the documented limits where the two
worlds may differ (each with the reason); they still run, and a stale pattern fails.
Seeded and deterministic; the whole file takes a few seconds.
"""

from __future__ import annotations

import fnmatch
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.compile import CompileWarning

N_TENSOR = 300  # random tensor programs
N_TRAIN = 80  # random training programs
PATTERN = "AAABBA"  # signatures of the six calls

# label pattern -> why compiled may differ from eager there (a documented limit)
KNOWN: dict[str, str] = {
    "* ret-input *": "an input returned as it is (or a view of it, taken again by the view "
    "ops) gets its head gradient from the engine and the rest from the one compiled node, "
    "already summed: eager adds the same terms in another order, so a gradient may differ "
    "in its last bit (docs/guides/compile.md, Limits)",
    "train#* step * scheduler": "Python side effects in fn (an LR scheduler's step()) happen "
    "when it traces only (docs/guides/compile.md, Whole training steps): the learning rate "
    "stops decaying in the replays",
}

ExcType = type[BaseException]


# ====================================================================== comparison
def _arr(t: Any) -> Any:
    if isinstance(t, tg.Tensor):
        return ("T", np.array(t._data, copy=True), t.requires_grad)
    return ("V", t)


def _flat(obj: Any) -> list[Any]:
    """A comparable record of `obj` (tensors anywhere in tuples, lists, dicts)."""
    if isinstance(obj, tg.Tensor):
        return [_arr(obj)]
    if isinstance(obj, (tuple, list)):
        out: list[Any] = [("seq", type(obj).__name__, len(obj))]
        for o in obj:
            out += _flat(o)
        return out
    if isinstance(obj, dict):
        out = [("dict", len(obj))]
        for k in sorted(obj, key=repr):
            out.append(("key", repr(k)))
            out += _flat(obj[k])
        return out
    if isinstance(obj, np.ndarray):
        return [("A", obj.copy())]
    return [("V", obj)]


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    return bool(a == b)


def _first_difference(a: list[Any], b: list[Any]) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} records vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if not _same(x, y):
            return f"record {i}: eager {_short(x)} vs compiled {_short(y)}"
    return None


def _short(r: Any) -> str:
    text = repr(r)
    return text if len(text) < 400 else text[:400] + "..."


@dataclass
class Outcome:
    records: list[Any] = field(default_factory=list)  # per call: its record
    warnings: list[str] = field(default_factory=list)  # CompileWarning messages
    compiled: Any = None  # the CompiledFunction (compiled world)


def _run_world(program: Any, compiled: bool) -> Outcome:
    outcome = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        world = program.setup()
        fn = program.function(world)
        if compiled:
            make = getattr(program, "compiled", None)  # a facade's own way, or tg.compile
            fn = make(world, fn) if make is not None else tg.compile(fn)
            outcome.compiled = fn
        for k, sig in enumerate(PATTERN):
            tg.manual_seed(1000 + k)  # dropout's masks: the same stream in both worlds
            record: list[Any] = [("call", k, sig)]
            try:
                record += program.call(world, fn, k, sig)
            except Exception as e:  # noqa: BLE001 - the types must agree
                record.append(("raised", type(e).__name__))
            record += program.state(world)
            record.append(("rng", repr(tg.random.generator().bit_generator.state)))
            outcome.records.append(record)
    for w in caught:
        if issubclass(w.category, CompileWarning):
            outcome.warnings.append(str(w.message))
        elif issubclass(w.category, RuntimeWarning):
            raise AssertionError(f"a NumPy warning leaked: {w.message} ({w.filename}:{w.lineno})")
    return outcome


def _known(label: str) -> str | None:
    return next((p for p in KNOWN if fnmatch.fnmatchcase(label, p)), None)


def _problems(program: Any) -> list[str]:
    eager = _run_world(program, compiled=False)
    compiled = _run_world(program, compiled=True)
    problems = []
    for k, (a, b) in enumerate(zip(eager.records, compiled.records)):
        diff = _first_difference(a, b)
        if diff is not None:
            problems.append(f"call {k} ({PATTERN[k]}): {diff}")
            break
    # each fallback reason is told once
    if len(set(compiled.warnings)) != len(compiled.warnings):
        problems.append(f"a CompileWarning repeated: {compiled.warnings}")
    extra = program.expect(compiled)
    if extra:
        problems.append(extra)
    return problems


def _check(program: Any) -> None:
    problems = _problems(program)
    if problems and _known(program.label) is not None:
        return
    assert not problems, f"{program.label}\n" + "\n".join(problems)


# ====================================================================== tensor programs
def _pos(a: tg.Tensor) -> tg.Tensor:
    return a.abs() + 0.5


# op name -> (arity, apply(s, *tensors, **params)); `s` is the program's Python scalar
UNARY: dict[str, Callable[..., tg.Tensor]] = {
    "exp": lambda s, a: a.tanh().exp(),
    "tanh": lambda s, a: a.tanh(),
    "sin": lambda s, a: a.sin(),
    "cos": lambda s, a: a.cos(),
    "sigmoid": lambda s, a: a.sigmoid(),
    "relu": lambda s, a: a.relu(),
    "abs": lambda s, a: a.abs(),
    "neg": lambda s, a: -a,
    "square": lambda s, a: a * a,
    "sqrt": lambda s, a: _pos(a).sqrt(),
    "log": lambda s, a: _pos(a).log(),
    "log1p": lambda s, a: a.abs().log1p(),
    "expm1": lambda s, a: a.tanh().expm1(),
    "clamp": lambda s, a: a.clamp(-0.5, 0.7),
    "pow": lambda s, a: _pos(a) ** 1.5,
    "rsub": lambda s, a: 1.0 - a,
    "rdiv": lambda s, a: 1.0 / _pos(a),
    "scale": lambda s, a: a * s,
    "shift": lambda s, a: a + s,
    "scalar_pow": lambda s, a: _pos(a) ** (s / 2),
    "gelu": lambda s, a: F.gelu(a),
    "softmax": lambda s, a: F.softmax(a, dim=-1),
    "cumsum": lambda s, a: a.cumsum(0) if a.ndim else a,
    "flip": lambda s, a: a.flip(0) if a.ndim else a,
    "clone": lambda s, a: a.clone(),
    # data-dependent shapes and orders: boolean masks, sorting, arg-reductions
    "mask": lambda s, a: a[a > 0.1],
    "sort": lambda s, a: a.sort(dim=-1)[0] if a.ndim else a,
    "topk": lambda s, a: a.topk(1, dim=-1)[0] if a.ndim else a,
    "gather_argmax": lambda s, a: a.gather(-1, a.argmax(-1, keepdim=True)) if a.ndim else a,
    "argsort_index": lambda s, a: a.reshape(-1)[a.reshape(-1).argsort()],
    "masked_fill": lambda s, a: a.masked_fill(a < -0.2, 0.5),
    # indices computed from values: as inputs (gather) or as indexing keys (eager then)
    "gather_by": lambda s, a: a.gather(-1, _index_from(a, a.shape[-1])) if a.ndim else a,
    "take_flat_by": lambda s, a: tg.take_along_dim(a, _index_from(a, a.numel()), None),
}


def _index_from(a: tg.Tensor, n: int) -> tg.Tensor:
    """Integer indices in [0, n) computed from `a`'s values."""
    return (a.abs() * 7.0).long() % max(n, 1)


BINARY: dict[str, Callable[..., tg.Tensor]] = {
    "add": lambda s, a, b: a + b,
    "sub": lambda s, a, b: a - b,
    "mul": lambda s, a, b: a * b,
    "div": lambda s, a, b: a / _pos(b),
    "maximum": lambda s, a, b: tg.maximum(a, b),
    "minimum": lambda s, a, b: tg.minimum(a, b),
    "where": lambda s, a, b: tg.where(a > b, a, b * 2.0),
    "lerp": lambda s, a, b: a * 0.3 + b * 0.7,
    "matmul": lambda s, a, b: a @ b,
    "matmul_t": lambda s, a, b: a @ b.mT,
    "cat": lambda s, a, b: tg.cat([a, b], dim=0),
    "stack": lambda s, a, b: tg.stack([a, b]),
    "index_by": lambda s, a, b: a[_index_from(b.reshape(-1), a.shape[0])],
    "index_select_by": lambda s, a, b: a.index_select(0, _index_from(b.reshape(-1), a.shape[0])),
    "index_add_by": lambda s, a, b: a.index_add(
        0, _index_from(b[:1].reshape(-1), a.shape[0]), a[:1]
    ),
}


def _reduce(s: Any, a: tg.Tensor, kind: str, dim: Any, keepdim: bool) -> tg.Tensor:
    if kind == "sum":
        return a.sum(dim=dim, keepdim=keepdim)
    if kind == "mean":
        return a.mean(dim=dim, keepdim=keepdim)
    if kind == "amax":
        return a.amax(dim=dim, keepdim=keepdim)
    if kind == "max":
        return a.max(dim=dim, keepdim=keepdim)[0] if dim is not None else a.max()
    if kind == "std":
        return a.std(dim=dim, keepdim=keepdim)
    if kind == "prod":
        return (a.tanh() + 1.5).prod(dim=dim, keepdim=keepdim) if dim is not None else a.prod()
    if kind == "logsumexp":
        return a.logsumexp(dim=dim, keepdim=keepdim)
    raise ValueError(kind)


def _view(a: tg.Tensor, kind: str, p: dict[str, Any]) -> tg.Tensor:
    if kind == "reshape_flat":
        return a.reshape(-1)
    if kind == "reshape_keep0":
        return a.reshape(a.shape[0], -1)
    if kind == "transpose":
        return a.transpose(p["d0"], p["d1"])
    if kind == "permute":
        return a.permute(*p["perm"])
    if kind == "slice":
        return a[p["index"]]
    if kind == "expand":
        return a.unsqueeze(0).expand(p["n"], *a.shape)
    if kind == "diagonal":
        return a.diagonal(p["offset"], p["d0"], p["d1"])
    if kind == "unbind":
        return a.unbind(p["dim"])[p["i"]]
    if kind == "split":
        return a.split(p["size"], dim=p["dim"])[p["i"]]
    if kind == "select":
        return a.select(p["dim"], p["i"])
    if kind == "unsqueeze":
        return a.unsqueeze(p["dim"])
    if kind == "mT":
        return a.mT
    raise ValueError(kind)


def _in_place(s: Any, a: tg.Tensor, b: tg.Tensor, view: str, vp: dict[str, Any], how: str):
    """A non-leaf `y`, a view of it written in place: the base afterwards (CopySlices)."""
    y = a * 1.0 if how != "clone" else a.clone()
    v = _view(y, view, vp)
    if how in ("add_", "clone"):
        v.add_(b)
    elif how == "mul_":
        v.mul_(b)
    elif how == "copy_":
        v.copy_(b)
    elif how == "scalar_mul_":
        v.mul_(s)
    elif how == "sub_alpha":
        v.sub_(b, alpha=0.5)
    elif how == "setitem":
        v[...] = b
    elif how == "setitem_first":
        v[0] = b.sum()
    elif how == "direct_add_":  # in place on the non-leaf itself, read through the view
        y.add_(b.sum())
        return y + v.sum()
    elif how == "view_of_view":
        w = v.unsqueeze(0)
        w.mul_(2.0)
    else:
        raise ValueError(how)
    return y


def _setitem(s: Any, a: tg.Tensor, b: tg.Tensor, index: Any, reduce: bool) -> tg.Tensor:
    y = a.clone()
    y[index] = b.mean() if reduce else b
    return y


def _detach_mix(s: Any, a: tg.Tensor, how: str) -> tg.Tensor:
    if how == "detach":
        return a.detach() * a + a
    if how == "data":
        return a * a.data
    if how == "no_grad":
        with tg.no_grad():
            c = a * 2.0 + 1.0
        return c + a
    if how == "no_grad_inplace":  # a no_grad write into a non-leaf: nothing recorded
        y = a * 1.0
        with tg.no_grad():
            y.mul_(3.0)
        return y * a
    if how == "detach_inplace":
        y = a * 1.0
        y.detach().add_(1.0)
        return y * 2.0
    raise ValueError(how)


def _apply(step: tuple[Any, ...], s: Any, vals: list[tg.Tensor]) -> tg.Tensor:
    kind, ins, params = step
    args = [vals[i] for i in ins]
    if kind in UNARY:
        return UNARY[kind](s, *args)
    if kind in BINARY:
        return BINARY[kind](s, *args)
    if kind == "reduce":
        return _reduce(s, *args, **params)
    if kind == "view":
        return _view(args[0], params["kind"], params["p"])
    if kind == "in_place":
        return _in_place(s, *args, **params)
    if kind == "setitem":
        return _setitem(s, *args, **params)
    if kind == "detach":
        return _detach_mix(s, *args, **params)
    raise ValueError(kind)


# ops whose indices come from values: some replay (gather), the others make the signature
# eager (an indexing key, a raw argsort), so they are drawn less often
DATA_DEPENDENT = {
    "mask",
    "sort",
    "topk",
    "gather_argmax",
    "argsort_index",
    "gather_by",
    "take_flat_by",
    "index_by",
    "index_select_by",
    "index_add_by",
}


def _pick(rng: np.random.Generator, ops: dict[str, Any]) -> str:
    names = [n for n in ops if (n in DATA_DEPENDENT) == (rng.random() < 0.15)]
    return str(rng.choice(names))


def _draw_view(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[str, dict[str, Any]]:
    nd = len(shape)
    kinds = ["reshape_flat", "slice", "expand", "unsqueeze"]
    if nd >= 1:
        kinds += ["reshape_keep0", "unbind", "split", "select"]
    if nd >= 2:
        kinds += ["transpose", "permute", "diagonal", "mT"]
    kind = str(rng.choice(kinds))
    p: dict[str, Any] = {}
    if kind == "transpose":
        p["d0"], p["d1"] = (int(d) for d in rng.choice(nd, 2, replace=False))
    elif kind == "permute":
        p["perm"] = tuple(int(d) for d in rng.permutation(nd))
    elif kind == "slice":
        index = []
        for n in shape:
            r = rng.integers(4)
            if r == 0:
                index.append(slice(None))
            elif r == 1:
                index.append(slice(int(rng.integers(0, max(n, 1))), None))
            elif r == 2:
                index.append(slice(None, None, 2))
            else:
                index.append(slice(None, max(1, n - 1)))
        if rng.random() < 0.3 and nd:
            index = [Ellipsis, index[-1]]
        p["index"] = tuple(index)
    elif kind == "expand":
        p["n"] = int(rng.integers(1, 3))
    elif kind == "diagonal":
        p["offset"] = int(rng.integers(-1, 2))
        p["d0"], p["d1"] = (0, 1) if rng.random() < 0.5 else (-2, -1)
    elif kind in ("unbind", "select"):
        p["dim"] = int(rng.integers(-nd, nd))
        p["i"] = int(rng.integers(0, shape[p["dim"]])) if shape[p["dim"]] else 0
    elif kind == "split":
        p["dim"] = int(rng.integers(-nd, nd))
        p["size"] = int(rng.integers(1, max(shape[p["dim"]], 1) + 1))
        p["i"] = 0 if rng.random() < 0.5 else -1
    elif kind == "unsqueeze":
        p["dim"] = int(rng.integers(-nd - 1, nd + 1))
    return kind, p


def _draw_step(
    rng: np.random.Generator, shapes: list[tuple[int, ...]], in_place: bool
) -> tuple[Any, ...]:
    """One step on the values so far; `in_place`: writes into non-leaves allowed (they make
    the signature eager, per the docs, so most programs go without)."""
    n = len(shapes)
    r = rng.random()
    if not in_place and 0.75 <= r < 0.94:
        r = rng.uniform(0.0, 0.75)
    i = int(rng.integers(n)) if rng.random() < 0.5 else n - 1  # favour the newest value
    j = int(rng.integers(n))
    shape = shapes[i]
    nd = len(shape)
    if r < 0.25:
        return (_pick(rng, UNARY), (i,), {})
    if r < 0.5:
        return (_pick(rng, BINARY), (i, j), {})
    if r < 0.62:
        kind = str(rng.choice(["sum", "mean", "amax", "max", "std", "prod", "logsumexp"]))
        if nd == 0 or rng.random() < 0.2:
            dim: Any = None
        elif rng.random() < 0.3 and nd >= 2:
            dim = tuple(int(d) for d in rng.choice(nd, 2, replace=False))
        else:
            dim = int(rng.integers(-nd, nd))
        if kind in ("max",) and isinstance(dim, tuple):
            dim = dim[0]
        return ("reduce", (i,), {"kind": kind, "dim": dim, "keepdim": bool(rng.random() < 0.5)})
    if r < 0.75:
        kind, p = _draw_view(rng, shape)
        return ("view", (i,), {"kind": kind, "p": p})
    if r < 0.88:
        kind, p = _draw_view(rng, shape)
        how = str(
            rng.choice(
                [
                    "add_",
                    "mul_",
                    "copy_",
                    "scalar_mul_",
                    "sub_alpha",
                    "setitem",
                    "setitem_first",
                    "direct_add_",
                    "view_of_view",
                    "clone",
                ]
            )
        )
        return ("in_place", (i, j), {"view": kind, "vp": p, "how": how})
    if r < 0.94:
        index: Any
        if nd == 0:
            index = ()
        elif rng.random() < 0.5:
            index = (slice(None, None, 2),) * min(nd, 2)
        else:
            index = (int(rng.integers(0, shape[0])) if shape[0] else 0,)
        return ("setitem", (i, j), {"index": index, "reduce": bool(rng.random() < 0.6)})
    hows = ["detach", "data", "no_grad"] + (
        ["no_grad_inplace", "detach_inplace"] if in_place else []
    )
    how = str(rng.choice(hows))
    return ("detach", (i,), {"how": how})


INSIDE = [
    *["none"] * 12,
    "backward",
    "item",
    "hook_arg",
    "hook_mid",
    "retain_mid",
    "inplace_arg",
    "grad_read",
    "bool_read",
]
OUTSIDE = [
    "none",
    "backward",
    "backward",
    "retain",
    "create",
    "hook_leaf",
    "hook_out",
    "twice",  # a second backward without retain_graph: both raise
    "write_then_backward",  # an input written in place before the backward
    "first_only",  # backward from the first output alone
    "write_outputs",  # in-place writes into the outputs, then backward
    "chain",  # the first output through fn again
    "retain_out",  # retain_grad() on the outputs
]
VARIANTS = [
    "same",
    "rg",
    "scalar",
    "dtype",
    "shape",
    "no_grad",
    "inference",
    "reuse",
    "int_scalar",
    "alias",  # B passes the same tensor as the first two arguments
]


@dataclass
class TensorProgram:
    label: str
    shapes: list[tuple[int, ...]]
    dtype: Any
    rg: list[bool]
    steps: list[tuple[Any, ...]]
    outputs: list[int]
    scalar: float
    inside: str
    outside: str
    variant: str
    seed: int

    # --------------------------------------------------------- the function
    def function(self, world: dict[str, Any]) -> Callable[..., Any]:
        steps, outputs, inside = self.steps, self.outputs, self.inside
        n_args = len(self.shapes)

        def fn(*args: Any) -> Any:
            tensors, s = list(args[:n_args]), args[n_args]
            vals = list(tensors)
            if inside == "inplace_arg":
                vals[-1].add_(1.0)  # arg -1 never requires grad in this case
            if inside == "hook_arg" and vals[0].requires_grad:
                vals[0].register_hook(lambda g: g * 3.0)
            if inside == "grad_read" and vals[0].grad is not None:
                vals.append(vals[0] * 1.0)
            for k, step in enumerate(steps):
                v = _apply(step, s, vals)
                if k == 0 and v.requires_grad:
                    if inside == "hook_mid":
                        v.register_hook(lambda g: g * 2.0)
                    elif inside == "retain_mid":
                        v.retain_grad()
                vals.append(v)
            outs = tuple(vals[i] for i in outputs)
            if inside == "item" and outs[0].sum().item() > 0:
                outs = (outs[0] * 2.0, *outs[1:])
            if inside == "bool_read" and bool((outs[0] > 0).any()):
                outs = (outs[0] + 1.0, *outs[1:])
            if inside == "backward":
                loss = sum((o * (0.5 + 0.25 * m)).sum() for m, o in enumerate(outs))
                loss.backward()
                return loss
            return outs if len(outs) > 1 else outs[0]

        return fn

    # --------------------------------------------------------- the calls
    def setup(self) -> dict[str, Any]:
        world: dict[str, Any] = {"leaves": None}
        if self.variant == "reuse":
            world["leaves"] = self._tensors(np.random.default_rng(self.seed), "A")
        return world

    def _sig(self, sig: str) -> tuple[Any, list[tuple[int, ...]], list[bool], Any]:
        dtype, shapes, rg, s = self.dtype, self.shapes, list(self.rg), self.scalar
        if sig == "B":
            if self.variant == "rg":
                rg[0] = not rg[0]
            elif self.variant == "scalar":
                s = s + 0.75
            elif self.variant == "int_scalar":
                s = int(round(s)) or 1
            elif self.variant == "dtype":
                dtype = tg.float64 if dtype == tg.float32 else tg.float32
            elif self.variant == "shape":
                n0 = shapes[0][0] if shapes[0] else None
                shapes = [
                    (sh[0] + 1, *sh[1:]) if sh and sh[0] == n0 and n0 > 1 else sh for sh in shapes
                ]
        return dtype, shapes, rg, s

    def _tensors(self, rng: np.random.Generator, sig: str) -> list[tg.Tensor]:
        dtype, shapes, rg, _ = self._sig(sig)
        out = []
        for shape, r in zip(shapes, rg):
            a = rng.standard_normal(shape)
            out.append(tg.tensor(a, dtype=dtype, requires_grad=r))
        return out

    def call(self, world: dict[str, Any], fn: Callable[..., Any], k: int, sig: str) -> list[Any]:
        rng = np.random.default_rng(self.seed * 100 + k)  # fresh values at each call
        _, _, _, s = self._sig(sig)
        if world["leaves"] is not None:
            leaves = world["leaves"]
            with tg.no_grad():
                for t in leaves:
                    t.copy_(tg.tensor(rng.standard_normal(t.shape), dtype=t.dtype))
        else:
            leaves = self._tensors(rng, sig)
        world["now"] = leaves
        if self.outside == "hook_leaf" and (world["leaves"] is None or k == 0):
            for t in leaves:  # fresh leaves, or the reused ones once
                if t.requires_grad:
                    t.register_hook(lambda g: g * 2.0)
        aliasable = len(leaves) > 1 and leaves[1].shape == leaves[0].shape
        if self.variant == "alias" and sig == "B" and aliasable:
            leaves = [leaves[0], leaves[0], *leaves[2:]]
            world["now"] = leaves
        if self.variant == "no_grad" and sig == "B":
            with tg.no_grad():
                out = fn(*leaves, s)
        elif self.variant == "inference" and sig == "B":
            with tg.inference_mode():
                out = fn(*leaves, s)
        else:
            out = fn(*leaves, s)
        # a replayed whole step returns its loss without a graph (docs/guides/compile.md)
        record = _flat(out.detach() if self.inside == "backward" else out)
        outs = list(out) if isinstance(out, tuple) else [out]
        if self.outside == "write_outputs":  # in place into what fn returned (views too)
            for o in outs:
                try:
                    o.mul_(2.0)
                    record.append(("wrote", True))
                except RuntimeError as e:  # a view of a leaf that requires grad
                    record.append(("wrote", type(e).__name__))
            record += _flat([(t.detach(), t._version) for t in leaves])
        like_first = (outs[0].shape, outs[0].dtype) == (leaves[0].shape, leaves[0].dtype)
        if self.outside == "chain" and like_first:  # the output through fn again: two nodes
            again = fn(outs[0], *leaves[1:], s)
            outs = list(again) if isinstance(again, tuple) else [again]
            record += _flat(again)
        diff = [o for o in outs if isinstance(o, tg.Tensor) and o.requires_grad]
        if self.outside == "none" or self.inside == "backward" or not diff:
            return record
        heads = [tg.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in diff]
        if self.outside == "retain_out":
            for o in diff:
                o.retain_grad()
            tg.autograd.backward(diff, heads)
            return record + _flat([o.grad for o in diff])
        if self.outside == "hook_out":
            for o in diff:
                o.register_hook(lambda g: g * 0.5)
        if self.outside == "create":
            wrt = [t for t in leaves if t.requires_grad]
            grads = tg.autograd.grad(diff, wrt, heads, create_graph=True, allow_unused=True)
            record += _flat(list(grads))
            total = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
            if isinstance(total, tg.Tensor):
                total.backward()
            return record
        if self.outside == "first_only":
            diff, heads = diff[:1], heads[:1]
        if self.outside == "write_then_backward":
            with tg.no_grad():  # a saved input changed: the version check raises
                leaves[0].mul_(2.0)
        tg.autograd.backward(diff, heads, retain_graph=self.outside == "retain")
        if self.outside == "retain":
            tg.autograd.backward(diff, heads)
        if self.outside == "twice":
            record.append(("first", _flat([t.grad for t in leaves])))
            tg.autograd.backward(diff, heads)
        return record

    def state(self, world: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        for t in world.get("now", []):
            out.append(("leaf", np.array(t._data, copy=True), t.requires_grad, t._version))
            out += _flat(t.grad)
        return out

    def expect(self, compiled: Outcome) -> str | None:
        """Documented fallbacks: a value read is told once and runs eagerly from then on."""
        fn = compiled.compiled
        if self.inside in ("item", "bool_read"):
            reads = [w for w in compiled.warnings if "reads a tensor's value" in w]
            if len(reads) != 1 or fn.eager_reason is None:
                return f"a value read: expected one warning and eager, got {compiled.warnings}"
        return None


def _draw_shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    """1-3 argument shapes that broadcast together (a base shape, some dims 1 or dropped)."""
    nd = int(rng.choice([0, 1, 2, 2, 3, 3]))
    big = rng.random() < 0.08  # >= 64 KiB: the in-place and out= passes
    base = tuple(int(rng.integers(2, 5)) for _ in range(nd))
    if big:
        base = (96, 96) if nd < 3 else (32, 16, 24)
    shapes = [base]
    for _ in range(int(rng.integers(0, 3))):
        r = rng.random()
        if r < 0.4:
            shapes.append(base)
        elif r < 0.7 and nd:
            shapes.append(tuple(1 if rng.random() < 0.5 else n for n in base))
        elif r < 0.85 and nd:
            shapes.append(base[int(rng.integers(0, nd)) :])
        else:
            shapes.append(base[::-1])  # for matmul
    return shapes


def _generate(seed: int) -> TensorProgram:
    rng = np.random.default_rng(seed)
    shapes = _draw_shapes(rng)
    dtype = tg.float32 if rng.random() < 0.4 else tg.float64
    inside = str(rng.choice(INSIDE))
    outside = str(rng.choice(OUTSIDE))
    variant = str(rng.choice(VARIANTS))
    if inside == "inplace_arg":
        shapes.append(shapes[0])
    rg = [bool(rng.random() < 0.8) for _ in shapes]
    if inside == "inplace_arg":
        rg[-1] = False
    if variant == "reuse" and inside == "inplace_arg":
        variant = "same"
    scalar = float(rng.choice([0.5, 1.5, 2.0, -1.25, 3.0]))
    in_place = bool(rng.random() < 0.3)
    # draw steps, trying each on sample tensors (a step that raises is drawn again)
    sample_rng = np.random.default_rng(seed + 7)
    vals = [tg.tensor(sample_rng.standard_normal(s), requires_grad=r) for s, r in zip(shapes, rg)]
    steps: list[tuple[Any, ...]] = []
    n_steps = int(rng.integers(2, 8))
    tries = 0
    while len(steps) < n_steps and tries < 60:
        tries += 1
        step = _draw_step(rng, [tuple(v.shape) for v in vals], in_place)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                v = _apply(step, scalar, vals)
        except Exception:  # noqa: BLE001 - an invalid draw: draw again
            continue
        if not isinstance(v, tg.Tensor) or np.dtype(v.dtype).kind != "f":
            continue
        steps.append(step)
        vals.append(v)
    outputs = [len(vals) - 1]
    if rng.random() < 0.3 and len(vals) > len(shapes) + 1:
        outputs.append(int(rng.integers(len(shapes), len(vals) - 1)))
    if rng.random() < 0.1:
        outputs.append(0)  # an input returned as it is
    names = "-".join(s[0] if s[0] not in ("view", "reduce") else s[2]["kind"] for s in steps)
    # an input returned as it is, or a view of one (its storage, its version counter)
    viewing = any(vals[o]._vc is vals[a]._vc for o in outputs for a in range(len(shapes)))
    returns = "ret-input" if viewing else "ret-new"
    # an output that fn also uses to compute another output (see KNOWN)
    consumed = {i for step in steps for i in step[1]}
    if any(o in consumed for o in outputs):
        returns += " out-used"
    label = (
        f"tensor#{seed} {variant} in:{inside} out:{outside} {np.dtype(dtype).name} "
        f"{returns} {shapes} {names}"
    )
    return TensorProgram(
        label, shapes, dtype, rg, steps, outputs, scalar, inside, outside, variant, seed
    )


TENSOR_PROGRAMS = [_generate(seed) for seed in range(N_TENSOR)]


@pytest.mark.parametrize("program", TENSOR_PROGRAMS, ids=lambda p: p.label.split(" ")[0])
def test_tensor_program_compiled_equals_eager(program):
    _check(program)


# ====================================================================== training programs
class _LSTMHead(nn.Module):
    def __init__(self, layers: int, dropout: float) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 5, num_layers=layers, batch_first=True, dropout=dropout)
        self.head = nn.Linear(5, 3)

    def forward(self, x: tg.Tensor) -> tg.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def _model(kind: str) -> tuple[nn.Module, tuple[int, ...]]:
    """A small network and its input's shape without the batch."""
    if kind == "mlp":
        return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)), (6,)
    if kind == "mlp_bn":
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 3)), (6,)
    if kind == "mlp_dropout":
        return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 3)), (6,)
    if kind == "cnn_bn":
        net = nn.Sequential(
            nn.Conv2d(2, 3, 3, padding=1),
            nn.BatchNorm2d(3),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(3 * 5 * 5, 3),
        )
        return net, (2, 5, 5)
    if kind == "cnn_dropout":
        net = nn.Sequential(
            nn.Conv2d(2, 3, 3), nn.Tanh(), nn.Dropout(0.25), nn.Flatten(), nn.Linear(27, 3)
        )
        return net, (2, 5, 5)
    if kind == "lstm":
        return _LSTMHead(1, 0.0), (4, 4)
    if kind == "lstm2_dropout":
        return _LSTMHead(2, 0.3), (4, 4)
    raise ValueError(kind)


def _optimizer(kind: str, params: Any) -> tg.optim.Optimizer:
    if kind == "sgd":
        return tg.optim.SGD(params, lr=0.1)
    if kind == "sgd_momentum":
        return tg.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3)
    if kind == "sgd_nesterov":
        return tg.optim.SGD(params, lr=0.05, momentum=0.8, nesterov=True)
    if kind == "adam":
        return tg.optim.Adam(params, lr=0.01)
    if kind == "adam_amsgrad":
        return tg.optim.Adam(params, lr=0.01, amsgrad=True, weight_decay=1e-2)
    if kind == "adamw":
        return tg.optim.AdamW(params, lr=0.01)
    raise ValueError(kind)


MODELS = ["mlp", "mlp_bn", "mlp_dropout", "cnn_bn", "cnn_dropout", "lstm", "lstm2_dropout"]
OPTIMIZERS = ["sgd", "sgd_momentum", "sgd_nesterov", "adam", "adam_amsgrad", "adamw"]
# where the compiled function ends: a whole step, the loss (backward and step outside), the
# module itself
SCOPES = ["step", "step", "loss", "module"]
ZERO_GRADS = ["opt_none", "opt_zeros", "module_none", "module_zeros"]
TRAIN_VARIANTS = ["same", "eval", "batch", "lr", "freeze", "train_to_eval"]
# inside a whole step (item, clip, create_graph: documented fallbacks; scheduler: a Python
# side effect, run at the trace only), or hooks on a parameter registered outside
TRAIN_EXTRAS = [
    *["none"] * 6,
    "item",
    "clip",
    "retain_graph",
    "create_graph",
    "param_hook",
    "post_hook",
    "scheduler",
]


@dataclass
class TrainProgram:
    label: str
    model: str
    optimizer: str
    scope: str
    zero_grad: str
    variant: str
    dtype: Any
    loss: str
    extra: str
    seed: int

    def setup(self) -> dict[str, Any]:
        tg.manual_seed(self.seed)
        net, shape = _model(self.model)
        if self.dtype == tg.float64:
            net = net.double()
        net.train()
        opt = _optimizer(self.optimizer, net.parameters())
        world = {"net": net, "shape": shape, "opt": opt, "accumulated": []}
        first = next(iter(net.parameters()))
        if self.extra == "param_hook":  # hooks on a parameter, registered outside
            first.register_hook(lambda g: g * 0.5)
        if self.extra == "post_hook":
            first.register_post_accumulate_grad_hook(
                lambda t: world["accumulated"].append(t.grad.numpy().sum())
            )
        if self.extra == "scheduler":
            world["scheduler"] = tg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        return world

    def _zero(self, world: dict[str, Any]) -> None:
        owner = world["opt"] if self.zero_grad.startswith("opt") else world["net"]
        owner.zero_grad(set_to_none=self.zero_grad.endswith("none"))

    def _loss(self, logits: tg.Tensor, y: tg.Tensor) -> tg.Tensor:
        if self.loss == "ce":
            return F.cross_entropy(logits, y)
        return F.mse_loss(logits, y)

    def function(self, world: dict[str, Any]) -> Callable[..., Any]:
        net, opt = world["net"], world["opt"]
        if self.scope == "module":
            return net
        if self.scope == "loss":
            return lambda x, y: self._loss(net(x), y)

        extra = self.extra

        def step(x: tg.Tensor, y: tg.Tensor) -> Any:
            self._zero(world)
            loss = self._loss(net(x), y)
            if extra == "create_graph":
                loss.backward(create_graph=True)
            else:
                loss.backward(retain_graph=extra == "retain_graph")
            if extra == "clip":
                tg.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
            opt.step()
            if extra == "scheduler":
                world["scheduler"].step()
            if extra == "item":
                return loss.item()
            return loss

        return step

    def call(self, world: dict[str, Any], fn: Callable[..., Any], k: int, sig: str) -> list[Any]:
        net, opt = world["net"], world["opt"]
        rng = np.random.default_rng(self.seed * 100 + k)
        batch = 4 + (self.variant == "batch" and sig == "B")
        if self.variant in ("eval", "train_to_eval"):
            net.train(sig == "A" if self.variant == "eval" else k < 3)
        if self.variant == "lr" and k == 3:
            for group in opt.param_groups:
                group["lr"] = group["lr"] * 0.5
        if self.variant == "freeze":
            first = next(iter(net.parameters()))
            first.requires_grad_(sig == "A")
        x = tg.tensor(rng.standard_normal((batch, *world["shape"])), dtype=self.dtype)
        if self.loss == "ce":
            y = tg.tensor(rng.integers(0, 3, batch))
        else:
            y = tg.tensor(rng.standard_normal((batch, 3)), dtype=self.dtype)
        if self.scope == "step":
            out = fn(x, y)
            return _flat(out.detach() if isinstance(out, tg.Tensor) else out)
        self._zero(world)
        out = fn(x) if self.scope == "module" else fn(x, y)
        loss = out if self.scope == "loss" else self._loss(out, y)
        record = _flat(loss)
        loss.backward()
        opt.step()
        return record

    def state(self, world: dict[str, Any]) -> list[Any]:
        net, opt = world["net"], world["opt"]
        out: list[Any] = []
        for name, p in net.named_parameters():
            out.append(("param", name, np.array(p._data, copy=True)))
            out += _flat(p.grad)
        for name, b in net.named_buffers():
            out.append(("buffer", name, np.array(b._data, copy=True)))
        for m in net.modules():
            if hasattr(m, "num_batches_tracked"):
                out += _flat(m.num_batches_tracked)
        out += _flat(opt.state_dict()["state"])
        out += _flat([group["lr"] for group in opt.param_groups])
        out += _flat(world["accumulated"])
        return out

    def expect(self, compiled: Outcome) -> str | None:
        info = compiled.compiled.cache_info()
        if self.scope == "step" and not compiled.warnings and info.hits == 0:
            return f"a whole step never replayed: {info}"
        fallback = {
            "item": "reads a tensor's value",
            "clip": "a .grad",
            "create_graph": "of a kind not replayed",
        }.get(self.extra if self.scope == "step" else "")
        if fallback and not any(fallback in w for w in compiled.warnings):
            return f"expected a CompileWarning with {fallback!r}, got {compiled.warnings}"
        return None


def _generate_train(seed: int) -> TrainProgram:
    rng = np.random.default_rng(10_000 + seed)
    model = MODELS[seed % len(MODELS)]
    optimizer = str(rng.choice(OPTIMIZERS))
    scope = str(rng.choice(SCOPES))
    zero_grad = str(rng.choice(ZERO_GRADS))
    variant = str(rng.choice(TRAIN_VARIANTS))
    dtype = tg.float32 if rng.random() < 0.5 else tg.float64
    loss = "ce" if rng.random() < 0.6 else "mse"
    extra = str(rng.choice(TRAIN_EXTRAS))
    label = (
        f"train#{seed} {model} {optimizer} {scope} {zero_grad} {variant} {np.dtype(dtype).name} "
        f"{loss} {extra}"
    )
    return TrainProgram(
        label, model, optimizer, scope, zero_grad, variant, dtype, loss, extra, seed
    )


TRAIN_PROGRAMS = [_generate_train(seed) for seed in range(N_TRAIN)]


@pytest.mark.parametrize("program", TRAIN_PROGRAMS, ids=lambda p: p.label.split(" ")[0])
def test_training_program_compiled_equals_eager(program):
    _check(program)


def test_every_known_difference_still_occurs():
    """A KNOWN pattern that matches no differing program is stale: drop it."""
    used = set()
    for program in TENSOR_PROGRAMS + TRAIN_PROGRAMS:
        pattern = _known(program.label)
        if pattern and pattern not in used and _problems(program):
            used.add(pattern)
    assert set(KNOWN) <= used, f"stale KNOWN entries: {sorted(set(KNOWN) - used)}"


def test_most_programs_replay():
    """The fuzzer tests replays, not only eager fallbacks: most programs without a
    documented fallback replay at least once, and every training program does."""
    replayed = 0
    sample = TENSOR_PROGRAMS[::4]
    for program in sample:
        outcome = _run_world(program, compiled=True)
        replayed += outcome.compiled.cache_info().hits > 0 and not outcome.warnings
    assert replayed > len(sample) // 2, f"{replayed} of {len(sample)} replayed"


# ====================================================================== the facades
def _mx_net(kind: str) -> Any:
    from tapegrad.compat import mxnet as mx
    from tapegrad.compat.mxnet.gluon import nn as gnn

    net = gnn.HybridSequential()
    if kind == "dense":
        net.add(gnn.Dense(8, activation="relu"), gnn.Dense(3))
    elif kind == "dense_dropout":
        net.add(gnn.Dense(8, activation="tanh"), gnn.Dropout(0.3), gnn.Dense(3))
    elif kind == "batch_norm":  # BatchNorm's statistics: eager, with one warning per block
        net.add(gnn.Dense(4), gnn.BatchNorm(), gnn.Dense(3))
    else:
        raise ValueError(kind)
    net.initialize(mx.init.Xavier())
    return net


@dataclass
class FacadeProgram:
    """MXNet's `hybridize()` and MegEngine's `jit.trace` against their eager selves (the
    compiled world hybridizes, or decorates, what the eager world runs as it is)."""

    label: str
    framework: str
    kind: str
    optimizer: str
    seed: int

    def setup(self) -> dict[str, Any]:
        tg.manual_seed(self.seed)
        if self.framework == "mxnet":
            from tapegrad.compat import mxnet as mx

            mx.random.seed(self.seed)
            net = _mx_net(self.kind)
            net(mx.np.array(np.zeros((2, 5), dtype=np.float32)))  # deferred initialisation
            trainer = mx.gluon.Trainer(
                net.collect_params(), self.optimizer, {"learning_rate": 0.05}
            )
            return {"net": net, "trainer": trainer}
        import tapegrad.compat.megengine as mge
        import tapegrad.compat.megengine.module as M

        net = M.Sequential(M.Linear(5, 8), M.ReLU(), M.Linear(8, 3))
        opt_class = mge.optimizer.SGD if self.optimizer == "sgd" else mge.optimizer.Adam
        opt = opt_class(net.parameters(), lr=0.05)
        return {"net": net, "opt": opt}

    def function(self, world: dict[str, Any]) -> Callable[..., Any]:
        net = world["net"]
        if self.framework == "mxnet":
            return net
        import tapegrad.compat.megengine.functional as MF
        from tapegrad.compat.megengine.autodiff import GradManager

        opt = world["opt"]
        world["gm"] = gm = GradManager().attach(net.parameters())
        if self.kind == "forward":
            return lambda x: MF.relu(net(x)) * 2.0
        if self.kind == "loss":  # compiled; GradManager's backward and the step outside
            return lambda x, y: MF.loss.square_loss(net(x), y)

        def step(x: Any, y: Any) -> Any:  # eager, with one warning: gm.backward() inside
            with gm:
                loss = MF.loss.square_loss(net(x), y)
                gm.backward(loss)
            opt.step().clear_grad()
            return loss

        return step

    def compiled(self, world: dict[str, Any], fn: Callable[..., Any]) -> Any:
        if self.framework == "mxnet":
            world["net"].hybridize(active=True, static_alloc=True, static_shape=True)
            return fn
        import tapegrad.compat.megengine as mge

        return mge.jit.trace(fn, symbolic=True)

    def call(self, world: dict[str, Any], fn: Callable[..., Any], k: int, sig: str) -> list[Any]:
        rng = np.random.default_rng(self.seed * 100 + k)
        batch = 4 + (sig == "B")
        x_np = rng.standard_normal((batch, 5)).astype(np.float32)
        y_np = rng.standard_normal((batch, 3)).astype(np.float32)
        if self.framework == "mxnet":
            from tapegrad.compat import mxnet as mx
            from tapegrad.compat.mxnet import autograd

            x = mx.np.array(x_np)
            if k == 4:  # a prediction outside record(): another signature
                return [("predict", np.array(fn(x).asnumpy(), copy=True))]
            with autograd.record():
                out = fn(x)
                loss = ((out - mx.np.array(y_np)) ** 2).mean()
            loss.backward()
            world["trainer"].step(batch)
            return [("out", np.array(out.asnumpy(), copy=True))]
        import tapegrad.compat.megengine as mge

        x, y = mge.tensor(x_np), mge.tensor(y_np)
        if self.kind == "forward":
            out = fn(x)
        elif self.kind == "loss":
            with world["gm"]:
                out = fn(x, y)
                world["gm"].backward(out)
            record = [("out", np.array(out.numpy(), copy=True))] + self.state(world)
            world["opt"].step().clear_grad()
            return record
        else:
            out = fn(x, y)
        return [("out", np.array(out.numpy(), copy=True))]

    def state(self, world: dict[str, Any]) -> list[Any]:
        out: list[Any] = []
        if self.framework == "mxnet":
            for i, p in enumerate(world["net"].collect_params().values()):  # (names count
                out.append((i, np.array(p.data().asnumpy(), copy=True)))  # blocks globally)
                if p.grad_req != "null":
                    out.append((i, "grad", np.array(p.grad().asnumpy(), copy=True)))
            return out
        for p in world["net"].parameters():
            out.append(("param", np.array(p._data, copy=True)))
            out += _flat(p.grad)
        return out

    def expect(self, compiled: Outcome) -> str | None:
        fn = compiled.compiled
        info = (fn if self.framework == "megengine" else fn._hybrid).cache_info()
        if self.kind not in ("grad_manager", "batch_norm") and info.hits < 2:
            return f"expected replays: {info}"
        if self.kind in ("batch_norm", "grad_manager"):
            if not compiled.warnings:
                return "expected a CompileWarning (a documented fallback)"
        elif compiled.warnings:
            return f"unexpected CompileWarnings: {compiled.warnings}"
        return None


FACADE_PROGRAMS = [
    FacadeProgram(f"facade#{i} {fw} {kind} {opt}", fw, kind, opt, 50 + i)
    for i, (fw, kind, opt) in enumerate(
        [
            ("mxnet", "dense", "sgd"),
            ("mxnet", "dense", "adam"),
            ("mxnet", "dense_dropout", "sgd"),
            ("mxnet", "dense_dropout", "adam"),
            ("mxnet", "batch_norm", "sgd"),
            ("megengine", "forward", "sgd"),
            ("megengine", "loss", "sgd"),
            ("megengine", "loss", "adam"),
            ("megengine", "grad_manager", "sgd"),
        ]
    )
]


@pytest.mark.parametrize("program", FACADE_PROGRAMS, ids=lambda p: p.label.split(" ")[0])
def test_facade_program_compiled_equals_eager(program):
    _check(program)
