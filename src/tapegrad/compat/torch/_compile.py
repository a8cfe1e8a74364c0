"""`torch.compile` on tapegrad: `tg.compile` underneath (trace once per signature, replay).

PyTorch's options that choose a backend or tuning (`backend`, `mode`, `options`,
`dynamic`) are accepted and change nothing: tapegrad has one backend, and it re-traces for
each new shape (as `dynamic=False` does). `fullgraph=True` raises where `tg.compile`
would fall back to eager (PyTorch's "graph break"); `disable=True` returns `model` itself.
"""

from __future__ import annotations

from ...compile import CompiledFunction
from ...compile import compile as _tg_compile


class OptimizedModule:
    """A compiled Module (PyTorch's name): calls replay, every other attribute is the
    original module's (`_orig_mod`), so `.parameters()`, `.train()`, `.state_dict()` work."""

    def __init__(self, module, compiled: CompiledFunction) -> None:
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", compiled)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value) -> None:
        setattr(self._orig_mod, name, value)

    def __repr__(self) -> str:
        return f"OptimizedModule({self._orig_mod!r})"


def compile(
    model=None,
    *,
    fullgraph: bool = False,
    dynamic=None,
    backend="inductor",  # noqa: A001
    mode=None,
    options=None,
    disable: bool = False,
):
    """`torch.compile(model)`: `model` (a Module or function) traced and replayed by
    `tg.compile`; also a decorator, bare or with options.

    >>> import tapegrad.compat.torch as torch
    >>> net = torch.compile(torch.nn.Linear(3, 2))
    >>> y = net(torch.ones(4, 3))
    """
    if model is None:
        return lambda m: compile(
            m,
            fullgraph=fullgraph,
            dynamic=dynamic,
            backend=backend,
            mode=mode,
            options=options,
            disable=disable,
        )
    if disable:
        return model
    from ...nn.module import Module

    compiled = _tg_compile(model, fullgraph=fullgraph)
    if isinstance(model, Module):
        return OptimizedModule(model, compiled)
    return compiled
