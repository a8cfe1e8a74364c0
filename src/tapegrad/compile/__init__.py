"""Compilation: `tg.compile` traces a function once per signature and replays it.

Modules: `hook` (the dispatcher's tracing bit), `tracing` (the trace), `program` (code
generated from it), `replay` (the compiled call and its graph node), `discovery`
(parameters a function reads), `api` (`compile`, the cache, the eager fallbacks), `step`
(whole training steps), `effects` (bookkeeping a replay redoes), `random_draws` (dropout's
masks drawn again), `functions` (custom autograd Functions as opaque calls).
"""

from __future__ import annotations

import typing as _typing

from .hook import TRACING

# what `__getattr__` below loads on first use, declared for type checkers (which would see
# each as `object`)
if _typing.TYPE_CHECKING:
    from .api import CacheInfo as CacheInfo
    from .api import CompiledFunction as CompiledFunction
    from .api import CompileWarning as CompileWarning
    from .api import compile as compile

# the dispatcher imports `hook` (one bit test per call); the rest loads on first use, so
# `import tapegrad` does not pay for the tracer and code generator (bench W7)
_FROM_API = frozenset(("CacheInfo", "CompiledFunction", "CompileWarning", "compile"))


def __getattr__(name: str) -> object:
    if name in _FROM_API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CacheInfo", "CompileWarning", "CompiledFunction", "TRACING", "compile"]
