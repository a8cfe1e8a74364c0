"""`HybridBlock.hybridize()` on `tg.compile`: a hybridized block's forward is traced once
per signature and replayed.

The first call runs eagerly, as MXNet's does: it finishes deferred parameter
initialisation (shapes inferred from the input, random initial values) before anything is
traced. `static_alloc`/`static_shape` are accepted: replays never re-plan memory anyway.

The inputs follow MXNet 1.9.1's rules for a hybridized block, each a ValueError: arrays,
None and (nested) lists of them only (no Python numbers), one context for all of them,
and the pattern of None arguments of the first call kept afterwards (trailing None
arguments may be left out, or added, for parameters with defaults). A block called inside
another hybridized block's forward is part of that block's graph, so only the outermost
call is checked (in MXNet the inner blocks see symbols).
"""

from __future__ import annotations

import threading

from ....compile import compile as _compile
from ....tensor import Tensor
from ..symbol import Symbol

_local = threading.local()  # depth: how many hybridized forwards this thread is inside


def flatten_inputs(args, where: str) -> tuple[list, list]:
    """(arrays, format) of hybridized-call inputs: the format has 0 for an array, -1 for
    None and a list per nested list, as MXNet's `_flatten` (a Python number is refused)."""
    arrays: list = []

    def visit(a):
        if isinstance(a, Tensor):
            arrays.append(a)
            return 0
        if a is None:
            return -1
        if isinstance(a, (list, tuple)):
            return [visit(x) for x in a]
        raise ValueError(
            f"When hybridized, the input of HybridBlock {where} must be (nested) list of "
            f"Symbol or NDArray, but got {a!r} of type {type(a)}"
        )

    return arrays, [visit(a) for a in args]


def check_kinds(block, args) -> None:
    """MXNet's checks of a HybridBlock's inputs, hybridized or not: at least one array, and
    no arrays mixed with symbols; symbols alone build no graph in tapegrad."""
    found = {"array": False, "symbol": False}

    def visit(a):
        if isinstance(a, Tensor):
            found["array"] = True
        elif isinstance(a, Symbol):
            found["symbol"] = True
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)

    for a in args:
        visit(a)
    if found["array"] and found["symbol"]:
        raise ValueError(
            f"{type(block).__name__}: In HybridBlock, we do not support mixed NDArrays and "
            "Symbols types for the input. Please check the type of the args."
        )
    if found["symbol"]:
        raise TypeError(
            f"{type(block).__name__}: called on Symbols: tapegrad builds no symbol graphs "
            "(it runs eagerly); call the block on arrays, hybridize() it to compile, and "
            "export() it to save the graph"
        )
    if not found["array"]:
        raise ValueError(
            f"{type(block).__name__}: In HybridBlock, there must be one NDArray or one "
            "Symbol in the input. Please check the type of the args."
        )


def _compatible(stored: list, given: list) -> bool:
    """MXNet's rule: equal, or differing only by trailing None arguments (defaults)."""
    if stored == given:
        return True
    short, long = sorted((stored, given), key=len)
    return (
        len(short) != len(long)
        and long[: len(short)] == short
        and all(f == -1 for f in long[len(short) :])
    )


class HybridForward:
    """The callable `Block.__call__` uses in place of `forward` once hybridized."""

    __slots__ = ("_block", "_compiled", "_warm", "_in_format", "last_args")

    def __init__(self, block) -> None:
        self._block = block
        self._compiled = _compile(block.forward)
        self._warm = False
        self._in_format: list | None = None  # the first call's pattern of arrays and None
        self.last_args = None  # the latest call's inputs: what `export` traces

    def __call__(self, *args, **kwargs):
        if not getattr(_local, "depth", 0):
            self._check(args)
        self.last_args = args
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            if not self._warm:
                self._warm = True
                return self._block.forward(*args, **kwargs)
            return self._compiled(*args, **kwargs)
        finally:
            _local.depth -= 1

    def _check(self, args) -> None:
        check_kinds(self._block, args)
        arrays, fmt = flatten_inputs(args, "input")
        # (device, id): a core Tensor (no context of its own) counts as id 0 of its device
        contexts = {(a.device, getattr(a, "_ctx_id", 0)) for a in arrays}
        if len(contexts) > 1:
            names = sorted(f"{'cpu' if d == 'cpu' else 'gpu'}({i})" for d, i in contexts)
            raise ValueError(
                f"{type(self._block).__name__}: Find multiple contexts in the input, After "
                "hybridized, the HybridBlock only supports one input context. Find all "
                f"contexts = {names}"
            )
        if self._in_format is None:
            self._in_format = fmt
        elif not _compatible(self._in_format, fmt):
            raise ValueError(
                f"{type(self._block).__name__}: The argument structure of HybridBlock does "
                f"not match the cached version. Stored format = {self._in_format}, input "
                f"format = {fmt}"
            )

    def cache_info(self):
        return self._compiled.cache_info()
