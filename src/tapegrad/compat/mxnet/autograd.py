"""`mx.autograd`: MXNet's recording API, which is tapegrad's record scope (API.md 2.2).

Everything but `backward` and `grad` is the core's object itself; those two keep MXNet's
signatures (`heads`, `head_grads`) and return types (`grad` returns a list, or a single
array when `variables` is a single array, as MXNet does).

    >>> from tapegrad.compat.mxnet import autograd
    >>> x = mx.np.array([1, 2, 3]); x.attach_grad()
    >>> with autograd.record():
    ...     y = 2 * x ** 2
    >>> y.backward(); x.grad
    tensor([ 4.,  8., 12.])
"""
from __future__ import annotations

from ...autograd.function import Function  # noqa: F401  (both call styles, as MXNet's)
from ...autograd.record import (  # noqa: F401
    is_recording,
    is_training,
    mark_variables,
    pause,
    predict_mode,
    record,
    set_recording,
    set_training,
    train_mode,
)
from ...tensor import Tensor
from .._facade import facade_getattr

__all__ = [
    "record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
    "set_recording", "set_training", "mark_variables", "backward", "grad", "Function",
]


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Backpropagate from `heads` into the `.grad` of the marked variables.

    Args:
        heads: an array or a list of arrays (recorded inside `record()`).
        head_grads: matching head gradients (None: ones).
        retain_graph: keep the graph for another backward.
        train_mode: run the backward in training mode.
    """
    from ...autograd.engine_api import backward as _backward

    if isinstance(heads, Tensor):
        heads = [heads]
    if isinstance(head_grads, Tensor):
        head_grads = [head_grads]
    _backward(heads, head_grads, retain_graph=retain_graph, train_mode=train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):  # noqa: F811
    """The gradients of `heads` with respect to `variables`, returned (`.grad` untouched).

    Returns a list with one array per variable, or one array when `variables` is one array.
    `create_graph=True` records the computation so the result can be differentiated again.
    """
    from ...autograd.engine_api import grad as _grad

    out = _grad(heads, variables, grad_outputs=head_grads, retain_graph=retain_graph,
                create_graph=create_graph, train_mode=train_mode)
    if isinstance(variables, Tensor):
        return out[0]
    return list(out)


__getattr__ = facade_getattr(
    __name__, "the MXNet facade (mx.autograd)", {},
    {"get_symbol": "symbols do not exist in tapegrad (it runs eagerly); use "
     "tapegrad.autograd.graph.to_dot(y) to see the recorded graph"},
)
