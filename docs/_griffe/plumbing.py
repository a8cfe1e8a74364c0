"""A griffe extension for the API reference: show the live package as users get it.

The reference inspects the imported package (see mkdocs.yml). Two things of the live
objects would otherwise go wrong:

- Inspection gives a class attribute such as `__module__` or `__slots__` the docstring of
  its value's type (`str`, `tuple`), so the "public" filter would show them. They are
  dropped; special *methods* (`__add__`, ...) stay.
- A function made by a small factory (`Tensor.abs_`, `Tensor.__eq__`, `tg.max`) names a
  place it cannot be imported from (`..._extreme_public.<locals>.fn`); griffe records an
  alias to that place, fails to resolve it, and mkdocstrings silently leaves the name
  out. Such a member is replaced by a function built from the live object (its signature
  and docstring), documented where users reach it.
- Docstrings show examples doctest-style (`>>> code`, then the output) anywhere in the
  text, and Markdown would read `>>>` as three nested quotes and `[0, 1]` as a link. Each
  such run of lines becomes a fenced `pycon` block.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe


def _lookup(path: str) -> Any:
    """The object at a dotted path, importing as needed; raises LookupError if none."""
    if "<locals>" in path:
        raise LookupError(path)
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError as e:
            raise LookupError(path) from e
        return obj
    raise LookupError(path)


def fence_doctests(text: str) -> str:
    """Wrap each doctest (a `>>>` line and what follows, up to a blank line) in a fence."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.lstrip().startswith(">>>"):
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        block = []
        while i < len(lines) and lines[i].strip():
            block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if len(indent) >= 4:  # Markdown would read it as an indented code block already
            indent = ""
        if out and out[-1].strip():
            out.append("")  # a fence must not continue the paragraph above it
        out += [indent + "```pycon", *[indent + b for b in block], indent + "```"]
    return "\n".join(out)


def _default(value: Any) -> str | None:
    return None if value is inspect.Parameter.empty else repr(value)


def _annotation(value: Any) -> str | None:
    if value is inspect.Parameter.empty:
        return None
    return value if isinstance(value, str) else getattr(value, "__name__", repr(value))


def _live_function(name: str, fn: Any, agent: Any) -> griffe.Function | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = griffe.Parameters(*[
        griffe.Parameter(p.name, annotation=_annotation(p.annotation),
                         kind=griffe.ParameterKind(p.kind.description), default=_default(p.default))
        for p in sig.parameters.values()])
    doc = fence_doctests(inspect.cleandoc(fn.__doc__)) if fn.__doc__ else None
    docstring = doc and griffe.Docstring(
        doc, parser=getattr(agent, "docstring_parser", None),
        parser_options=getattr(agent, "docstring_options", None))
    return griffe.Function(name, parameters=params, returns=_annotation(sig.return_annotation),
                           docstring=docstring or None)


class HidePlumbing(griffe.Extension):
    """Drop special attributes; rebuild members whose alias points nowhere importable; fence
    doctest examples."""

    def _fix(self, obj: griffe.Object, live: Any, agent: Any) -> None:
        for name, member in list(obj.members.items()):
            if name.startswith("__") and name.endswith("__") and not member.is_alias \
                    and member.is_attribute:
                obj.del_member(name)
                continue
            if not member.is_alias:
                continue
            value = getattr(live, name, None)
            try:
                if _lookup(member.target_path) is value:
                    continue  # griffe will resolve it
            except LookupError:
                pass
            if callable(value) and not inspect.isclass(value):
                func = _live_function(name, value, agent)
                if func is not None:
                    obj.del_member(name)
                    obj.set_member(name, func)

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)

    def on_class_members(self, *, node: Any, cls: griffe.Class, agent: Any, **kwargs) -> None:
        self._fix(cls, getattr(node, "obj", None), agent)

    def on_module_members(self, *, node: Any, mod: griffe.Module, agent: Any, **kwargs) -> None:
        self._fix(mod, getattr(node, "obj", None), agent)
