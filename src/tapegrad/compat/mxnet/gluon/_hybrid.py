"""`HybridBlock.hybridize()` on `tg.compile`: a hybridized block's forward is traced once
per signature and replayed.

The first call runs eagerly, as MXNet's does: it finishes deferred parameter
initialisation (shapes inferred from the input, random initial values) before anything is
traced. `static_alloc`/`static_shape` are accepted: replays never re-plan memory anyway.
"""

from __future__ import annotations

from ....compile import compile as _compile


class HybridForward:
    """The callable `Block.__call__` uses in place of `forward` once hybridized."""

    __slots__ = ("_block", "_compiled", "_warm", "last_args")

    def __init__(self, block) -> None:
        self._block = block
        self._compiled = _compile(block.forward)
        self._warm = False
        self.last_args = None  # the latest call's inputs: what `export` traces

    def __call__(self, *args, **kwargs):
        self.last_args = args
        if not self._warm:
            self._warm = True
            return self._block.forward(*args, **kwargs)
        return self._compiled(*args, **kwargs)

    def cache_info(self):
        return self._compiled.cache_info()
