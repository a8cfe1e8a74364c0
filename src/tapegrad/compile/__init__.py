"""Compilation: `tg.compile` traces a function once per signature and replays it.

Modules: `hook` (the dispatcher's tracing bit), `tracing` (the trace), `program` (code
generated from it), `replay` (the compiled call and its graph node), `discovery`
(parameters a function reads), `api` (`compile`, the cache, the eager fallbacks).
"""
from .api import CacheInfo, CompiledFunction, CompileWarning, compile  # noqa: A004
from .hook import TRACING

__all__ = ["CacheInfo", "CompileWarning", "CompiledFunction", "TRACING", "compile"]
