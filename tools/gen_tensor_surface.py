"""Write `src/tapegrad/_tensor_surface.py`: the typed view of Tensor's method table.

`tapegrad.ops.tensor_methods.TENSOR_METHODS` installs ~250 methods on `Tensor` at import
time, which editors and type checkers can't see. This script renders one typed stub per
table entry (signature from `inspect.signature`, first parameter renamed `self`, docstring's
first line, the defining function named in a comment) into `class TensorSurface`, which
`tensor.py` uses as Tensor's base class only under `TYPE_CHECKING`.

    python tools/gen_tensor_surface.py          # rewrite the file
    python tools/gen_tensor_surface.py --check  # exit 1 when the file is stale

tests/test_tensor_surface.py fails when the file is stale.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

SURFACE = Path(__file__).resolve().parents[1] / "src" / "tapegrad" / "_tensor_surface.py"

_HEADER = '''\
"""Tensor's installed methods, typed, for editors and type checkers. GENERATED: do not edit.

Made by tools/gen_tensor_surface.py from `tapegrad.ops.tensor_methods.TENSOR_METHODS` (the
one table of methods `Tensor` gets at import time); tests/test_tensor_surface.py fails when
it is stale. `tensor.py` makes this class Tensor's base only under TYPE_CHECKING, so it costs
nothing at run time. Each stub names the function that implements it.
"""
# ruff: noqa: E501
# mypy: disable-error-code="empty-body"
from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tensor import Tensor


class TensorSurface:
'''

# a default value that reads back as itself; anything else becomes `...`, as in stubs
_LITERAL_TYPES = (type(None), bool, int, float, str)
# Tensor has methods named `bool`, `int`, `float`, `type`...: in the class body an annotation
# must spell the builtin out
_BUILTIN_ANY = re.compile(r"(?<![\w.])(bool|int|float|str|type|complex|list|tuple)\b")


def _annotation(text: str) -> str:
    return _BUILTIN_ANY.sub(r"builtins.\1", text)


# object's methods that the table redefines with another return type
_OVERRIDES_OBJECT = {"__eq__", "__ne__"}


def _where(fn) -> str:
    target = getattr(fn, "inplace_of", None)
    if target is not None:
        return f"in place: op {target.name!r} (registry.apply_inplace)"
    return f"{fn.__module__}.{fn.__qualname__}".replace("tapegrad.", "", 1)


def _signature(fn) -> inspect.Signature:
    op = getattr(fn, "inplace_of", None)
    if op is not None:  # `t.exp_()`: the op's own parameters after (xp, x)
        params = list(inspect.signature(op.forward).parameters.values())[1:]
        return inspect.Signature(params)
    return inspect.signature(fn)


def _param(p: inspect.Parameter, name: str, annotate: bool = True) -> str:
    text = name
    annotate = annotate and p.annotation is not p.empty
    if annotate:
        text += f": {_annotation(str(p.annotation))}"
    if p.default is not p.empty:
        lit = isinstance(p.default, _LITERAL_TYPES) and p.default == p.default  # not NaN
        value = repr(p.default) if lit else "..."
        text += f" = {value}" if annotate else f"={value}"
    return text


def _params(sig: inspect.Signature) -> str:
    out: list[str] = []
    star_done = False
    for i, p in enumerate(sig.parameters.values()):
        name = "self" if i == 0 else p.name
        if p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
            star_done = True
        elif p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        elif p.kind is p.KEYWORD_ONLY:
            if not star_done:
                out.append("*")
                star_done = True
            out.append(_param(p, name))
        else:
            # `self` goes unannotated: the function's `input: Tensor` would make mypy reject
            # the stub (Tensor is a subclass of TensorSurface, not a supertype of it)
            out.append(_param(p, name, annotate=i > 0))
            if p.kind is p.POSITIONAL_ONLY and (
                i + 1 == len(sig.parameters)
                or list(sig.parameters.values())[i + 1].kind is not p.POSITIONAL_ONLY
            ):
                out.append("/")
    return ", ".join(out)


def _doc_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    line = doc.strip().splitlines()[0] if doc.strip() else ""
    line = line.replace("\\", "\\\\").replace('"""', "'''")
    return line + " " if line.endswith('"') else line


def _stub(name: str, value, returns: dict[str, str]) -> str:
    if isinstance(value, property):
        fn = value.fget
        doc = _doc_line(value)
        lines = [f"    # {_where(fn)}", "    @property", f"    def {name}(self) -> Tensor:"]
    else:
        fn = value
        sig = _signature(fn)
        ret = sig.return_annotation
        ret = _annotation(returns.get(name, "Tensor") if ret is sig.empty else str(ret))
        ignore = "  # type: ignore[override]" if name in _OVERRIDES_OBJECT else ""
        doc = _doc_line(fn)
        lines = [f"    # {_where(fn)}", f"    def {name}({_params(sig)}) -> {ret}:{ignore}"]
    lines.append(f'        """{doc}"""' if doc else "        ...")
    return "\n".join(lines)


def render() -> str:
    """The text `_tensor_surface.py` should have, from the installed table."""
    from tapegrad.ops.tensor_methods import RETURNS, TENSOR_METHODS

    stubs = [_stub(name, TENSOR_METHODS[name], RETURNS) for name in sorted(TENSOR_METHODS)]
    return _HEADER + "\n\n".join(stubs) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    current = SURFACE.read_text() if SURFACE.exists() else ""
    if args.check:
        if current != text:
            print(f"{SURFACE} is stale: run python tools/gen_tensor_surface.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        SURFACE.write_text(text)
        print(f"wrote {SURFACE} ({text.count('    def ')} stubs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
