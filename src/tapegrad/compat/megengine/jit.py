"""`megengine.jit`: importable; `trace` (and `exclude_from_trace`) raise on use.

A placeholder on this branch so that MegEngine scripts and tests import: main's
`megengine.jit` (`trace` on `tg.compile`, from the compilation work) supersedes it on merge.

Compiling a function is not supported yet: tapegrad runs eagerly. Decorating with
`@trace` raises at once, naming what to do instead (call the function undecorated).

    >>> from tapegrad.compat.megengine.jit import trace
    >>> try:
    ...     trace(lambda x: x)
    ... except NotImplementedError as e:
    ...     print(str(e).split(";")[0])
    megengine.jit.trace is not supported by the tapegrad facade yet
"""
from __future__ import annotations

from .._facade import facade_getattr

__all__ = ["trace", "exclude_from_trace"]


def _not_yet(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"megengine.jit.{name} is not supported by the tapegrad facade yet; tapegrad runs "
        "eagerly: call the function without the decorator (same results, no compilation)"
    )


def trace(function=None, *args, **kwargs):
    """Not supported yet: raises NotImplementedError (call the function undecorated)."""
    raise _not_yet("trace")


def exclude_from_trace():
    """Not supported yet: raises NotImplementedError."""
    raise _not_yet("exclude_from_trace")


__getattr__ = facade_getattr(__name__, "the MegEngine facade (megengine.jit)", {}, {
    "dump": "tracing is not supported yet", "xla_trace": "tracing is not supported yet",
})
