"""Activation checkpointing: `tg.utils.checkpoint.checkpoint(fn, *args)`.

The forward of `fn` runs without recording, so none of its intermediate values are kept;
only the inputs are. Backward runs `fn` again (recording, with the random generator as it
was, so dropout draws the same mask) and backpropagates through that fresh graph. Memory for
activations drops from one set per checkpointed block to one block's worth, for the price
of a second forward.

    >>> from tapegrad.utils.checkpoint import checkpoint
    >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
    >>> checkpoint(lambda t: (t.exp() * t).sum(), x, use_reentrant=False).backward()
    >>> bool(tg.allclose(x.grad, (x.detach() + 1) * x.detach().exp()))   # recomputed
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import random as _random
from ..autograd.engine_api import grad as _autograd_grad
from ..autograd.function import Function
from ..engine.state import AMBIENT, also_recording, state
from ..tensor import Tensor

__all__ = ["checkpoint"]


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[..., Any] | None = None,
    determinism_check: str = "default",
    debug: bool = False,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, keeping only the inputs for backward (recomputed then).

    Args:
        function: a callable; tensors it reaches other than through `args` (a Module's
            parameters, Modules or tensors in its closure) get their gradients too.
        args: its positional arguments.
        use_reentrant: accepted for PyTorch compatibility; both values behave the same here
            (the non-reentrant semantics: `autograd.grad` and `backward(inputs=)` work).
        preserve_rng_state: replay the random generator's state in the recomputation.
    """
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not supported")
    extras = [t for t in _reachable_tensors(function) if not any(t is a for a in args)]
    run = function if not kwargs else (lambda *a: function(*a, **kwargs))
    return _Checkpoint.apply(run, len(args), preserve_rng_state, extras, *args, *extras)


def _reachable_tensors(function: Callable[..., Any]) -> list[Tensor]:
    """Tracked tensors `function` uses without taking them as arguments."""
    from ..nn.module import Module

    found: list[Tensor] = []
    seen: set[int] = set()

    def add(obj: object) -> None:
        if isinstance(obj, Module):
            for p in obj.parameters():
                add(p)
        elif isinstance(obj, Tensor) and obj.requires_grad and id(obj) not in seen:
            seen.add(id(obj))
            found.append(obj)

    add(function)
    add(getattr(function, "__self__", None))
    for cell in getattr(function, "__closure__", None) or ():
        try:
            add(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return found


class _Checkpoint(Function):
    @staticmethod
    def forward(
        ctx: Any,
        run: Callable[..., Any],
        n_args: int,
        preserve_rng_state: bool,
        extras: list[Tensor],
        *inputs: Any,
    ) -> Any:
        ctx.run, ctx.n_args, ctx.extras = run, n_args, extras
        ctx.inputs = inputs[:n_args]  # detached views: the inputs, nothing computed from them
        ctx.rng_state = _random.generator().bit_generator.state if preserve_rng_state else None
        return run(*inputs[:n_args])

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        fresh = [
            a.detach().requires_grad_(need) if isinstance(a, Tensor) and a.dtype.kind in "fc" else a
            for a, need in zip(ctx.inputs, ctx.needs_input_grad[4:], strict=False)
        ]
        bits = _random.generator().bit_generator
        after = bits.state
        create_graph = bool(state.active & AMBIENT)  # the outer backward is itself recorded
        try:
            with also_recording(AMBIENT):
                if ctx.rng_state is not None:
                    bits.state = ctx.rng_state
                out = ctx.run(*fresh)
        finally:
            bits.state = after
        outs = out if isinstance(out, (tuple, list)) else (out,)
        pairs = [
            (o, g)
            for o, g in zip(outs, grads, strict=False)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        wrt = [t for t in fresh if isinstance(t, Tensor) and t.requires_grad] + list(ctx.extras)
        if pairs and wrt:
            gs = list(
                _autograd_grad(
                    [o for o, _ in pairs],
                    wrt,
                    [g for _, g in pairs],
                    create_graph=create_graph,
                    allow_unused=True,
                )
            )
        else:
            gs = [None] * len(wrt)
        arg_grads = []
        for t in fresh:
            arg_grads.append(gs.pop(0) if isinstance(t, Tensor) and t.requires_grad else None)
        return (None, None, None, None, *arg_grads, *gs)
