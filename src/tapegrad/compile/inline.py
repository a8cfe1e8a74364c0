"""An optional pass: elementwise forwards written as one NumPy expression in the program.

An op's forward is called through two Python frames (the op's function, its dtype helper);
for the arithmetic operators and the common ufuncs the program can say `v5 = v4 * C3` or
`v6 = TANH(v5)` instead. Each inlined line is *checked* when the program is built: evaluated
on the traced arrays it must give an array of the traced dtype, bit for bit the value the op
gives on them, or the op keeps its call. So this table can only ever make a program faster,
never different. The same holds for the derivative rules written as expressions
(`gradients`): each is checked against the rule itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .tracing import Instr

Binder = Callable[[str, Any], str]  # bind(prefix, value): the name the program gives value

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
    if name in _OPERATORS:
        template = _OPERATORS[name]
        ufunc_name = None
    elif name in _UFUNCS:
        ufunc_name = bind("U", _UFUNCS[name])
        template = ufunc_name + "({0})"
    else:
        return None
    if len(arrays) != template.count("{"):
        return None
    scope = {f"a{i}": a for i, a in enumerate(arrays)}
    if ufunc_name is not None:
        scope[ufunc_name] = _UFUNCS[name]
    with np.errstate(all="ignore"):  # the op ran on these values already; only compare
        # the op again, on the same arrays: in a training step the optimizer has changed
        # the parameters since the trace, so the traced result is not what to compare with
        want = instr.op.forward(instr.xp, *arrays)
        value = eval(template.format(*scope), scope)  # noqa: S307 - our own template
    if (
        type(want) is not np.ndarray  # the dispatcher would convert it: keep the call
        or want.dtype != final.dtype
        or type(value) is not np.ndarray
        or value.dtype != final.dtype
        or value.shape != final.shape
        or not np.array_equal(value, want, equal_nan=final.dtype.kind in "fc")
    ):
        return None
    return template.format(*args)


# derivative rules as NumPy expressions, per input: `{g}` the output's gradient, `{0}`,
# `{1}` the rule's saved values (as the op saves them), `{COS}` numpy's cosine
_GRADIENTS = {
    "mul": (2, ("{g} * {1}", "{g} * {0}")),
    "div": (2, ("{g} / {1}", "-({g} / {1}) * ({0} / {1})")),
    "add": (0, ("{g}", "{g}")),
    "sub": (0, ("{g}", "-{g}")),
    "neg": (0, ("-{g}",)),
    "exp": (1, ("{g} * {0}",)),
    "tanh": (1, ("{g} * (1.0 - {0} * {0})",)),
    "sin": (1, ("{g} * {COS}({0})",)),
}


def gradients(
    instr: Instr, arrays: list[Any], out: Any, ns: Any, params: dict[str, Any]
) -> dict[int, str] | None:
    """Per input with an edge, a template of the NumPy expression of its gradient, to write
    instead of calling `instr`'s rule (see `gradient_line`); or None.

    Checked as the forward expressions are: the rule and the expression, on the traced
    values and a probe gradient, must give the same type, dtype, shape and bits."""
    spec = _GRADIENTS.get(instr.op.name)
    if not (ENABLED and GRADIENTS) or spec is None or instr.param_slots or set(params) - {"needs"}:
        return None
    n_saved, templates = spec
    if len(arrays) != n_saved or len(templates) != len(instr.ins) or type(out) is not np.ndarray:
        return None
    if out.dtype.kind != "f":
        return None
    probe = np.asarray(np.random.default_rng(0).standard_normal(out.shape)).astype(out.dtype)
    scope = {"g": probe, "COS": np.cos, **{f"a{i}": a for i, a in enumerate(arrays)}}
    with np.errstate(all="ignore"):
        want = instr.op.rule(ns, probe, *arrays, **params)
        found: dict[int, str] = {}
        for j, (edge, template) in enumerate(zip(instr.edges, templates, strict=True)):
            if not edge:
                continue
            code = template.format(*[f"a{i}" for i in range(n_saved)], g="g", COS="COS")
            value = eval(code, scope)  # noqa: S307 - our own template
            w = want[j]
            if (
                type(value) is not type(w)
                or getattr(value, "dtype", None) != getattr(w, "dtype", None)
                or np.shape(value) != np.shape(w)
                or not np.array_equal(value, w, equal_nan=True)
            ):
                return None
            found[j] = template
    return found


def gradient_line(template: str, g: str, args: list[str], bind: Binder) -> str:
    """The expression of a `gradients` template on names `g` and `args` of the program."""
    return template.format(*args, g=g, COS=bind("U", np.cos))
