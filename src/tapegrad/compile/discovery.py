"""Which tensors a function reads without taking them as arguments (parameters, buffers,
optimizer state), found from the function itself: a Module, a bound method of one, the
objects its closure holds and the globals it names, one level into plain functions."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..tensor import Tensor

if TYPE_CHECKING:
    from ..nn.module import Module


def _candidates(fn: Any, depth: int = 0) -> Iterator[Any]:
    yield fn
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        yield owner
    func = getattr(fn, "__func__", fn)
    code = getattr(func, "__code__", None)
    if code is None:
        return  # a Module or other callable object: itself is the candidate
    yield from _expand(list(getattr(func, "__defaults__", None) or ()), depth)
    yield from _expand(list((getattr(func, "__kwdefaults__", None) or {}).values()), depth)
    for cell in getattr(func, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned later)
            continue
        yield from _expand(value, depth)
    scope = getattr(func, "__globals__", {})
    for name in code.co_names:
        if name in scope:
            yield from _expand(scope[name], depth)


def _expand(value: Any, depth: int) -> Iterator[Any]:
    if isinstance(value, (list, tuple)):
        for v in value[:256]:
            if isinstance(v, (Tensor, types.FunctionType)) or _is_stateful(v):
                yield from _expand(v, depth)
        return
    if isinstance(value, dict):
        yield from _expand(list(value.values()), depth)
        return
    if isinstance(value, types.FunctionType) and depth == 0:
        yield from _candidates(value, depth + 1)
        return
    yield value


def _is_stateful(value: object) -> bool:
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer

    return isinstance(value, (Module, Optimizer))


def discover(fn: Any, flat_args: Sequence[Any]) -> tuple[list[Module], list[Tensor]]:
    """(modules, tensors) that `fn` may read: modules' training flags join the cache key,
    the tensors are traced like arguments."""
    from ..nn.module import Module
    from ..optim.optimizer import Optimizer

    modules: dict[int, Module] = {}
    tensors: dict[int, Tensor] = {}
    for value in list(_candidates(fn)) + [a for a in flat_args if isinstance(a, Module)]:
        if isinstance(value, Module):
            for m in _submodules(value):
                modules.setdefault(id(m), m)
            for t in list(value.parameters()) + list(value.buffers()):
                if t is not None:
                    tensors.setdefault(id(t), t)
        elif isinstance(value, Optimizer):
            for group in value.param_groups:
                for p in group["params"]:
                    tensors.setdefault(id(p), p)
            for st in getattr(value, "state", {}).values():
                for v in st.values() if isinstance(st, dict) else ():
                    if isinstance(v, Tensor):
                        tensors.setdefault(id(v), v)
        elif isinstance(value, Tensor):
            tensors.setdefault(id(value), value)
        elif callable(getattr(value, "collect_params", None)):  # a Gluon Block
            for t in _gluon_tensors(value):
                tensors.setdefault(id(t), t)
    return list(modules.values()), list(tensors.values())


def _submodules(module: Module) -> Iterator[Module]:
    walk: Callable[[], Iterator[Module]] = module.modules  # typed at the boundary (nn isn't)
    return walk()


def _gluon_tensors(block: Any) -> list[Tensor]:
    """The initialised parameters' tensors of a Gluon Block (running statistics included)."""
    out = []
    for p in block.collect_params().values():
        try:
            t = p.data()
        except Exception:  # noqa: BLE001 - deferred initialisation: nothing to watch yet
            continue
        if isinstance(t, Tensor):
            out.append(t)
    return out
