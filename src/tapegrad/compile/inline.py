"""An optional pass: elementwise forwards written as one NumPy expression in the program.

An op's forward is called through two Python frames (the op's function, its dtype helper);
for the arithmetic operators and the common ufuncs the program can say `v5 = v4 * C3` or
`v6 = TANH(v5)` instead. Each inlined line is *checked* when the program is built: evaluated
on the traced arrays it must give an array of the traced dtype, bit for bit the value the op
gave, or the op keeps its call. So this table can only ever make a program faster, never
different; the derivative rules are not touched.
"""

from __future__ import annotations

import numpy as np

ENABLED = True  # bench/compile_bench.py measures the program with and without it

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


def expression(instr, args: list[str], arrays: list, final: np.ndarray, bind) -> str | None:
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
        value = eval(template.format(*scope), scope)  # noqa: S307 - our own template
    if (
        type(value) is not np.ndarray
        or value.dtype != final.dtype
        or value.shape != final.shape
        or not np.array_equal(value, final, equal_nan=final.dtype.kind in "fc")
    ):
        return None
    return template.format(*args)
