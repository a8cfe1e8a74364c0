"""What every facade module shares: lazy name tables and the "not supported" error.

A facade module declares which of its names come from the core (`aliases`: name ->
"tapegrad.module:attribute"), and, for names it deliberately lacks, what to use instead
(`hints`). Its module-level `__getattr__` (PEP 562) resolves aliases on first use, so a
facade never copies core behaviour, and raises an `AttributeError` for everything else:
there is no silent fallback to a similarly named core function.

    >>> ALIASES = core_aliases("exp", negative="neg")
    >>> HINTS = {"waitall": "tapegrad runs eagerly: there is nothing to wait for"}
    >>> __getattr__ = facade_getattr(__name__, "the MXNet facade (mx.np)", ALIASES, HINTS)
"""

from __future__ import annotations
import __future__

import functools
import importlib
import sys
import types

_MISSING = object()


def unsupported(facade: str, name: str, hint: str | None = None) -> AttributeError:
    """The error for a name a facade does not provide."""
    msg = f"{name!r} is not supported by {facade}"
    if hint:
        msg += f"; {hint}"
    else:
        msg += (
            "; see the migration guide in docs/ for what is supported, or use the tapegrad "
            "API directly (import tapegrad as tg)"
        )
    return AttributeError(msg)


def resolve(target: str):
    """Import "package.module:attr.sub" and return the attribute (AttributeError if missing)."""
    mod_name, _, attr = target.partition(":")
    obj = importlib.import_module(mod_name)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def core_aliases(*same: str, **renamed: str) -> dict:
    """An `aliases` table of top-level core functions: each of `same` under its own name, and
    `renamed` as facade name -> core name (`core_aliases("exp", negative="neg")`)."""
    table = {name: f"tapegrad:{name}" for name in same}
    table.update({name: f"tapegrad:{core}" for name, core in renamed.items()})
    return table


def returning(cls: type, fn):
    """`fn` whose results are `cls` arrays: a plain `tg.Tensor` that nothing records (made
    by a creation function, or from inputs that were no arrays) becomes a `cls` sharing its
    storage; a facade's ops on its own arrays already return its class (the dispatcher's
    rule), and a recorded core result is left as it is."""
    from ..tensor import Tensor, as_class

    def convert(out):
        if type(out) is Tensor and not out.requires_grad:
            return as_class(out, cls)
        if isinstance(out, (tuple, list)) and any(type(o) is Tensor for o in out):
            return type(out)(convert(o) for o in out) if type(out) in (tuple, list) else out
        return out

    @functools.wraps(fn)
    def made(*args, **kwargs):
        return convert(fn(*args, **kwargs))

    return made


def returns(cls: type):
    """Decorator form of `returning`: `@returns(mge.Tensor)`."""
    return lambda fn: returning(cls, fn)


def facade_getattr(
    module_name: str,
    facade: str,
    aliases: dict,
    hints: dict | None = None,
    array_class: type | None = None,
    creating: tuple = (),
):
    """A module `__getattr__` resolving `aliases` lazily and refusing everything else.

    An alias is the core object itself, except the names in `creating` (core functions
    that make new arrays, such as `zeros_like`), which return `array_class` arrays (see
    `returning`). Ops need no wrapping: on a facade's arrays they return its class."""
    if creating and array_class is None:
        raise TypeError(
            f"facade_getattr({module_name!r}): creating={creating!r} needs the array_class "
            "its functions return; pass array_class=..."
        )
    hints = hints or {}

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        target = aliases.get(name)
        if target is not None:
            try:
                value = resolve(target)
            except (AttributeError, ImportError) as exc:
                raise AttributeError(
                    f"{name!r} of {facade} maps to {target.replace(':', '.')}, which this build "
                    f"of tapegrad does not provide ({exc})"
                ) from None
            if array_class is not None and name in creating:  # (both or neither: above)
                value = returning(array_class, value)
            setattr(sys.modules[module_name], name, value)  # resolve once
            return value
        raise unsupported(facade, name, hints.get(name))

    return __getattr__


def forward_getattr(
    module_name: str,
    facade: str,
    target: str,
    deny: dict | None = None,
    aliases: dict | None = None,
    hints: dict | None = None,
):
    """A module `__getattr__` for a facade whose names ARE the core's (the torch facade):
    a public attribute of the core module `target` is returned, except the names in `deny`
    (tapegrad-only names; their value is the hint), and `aliases` resolve as above.
    Submodules of the core module are never forwarded (the facade has its own). `hints`
    say what to use instead when the core lacks a name."""
    deny = deny or {}
    hints = hints or {}
    aliases = aliases or {}
    by_alias = facade_getattr(module_name, facade, aliases, deny)

    def __getattr__(name: str):
        if name.startswith("_") or name in deny or name in aliases:
            return by_alias(name)
        core = importlib.import_module(target)
        value = getattr(core, name, _MISSING)
        # a core submodule is the core's layout, not part of the facade's API
        if value is _MISSING or isinstance(value, (__future__._Feature, types.ModuleType)):
            raise unsupported(facade, name, hints.get(name))
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__


def facade_dir(module_name: str, aliases: dict):
    """A module `__dir__` listing the module's own names and its aliases."""

    def __dir__():
        return sorted(set(vars(sys.modules[module_name])) | set(aliases))

    return __dir__
