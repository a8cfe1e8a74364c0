"""Entry points into the engine: `Tensor.backward`, `tg.autograd.backward`, `tg.autograd.grad`.

They validate everything (roots, head gradients, inputs) before the engine writes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from ..engine.backward import run_backward
from ..engine.state import AMBIENT, NOT_GRAD, RECORD, ModeScope
from ..tensor import Tensor, _wrap, array_class
from .heads import head_gradients
from .record import _RecordingStateScope

_AMBIENT_AND_RECORD = AMBIENT | RECORD


@overload
def _as_list(x: None) -> None: ...
@overload
def _as_list(x: Tensor | Sequence[Any]) -> list[Any]: ...
def _as_list(x: Any) -> list[Any] | None:
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _backward_scope(train_mode: bool | None, create_graph: bool) -> ModeScope:
    """The mode a backward runs in: MXNet's `train_mode=` (None: the caller's), and under
    `create_graph` recording on, since the backward itself records (PyTorch: grad mode;
    MXNet: is_recording). Restored on exit, exceptions included."""
    return _RecordingStateScope(True if create_graph else None, train_mode)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
    *,
    train_mode: bool | None = None,
) -> None:
    """Accumulate gradients of `tensors` into the `.grad` of the leaves they depend on.

    Args:
        tensors: a tensor or a sequence of tensors (the roots).
        grad_tensors: matching head gradients (None: ones, for scalars and record-scope heads).
        retain_graph: keep saved values for another backward (default: create_graph).
        create_graph: record the backward so the gradients can be differentiated again.
        inputs: only these tensors get `.grad` (leaves or non-leaves).
        train_mode: run the backward in training (True) or predict (False) mode (MXNet).
    """
    roots = _as_list(tensors)
    grads = head_gradients(roots, _as_list(grad_tensors), create_graph=create_graph)
    write_only = _as_list(inputs)
    if write_only is not None:
        if not write_only:
            raise RuntimeError("backward: inputs= was given but is empty")
        for i, t in enumerate(write_only):
            if not isinstance(t, Tensor) or not t._tapes & ~NOT_GRAD:
                raise RuntimeError(f"backward: inputs[{i}] does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    with _backward_scope(train_mode, create_graph):
        run_backward(
            roots,
            grads,
            own_mask=_AMBIENT_AND_RECORD,
            retain_graph=retain_graph,
            create_graph=create_graph,
            write_only=write_only,
        )


def grad(
    outputs: Tensor | Sequence[Tensor] | None = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
    *,
    head_grads: Any = None,
    train_mode: bool | None = None,
    only_inputs: bool = True,
    is_grads_batched: bool = False,
    heads: Tensor | Sequence[Tensor] | None = None,
    variables: Tensor | Sequence[Tensor] | None = None,
) -> tuple[Tensor | None, ...]:
    """Gradients of `outputs` with respect to `inputs`, returned (`.grad` is not touched).

    Accepts PyTorch's names and MXNet's (`heads`, `variables`, `head_grads` are the same as
    `outputs`, `inputs`, `grad_outputs`). Returns a tuple with one entry per input.

    >>> x = tg.tensor(3.0, requires_grad=True)
    >>> (dx,) = tg.autograd.grad(x ** 3, x, create_graph=True)
    >>> tg.autograd.grad(dx, x)[0].item()
    18.0
    """
    if is_grads_batched:
        raise NotImplementedError(
            "grad(is_grads_batched=True) is not supported; loop over the batch"
        )
    if head_grads is not None:
        grad_outputs = head_grads
    if heads is not None:  # MXNet's keyword names
        outputs = heads
    if variables is not None:
        inputs = variables
    if outputs is None:
        raise TypeError("grad() missing the tensors to differentiate (outputs= or heads=)")
    roots = _as_list(outputs)
    wrt = _as_list(inputs)
    if not wrt:
        raise RuntimeError("grad requires at least one input tensor (inputs=[...])")
    for i, t in enumerate(wrt):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs[{i}] is a {type(t).__name__}, not a Tensor")
        if not t._tapes & ~NOT_GRAD:
            raise RuntimeError(
                f"One of the differentiated Tensors (inputs[{i}]) does not require grad; call "
                "requires_grad_() or attach_grad() on it before computing the outputs"
            )
    grads = head_gradients(roots, _as_list(grad_outputs), create_graph=create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    allow = bool(allow_unused) or materialize_grads
    with _backward_scope(train_mode, create_graph):
        result = run_backward(
            roots,
            grads,
            own_mask=-1,
            retain_graph=retain_graph,
            create_graph=create_graph,
            capture=wrt,
            allow_unused=allow,
        )
    if materialize_grads:
        result = [
            _wrap(np.zeros_like(t._data), 0, array_class(t)) if g is None else g
            for g, t in zip(result, wrt)
        ]
    return tuple(result)


def tensor_backward(
    self: Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
    *,
    out_grad: Any = None,
    train_mode: bool | None = True,
) -> None:
    """Backpropagate from this tensor (PyTorch and MXNet signatures).

    `gradient` (MXNet: `out_grad`) is the head gradient: required for a non-scalar output,
    except one recorded inside `autograd.record()`, which gets ones.
    """
    if out_grad is not None:
        gradient = out_grad
    backward(
        [self],
        None if gradient is None else [gradient],
        retain_graph,
        create_graph,
        inputs,
        train_mode=train_mode,
    )
