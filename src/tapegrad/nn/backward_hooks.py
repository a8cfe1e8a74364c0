"""Module backward hooks: `register_full_backward_hook` and `register_full_backward_pre_hook`.

PyTorch's contract: `hook(module, grad_input, grad_output)` runs once the gradients with
respect to the module's positional tensor inputs are known (`grad_input` has one entry per
positional argument: None where it is no tensor or needs no gradient) and may return a
replacement `grad_input`; `pre_hook(module, grad_output)` runs when the gradients of the
outputs arrive and may return a replacement `grad_output`.

How: the call's outputs go through one identity Function whose backward sees every output
gradient at once (the pre hooks run there), and the inputs that require grad through
another, whose backward sees every input gradient (the full hooks run there). When no input
requires grad the full hooks run right after the pre hooks, with an all-None `grad_input`,
as PyTorch does.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor


class _Call:
    """One forward call's hooks and the output gradients its backward saw."""

    def __init__(self, module: Any, n_args: int, tensor_positions: list[int]) -> None:
        self.module = module
        self.n_args = n_args
        self.tensor_positions = tensor_positions
        self.grad_output: tuple[Any, ...] = ()

    def run_pre_hooks(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        for hook in list(self.module._backward_pre_hooks.values()):
            new = hook(self.module, grads)
            if new is not None:
                grads = _as_tuple(new, len(grads), "a backward pre hook", "grad_output")
        self.grad_output = grads
        return grads

    def run_full_hooks(self, input_grads: tuple[Any, ...]) -> tuple[Any, ...]:
        grad_input: list[Any] = [None] * self.n_args
        for position, g in zip(self.tensor_positions, input_grads):
            grad_input[position] = g
        result = tuple(grad_input)
        for hook in list(self.module._backward_hooks.values()):
            new = hook(self.module, result, self.grad_output)
            if new is not None:
                result = _as_tuple(new, self.n_args, "a full backward hook", "grad_input")
        return tuple(result[p] for p in self.tensor_positions)


def _as_tuple(value: Any, n: int, who: str, what: str) -> tuple[Any, ...]:
    value = value if isinstance(value, (tuple, list)) else (value,)
    if len(value) != n:
        raise RuntimeError(
            f"{who} returned {len(value)} values for {what}, which has {n}; return a tuple of "
            f"{n} (None for an entry to leave without gradient), or None to keep {what}"
        )
    return tuple(value)


class _OutputGradients(Function):
    @staticmethod
    def forward(ctx, call, *outputs):
        ctx.call = call
        return tuple(o.view_as(o) for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        call = ctx.call
        grads = call.run_pre_hooks(grads)
        if not call.tensor_positions and call.module._backward_hooks:
            call.run_full_hooks(())
        return (None, *grads)


class _InputGradients(Function):
    @staticmethod
    def forward(ctx, call, *inputs):
        ctx.call = call
        return tuple(x.view_as(x) for x in inputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.call.run_full_hooks(grads))


def call_with_backward_hooks(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`module.forward(*args, **kwargs)` with its backward hooks attached to the graph."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    call = _Call(module, len(args), positions)
    if positions and module._backward_hooks:
        hooked = _InputGradients.apply(call, *(args[i] for i in positions))
        args = tuple(args)
        replaced = dict(zip(positions, hooked))
        args = tuple(replaced.get(i, a) for i, a in enumerate(args))
    out = module.forward(*args, **kwargs)
    single = isinstance(out, Tensor)
    outputs = (out,) if single else tuple(out) if isinstance(out, (tuple, list)) else None
    if outputs is None:
        return out  # no tensors to watch: PyTorch leaves such outputs alone too
    tracked = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
    if not tracked:
        return out
    hooked_out = _OutputGradients.apply(call, *(outputs[i] for i in tracked))
    replaced = dict(zip(tracked, hooked_out))
    outputs = tuple(replaced.get(i, o) for i, o in enumerate(outputs))
    if single:
        return outputs[0]
    return type(out)(outputs) if isinstance(out, list) else outputs
