"""`megengine.jit.trace` on `tg.compile`: the decorated function is traced once per
signature and replayed.

`symbolic`, `capture_as_const` and MegEngine's tuning options are accepted and change
nothing (there is one backend). A step that runs `gm.backward()` runs eagerly, with one
`CompileWarning` (`tg.compile` replays `Tensor.backward()` steps only); `dump()` (graph
export) is not supported.

    >>> import tapegrad.compat.megengine as mge
    >>> @mge.jit.trace(symbolic=True)
    ... def infer(x):
    ...     return x * 2.0
"""

from __future__ import annotations

import functools

from ...compile import compile as _compile

__all__ = ["trace"]


class trace:  # noqa: N801 - MegEngine's name
    """Decorator: `@trace`, `@trace(symbolic=True)` or `trace(fn, capture_as_const=True)`."""

    def __new__(cls, function=None, symbolic=False, capture_as_const=False, **options):
        if function is None:
            return functools.partial(
                cls, symbolic=symbolic, capture_as_const=capture_as_const, **options
            )
        return super().__new__(cls)

    def __init__(self, function=None, symbolic=False, capture_as_const=False, **options):
        self._compiled = _compile(function)
        functools.update_wrapper(self, function, updated=())

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def cache_info(self):
        return self._compiled.cache_info()

    def dump(self, *args, **kwargs):
        raise NotImplementedError(
            "trace.dump: exporting a traced graph is not supported by tapegrad; save the "
            "weights with mge.save(module.state_dict(), path) instead"
        )
