"""An optional pass: elementwise forwards written as one NumPy expression in the program.

An op's forward is called through two Python frames (the op's function, its dtype helper);
for the arithmetic operators and the common ufuncs the program can say `v5 = v4 * C3` or
`v6 = TANH(v5)` instead. Each inlined line is *checked* when the program is built: evaluated
on the traced arrays it must give an array of the traced dtype, bit for bit the value the op
gives on them, or the op keeps its call. So this table can only ever make a program faster,
never different. The same holds for the derivative rules written as expressions
(`gradients`): each is checked against the rule itself. matmul's lines are checked on small
arrays of the traced ranks, dtypes and layouts instead, once per process (`SIZE_FREE` says
why that is the same guarantee).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .tracing import Instr

Binder = Callable[[str, Any], str]  # bind(prefix, value): the name the program gives value
_SLOT = re.compile(r"\{(\d+)\}")

ENABLED = True  # bench/compile_bench.py measures the program with and without it
GRADIENTS = True  # the derivative rules as expressions (bench/NOTES.md measured it alone)

_OPERATORS = {
    "mul": "{0} * {1}",
    "add": "{0} + {1}",
    "sub": "{0} - {1}",
    "div": "{0} / {1}",
    "neg": "-{0}",
}
_UFUNCS = {
    name: getattr(np, name)
    for name in ("exp", "sin", "cos", "tanh", "log", "sqrt", "log1p", "expm1")
}
# NumPy functions the templates below name in capitals ({MATMUL}, ...)
_FUNCS: dict[str, Callable[..., Any]] = {
    "COS": np.cos,
    "MATMUL": np.matmul,
    "MAX": np.maximum,
    "MUL": np.multiply,
    "NE": np.not_equal,
}
# other ops whose forward is one NumPy call (the op's own function adds frames, a dtype
# check and an error-state switch; the program runs under warnings-off as a whole)
_CALLS = {
    "matmul": "{MATMUL}({0}, {1})",
    "relu": "{MAX}({0}, 0)",
}
# the same forwards writing into an input's buffer (`{out}`: its name), for the program's
# in-place pass (program.py): the operator or ufunc itself, so the bits are the same
_IN_PLACE = {
    "mul": "{UF}({0}, {1}, out={out})",
    "add": "{UF}({0}, {1}, out={out})",
    "sub": "{UF}({0}, {1}, out={out})",
    "div": "{UF}({0}, {1}, out={out})",
    "neg": "{UF}({0}, out={out})",
    "relu": "{MAX}({0}, 0, out={out})",
    **{name: "{UF}({0}, out={out})" for name in _UFUNCS},
}
_OPERATOR_UFUNCS = {
    "mul": np.multiply,
    "add": np.add,
    "sub": np.subtract,
    "div": np.true_divide,
    "neg": np.negative,
}
# results that are always a fresh array the program owns (no view, no input returned)
FRESH = frozenset(_OPERATORS) | frozenset(_UFUNCS) | frozenset(_CALLS)


# --- where a check may run on small arrays (bench/NOTES.md, stop 19: the trace's cost)
# matmul's forward and rule (ops/linalg.py) make, whatever the operands' sizes and values,
# exactly the NumPy calls their templates here write: `np.matmul(x1, x2)` after a dtype
# check; per wanted input `np.matmul(g, np.swapaxes(b, -1, -2))` and
# `np.matmul(np.swapaxes(a, -1, -2), g)`, branching only on the operands' ranks and on
# `needs`; `.T` of a 2-D array is that swapaxes view (the same shape, strides and buffer).
# So template and op make one and the same call on the same operands, and the same bits
# follow at any size (alignment included: both pass the same objects). What a check can
# still find wrong is the template (an operand swapped, a transpose missed, a slot
# misnumbered, a namespace that is not NumPy's), and that shows on any operands of the same
# ranks, dtypes and memory layouts: matmul is checked on small arrays of those, dimension
# sizes equal (and 1) where the traced ones are equal (are 1), once per process for each
# (op, template, namespace, that pattern) (`_verdicts`). Every other op keeps its check on
# the traced arrays themselves: elementwise forwards split large arrays across threads
# (ops/parallel.py), NumPy's SIMD loops take a tail or an unaligned head differently,
# reductions sum pairwise in blocks: their bits may depend on the size.
SIZE_FREE = frozenset({"matmul"})
# (what the check was about) -> passed; a check that failed once fails for the key again
_verdicts: dict[tuple[Any, ...], Any] = {}


def forget_verdicts() -> None:
    """Forget every memoized check (bench/trace_cost.py: each round pays a first trace)."""
    _verdicts.clear()


def _used(templates: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """The `_FUNCS` entries gradient templates call (part of a memo key: what was checked)."""
    return tuple((k, f) for k, f in _FUNCS.items() if any("{" + k + "}" in t for t in templates))


def _layout(a: np.ndarray[Any, Any]) -> tuple[str, bool, bool]:
    return (a.dtype.str, a.flags.c_contiguous, a.flags.f_contiguous)


def _shrunk(
    arrays: list[Any], out: np.ndarray[Any, Any]
) -> tuple[list[Any], np.ndarray[Any, Any], tuple[Any, ...]] | None:
    """(small arrays like `arrays`, a small empty array like `out`, their pattern) or None.

    Like: the same dtype, rank and layout (C- or F-contiguous; anything else, or an array
    that is not a float ndarray, gives None: checked at full size then); dimension sizes
    replaced consistently (0 and 1 kept, each other size by its own small one, so sizes
    equal across the arrays stay equal and different ones different). The pattern (the
    small shapes, dtypes and layouts) is what a memo key holds of the arrays."""
    sizes: dict[int, int] = {0: 0, 1: 1}

    def small(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sizes.setdefault(n, len(sizes) + 1) for n in shape)

    rng = np.random.default_rng(1)
    probes: list[Any] = []
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
            return None
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            return None
        p = np.asarray(rng.standard_normal(small(a.shape), dtype=a.dtype))
        if not a.flags.c_contiguous:
            p = np.asfortranarray(p)
        if _layout(p) != _layout(a):
            return None
        probes.append(p)
    like = np.empty(small(out.shape), out.dtype)
    pattern = (tuple((p.shape, *_layout(p)) for p in probes), like.shape, like.dtype.str)
    return probes, like, pattern


def expression(
    instr: Instr,
    args: list[str],
    arrays: list[Any],
    final: np.ndarray[Any, Any],
    bind: Binder,
) -> str | None:
    """The inline expression for `instr` on argument names `args`, or None to keep the call.

    `arrays` are the traced inputs, `final` the traced output, `bind(prefix, value)` names a
    value for the generated code."""
    if not ENABLED or instr.params or type(final) is not np.ndarray:
        return None
    name = instr.op.name
    funcs: dict[str, Callable[..., Any]] = {}
    if name in _OPERATORS:
        template = _OPERATORS[name]
    elif name in _UFUNCS:
        template = "{UF}({0})"
        funcs["UF"] = _UFUNCS[name]
    elif name in _CALLS and instr.xp is np:
        template = _CALLS[name]
    else:
        return None
    return _checked(instr, template, funcs, args, arrays, final, bind)


def in_place(
    instr: Instr,
    target: int,
    args: list[str],
    arrays: list[Any],
    final: np.ndarray[Any, Any],
    bind: Binder,
) -> str | None:
    """The expression of `instr` writing its result into input `target`'s buffer (that
    input is an intermediate whose last use this is), checked like `expression` on copies
    of the traced arrays; or None."""
    name = instr.op.name
    template = _IN_PLACE.get(name)
    if (
        not ENABLED
        or template is None
        or instr.params
        or instr.xp is not np
        or type(final) is not np.ndarray
    ):
        return None
    a = arrays[target]
    if type(a) is not np.ndarray or a.shape != final.shape or a.dtype != final.dtype:
        return None
    funcs = {"UF": _OPERATOR_UFUNCS[name] if name in _OPERATOR_UFUNCS else _UFUNCS.get(name)}
    template = template.replace("{out}", "{" + str(target) + "}")
    copies = [x.copy() if type(x) is np.ndarray else x for x in arrays]
    # the check runs on copies (the in-place write must not change a traced value)
    return _checked(instr, template, funcs, args, arrays, final, bind, run_on=copies)


def aligned_empty(shape: tuple[int, ...], dtype: npt.DTypeLike) -> np.ndarray[Any, Any]:
    """An uninitialised array whose data starts on a 64-byte boundary (a cache line: a GEMM
    storing into it does not split lines; malloc gives 16-byte alignment). A view of a
    slightly larger byte buffer."""
    dt = np.dtype(dtype)
    nbytes = dt.itemsize
    for n in shape:
        nbytes *= n
    raw = np.empty(nbytes + 64, np.uint8)
    start: int = -raw.__array_interface__["data"][0] % 64
    return raw[start : start + nbytes].view(dt).reshape(shape)


def aligned_matmul(
    instr: Instr, args: list[str], arrays: list[Any], final: np.ndarray[Any, Any], bind: Binder
) -> str | None:
    """`matmul` writing into a fresh cache-line-aligned array (see `aligned_empty`), checked
    like `expression`; or None."""
    if not ENABLED or instr.op.name != "matmul" or instr.params or instr.xp is not np:
        return None
    if type(final) is not np.ndarray or final.ndim != 2:
        return None
    # checked with the names SHAPE and DTYPE for the result's (a memo key holds no value),
    # which the program's names for them then replace
    found = _checked(
        instr,
        "{MATMUL}({0}, {1}, out={AL}(SHAPE, DTYPE))",
        {"AL": aligned_empty},
        args,
        arrays,
        final,
        bind,
        extra={"SHAPE": final.shape, "DTYPE": final.dtype},
        out_meta=("SHAPE", "DTYPE"),
    )
    if found is None:
        return None
    names = bind("S", final.shape) + ", " + bind("D", final.dtype)
    return found.replace("SHAPE, DTYPE", names)


def _checked(
    instr: Instr,
    template: str,
    funcs: Mapping[str, Callable[..., Any] | None],  # None: a name the template does not use
    args: list[str],
    arrays: list[Any],
    final: np.ndarray[Any, Any],
    bind: Binder,
    run_on: list[Any] | None = None,
    extra: dict[str, Any] | None = None,
    out_meta: tuple[str, str] | None = None,
) -> str | None:
    """`template` on `args` if, evaluated on the traced arrays (`run_on`: on these
    instead), it gives an array of the traced dtype and shape, bit for bit what the op's
    forward gives; else None. For an op of `SIZE_FREE`, evaluated on small arrays shaped
    like the traced ones instead (`_shrunk`), once per process per key (`_verdicts`);
    `out_meta`: the names in `extra` of the result's shape and dtype (they follow it)."""
    if len(arrays) != len({int(k) for k in _SLOT.findall(template)}):
        return None
    table = {**_FUNCS, **funcs}
    names = {k: bind("U", f) for k, f in table.items() if "{" + k + "}" in template}
    if run_on is None and instr.op.name in SIZE_FREE:
        small = _shrunk(arrays, final)
        if small is not None:
            arrays, final, pattern = small
            used = tuple((k, table[k]) for k in names)  # the functions the template calls
            key = ("forward", instr.op.forward, id(instr.xp), template, used, pattern)
            verdict = _verdicts.get(key)
            if verdict is None:
                if out_meta is not None:
                    extra = {out_meta[0]: final.shape, out_meta[1]: final.dtype}
                verdict = _verdicts[key] = _forward_same(
                    instr, template, table, names, arrays, final, extra
                )
            return template.format(*args, **names) if verdict else None
    values = run_on if run_on is not None else arrays
    if not _forward_same(instr, template, table, names, arrays, final, extra, values):
        return None
    return template.format(*args, **names)


def _forward_same(
    instr: Instr,
    template: str,
    table: Mapping[str, Callable[..., Any] | None],
    names: dict[str, str],
    arrays: list[Any],
    final: np.ndarray[Any, Any],
    extra: dict[str, Any] | None,
    run_on: list[Any] | None = None,
) -> bool:
    """Whether `template` evaluated on `arrays` (`run_on`: on these instead) gives an array
    of `final`'s dtype and shape, bit for bit what the op's forward gives on `arrays`."""
    values = run_on if run_on is not None else arrays
    scope: dict[str, Any] = {f"a{i}": a for i, a in enumerate(values)}
    scope.update((n, table[k]) for k, n in names.items())
    scope.update(extra or {})
    code = template.format(*[f"a{i}" for i in range(len(values))], **names)
    with np.errstate(all="ignore"):  # the op ran on these values already; only compare
        # the op again, on the same arrays: in a training step the optimizer has changed
        # the parameters since the trace, so the traced result is not what to compare with
        want = instr.op.forward(instr.xp, *arrays)
        value = eval(code, scope)  # noqa: S307 - our own template
    return (
        type(want) is np.ndarray  # (else the dispatcher would convert it: keep the call)
        and want.dtype == final.dtype
        and type(value) is np.ndarray
        and value.dtype == final.dtype
        and value.shape == final.shape
        and np.array_equal(value, want, equal_nan=final.dtype.kind in "fc")
    )


# derivative rules as NumPy expressions, per input: `{g}` the output's gradient, `{0}`,
# `{1}` the rule's saved values (as the op saves them), `{COS}` numpy's cosine (see _FUNCS)
_GRADIENTS: dict[str, tuple[int, tuple[str, ...]]] = {
    "mul": (2, ("{g} * {1}", "{g} * {0}")),
    "div": (2, ("{g} / {1}", "-({g} / {1}) * ({0} / {1})")),
    "add": (0, ("{g}", "{g}")),
    "sub": (0, ("{g}", "-{g}")),
    "neg": (0, ("-{g}",)),
    "exp": (1, ("{g} * {0}",)),
    "tanh": (1, ("{g} * (1.0 - {0} * {0})",)),
    "sin": (1, ("{g} * {COS}({0})",)),
    "relu": (1, ("{g} * ({0} != 0)",)),
    # 2-D operands only (`.T` is the rule's swapaxes there; other ranks keep the rule)
    "matmul": (2, ("{MATMUL}({g}, {1}.T)", "{MATMUL}({0}.T, {g})")),
}
# unary rules written into the incoming gradient's buffer, when the program owns it and
# this is its last use (program.py): the same ufunc, so the same bits
_GRADIENTS_IN_PLACE = {
    "exp": "{MUL}({g}, {0}, out={g})",
    "tanh": "{MUL}({g}, 1.0 - {0} * {0}, out={g})",
    "sin": "{MUL}({g}, {COS}({0}), out={g})",
    "relu": "{MUL}({g}, {0} != 0, out={g})",
}


def fresh(template: str) -> bool:
    """Whether a gradient template gives a new array (not the incoming gradient itself)."""
    return template != "{g}"


def gradients(
    instr: Instr, arrays: list[Any], out: Any, ns: Any, params: dict[str, Any]
) -> dict[int, str] | None:
    """Per input with an edge, a template of the NumPy expression of its gradient, to write
    instead of calling `instr`'s rule (see `gradient_line`); or None.

    Checked as the forward expressions are: the rule and the expression, on the traced
    values and a probe gradient, must give the same type, dtype, shape and bits."""
    spec = _usable(instr, arrays, out, params)
    if spec is None:
        return None
    n_saved, templates = spec
    if len(templates) != len(instr.ins):
        return None
    small = _shrunk(arrays, out) if instr.op.name in SIZE_FREE else None
    if small is not None:  # see SIZE_FREE
        key = (
            "gradients",
            instr.op.rule,
            id(ns),
            templates,
            _used(templates),
            instr.edges,
            small[2],
        )
        if key not in _verdicts:
            _verdicts[key] = _gradients_same(instr, templates, small[0], small[1], ns, params)
        found: dict[int, str] | None = _verdicts[key]
        return None if found is None else dict(found)
    return _gradients_same(instr, templates, arrays, out, ns, params)


def _gradients_same(
    instr: Instr,
    templates: tuple[str, ...],
    arrays: list[Any],
    out: Any,
    ns: Any,
    params: dict[str, Any],
) -> dict[int, str] | None:
    """`gradients`' check of `templates` on these arrays (and a probe gradient like `out`)."""
    global _last_want
    probe = _probe(out)
    with np.errstate(all="ignore"):
        want = instr.op.rule(ns, probe, *arrays, **params)
        _last_want = (instr, want, probe)
        found: dict[int, str] = {}
        for j, (edge, template) in enumerate(zip(instr.edges, templates, strict=True)):
            if not edge:
                continue
            if not _same(_evaluate(template, probe, arrays), want[j]):
                return None
            found[j] = template
    return found


def gradient_in_place(
    instr: Instr, arrays: list[Any], out: Any, ns: Any, params: dict[str, Any]
) -> str | None:
    """The template of a unary rule that writes into the incoming gradient (see
    `_GRADIENTS_IN_PLACE`), checked on a copy of the probe gradient; or None."""
    template = _GRADIENTS_IN_PLACE.get(instr.op.name)
    spec = _usable(instr, arrays, out, params)
    if template is None or spec is None or len(instr.ins) != 1 or not instr.edges[0]:
        return None
    probe = _probe(out).copy()  # the template writes into it
    with np.errstate(all="ignore"):
        want = instr.op.rule(ns, probe.copy(), *arrays, **params)[0]
        value = _evaluate(template, probe, arrays)
    if value is not probe or not _same(value, want):
        return None
    return template


def aligned_gradient(
    instr: Instr,
    arrays: list[Any],
    out: Any,
    ns: Any,
    params: dict[str, Any],
    names: tuple[str, str],
    meta: tuple[tuple[int, ...], np.dtype[Any]],
) -> str | None:
    """matmul's first-input gradient written into a fresh cache-line-aligned array (see
    `aligned_empty`; `names` are the program's names of its shape and dtype, `meta` their
    values), checked on the probe gradient against the rule; or None. For an instruction
    whose `gradients` include input 0 (the caller has them: not computed twice, each
    check runs the rule's GEMMs)."""
    if instr.op.name != "matmul" or _usable(instr, arrays, out, params) is None:
        return None
    template = "{MATMUL}({g}, {1}.T, out={AL}(" + names[0] + ", " + names[1] + "))"
    small = _shrunk(arrays, out) if meta == (arrays[0].shape, arrays[0].dtype) else None
    if small is None:
        return (
            template
            if _aligned_same(instr, template, arrays, out, ns, params, names, meta)
            else None
        )
    # see SIZE_FREE (the gradient is shaped as input 0, saved as arrays[0])
    probes, like, pattern = small
    key = ("aligned", instr.op.rule, id(ns), template, _used((template,)), instr.edges, pattern)
    if key not in _verdicts:
        small_meta = (probes[0].shape, probes[0].dtype)
        _verdicts[key] = _aligned_same(
            instr, template, probes, like, ns, params, names, small_meta, reuse=False
        )
    return template if _verdicts[key] else None


def _aligned_same(
    instr: Instr,
    template: str,
    arrays: list[Any],
    out: Any,
    ns: Any,
    params: dict[str, Any],
    names: tuple[str, str],
    meta: tuple[tuple[int, ...], np.dtype[Any]],
    reuse: bool = True,
) -> bool:
    """`aligned_gradient`'s check on these arrays (and a probe gradient like `out`);
    `reuse`: take the rule's result from `gradients`' check of the same traced arrays (off
    for small arrays: those of `gradients` were others, and the rule on them costs nothing)."""
    probe = _probe(out)
    with np.errstate(all="ignore"):
        last = _last_want  # `gradients` ran the rule on this probe already (GEMMs)
        want = (
            last[1]
            if reuse and last is not None and last[0] is instr and last[2] is probe
            else instr.op.rule(ns, probe, *arrays, **params)
        )[0]
        value = _evaluate(template, probe, arrays, dict(zip(names, meta)))
    return _same(value, want) and value.shape == meta[0]


def _usable(
    instr: Instr, arrays: list[Any], out: Any, params: dict[str, Any]
) -> tuple[int, tuple[str, ...]] | None:
    """`_GRADIENTS`' (number of saved values, templates) for `instr` when its rule may be
    written as expressions on these values; else None."""
    spec = _GRADIENTS.get(instr.op.name)
    if not (ENABLED and GRADIENTS) or spec is None or instr.param_slots or set(params) - {"needs"}:
        return None
    if len(arrays) != spec[0] or type(out) is not np.ndarray or out.dtype.kind != "f":
        return None
    if instr.op.name == "matmul" and not all(type(a) is np.ndarray and a.ndim == 2 for a in arrays):
        return None
    return spec


# the probe gradients made, by (shape, dtype): every check of a build with that shape and
# dtype shares one draw (they are the same values: each draw is seeded alike);
# program.build_backward forgets them when done, so no large array outlives the build
_probes: dict[tuple[tuple[int, ...], str], np.ndarray[Any, Any]] = {}
# (instruction, its rule's result on the probe, that probe)
_last_want: tuple[Instr, Any, np.ndarray[Any, Any]] | None = None


def _probe(out: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A read-only gradient of random values in [-0.5, 0.5) shaped and typed as `out`
    (drawn in its own dtype where NumPy can: no float64 draw and cast of every large array a
    trace checks; uniform, not normal: a normal draw took ~5x as long, 7 ms for one W3
    activation, and the check needs random signs and mantissas, not a distribution)."""
    key = (out.shape, out.dtype.str)
    probe = _probes.get(key)
    if probe is not None:
        return probe
    rng = np.random.default_rng(0)
    if out.dtype in (np.float32, np.float64):
        probe = np.asarray(rng.random(out.shape, dtype=out.dtype))
    else:
        probe = np.asarray(rng.random(out.shape)).astype(out.dtype)
    probe -= 0.5  # random signs too (exact in float32 and float64)
    probe.setflags(write=False)  # shared: a rule or template writing into it fails loudly
    _probes[key] = probe
    return probe


def forget_probe() -> None:
    """Drop the cached probe gradients and rule result (the end of a program build)."""
    global _last_want
    _probes.clear()
    _last_want = None


def _evaluate(
    template: str, g: Any, arrays: list[Any], extra: dict[str, Any] | None = None
) -> Any:  # what the expression gives (an array, a scalar), or None
    scope = {"g": g, **_FUNCS, **{f"a{i}": a for i, a in enumerate(arrays)}, **(extra or {})}
    code = template.format(*[f"a{i}" for i in range(len(arrays))], g="g", **_NAMES)
    try:
        return eval(code, scope)  # noqa: S307 - our own template
    except (ValueError, TypeError):  # shapes the template does not cover: keep the rule
        return None


def _same(value: Any, w: Any) -> bool:
    """Same type, dtype, shape and bits (the bits as unsigned integers on float arrays: one
    pass, where array_equal(equal_nan=True) makes four over arrays the size of a layer)."""
    if not (
        value is not None
        and type(value) is type(w)
        and getattr(value, "dtype", None) == getattr(w, "dtype", None)
        and np.shape(value) == np.shape(w)
    ):
        return False
    if type(value) is np.ndarray and value.dtype.kind == "f" and value.dtype.itemsize in (4, 8):
        bits = np.dtype(f"u{value.dtype.itemsize}")
        return bool((value.view(bits) == w.view(bits)).all())
    return bool(np.array_equal(value, w, equal_nan=True))


_NAMES = {k: k for k in _FUNCS}


def gradient_line(template: str, g: str, args: list[str], bind: Binder) -> str:
    """The expression of a `gradients` template on names `g` and `args` of the program."""
    names = {k: bind("U", f) for k, f in _FUNCS.items() if "{" + k + "}" in template}
    return template.format(*args, g=g, **names)


_FUNCS["AL"] = aligned_empty
_NAMES["AL"] = "AL"
