"""`mx.autograd`: MXNet's recording API, which is tapegrad's record scope (docs/recording.md).

Everything but `backward` and `grad` is the core's object itself; those two keep MXNet's
signatures (`heads`, `head_grads`) and return types: `grad` always returns a list, one
array per variable (a single array included, as MXNet 1.9.1 does), and gives zeros for a
variable the heads do not depend on, or whose gradient is a constant (the second
derivative of relu, clip, dropout...), where PyTorch's `grad` raises.

    >>> from tapegrad.compat.mxnet import autograd
    >>> x = mx.np.array([1, 2, 3]); x.attach_grad()
    >>> with autograd.record():
    ...     y = 2 * x ** 2
    >>> y.backward(); x.grad
    array([ 4.,  8., 12.])
"""

from __future__ import annotations

import weakref

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
from .base import MXNetError
from .ndarray.ndarray import NDArray  # noqa: E402,F401  (`from mxnet.autograd import *` has it)

__all__ = [
    "record",
    "pause",
    "train_mode",
    "predict_mode",
    "is_recording",
    "is_training",
    "set_recording",
    "set_training",
    "mark_variables",
    "backward",
    "grad",
    "Function",
    "NDArray",
]


# the graph nodes a backward without retain_graph has consumed: MXNet frees a graph after
# its backward whatever it saved, so a second backward raises even where the core (as
# PyTorch, for ops that saved nothing) could run it again
_consumed: weakref.WeakSet = weakref.WeakSet()


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Backpropagate from `heads` into the `.grad` of the marked variables.

    Args:
        heads: an array or a list of arrays (recorded inside `record()`).
        head_grads: matching head gradients (None: ones).
        retain_graph: keep the graph for another backward (without it the graph is freed,
            and a second backward from the same heads raises, as in MXNet).
        train_mode: run the backward in training mode.
    """
    from ...autograd.engine_api import backward as _backward

    if isinstance(heads, Tensor):
        heads = [heads]
    if isinstance(head_grads, Tensor):
        head_grads = [head_grads]
    nodes = [h.grad_fn for h in heads if h.grad_fn is not None]
    for i, node in enumerate(nodes):
        if node in _consumed:
            raise MXNetError(
                f"backward: the graph of head {i} was already freed by an earlier backward; "
                "pass retain_graph=True to the first backward to run another one"
            )
    _backward(heads, head_grads, retain_graph=retain_graph, train_mode=train_mode)
    if not retain_graph:
        _consumed.update(nodes)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # noqa: F811
    """The gradients of `heads` with respect to `variables`, returned (`.grad` untouched).

    Returns a list with one array per variable (also when `variables` is one array).
    `create_graph=True` records the computation so the result can be differentiated again.
    A variable the heads do not depend on gets zeros, as in MXNet.
    """
    from ...autograd.engine_api import grad as _grad

    heads = [heads] if isinstance(heads, Tensor) else list(heads)
    wrt = [variables] if isinstance(variables, Tensor) else list(variables)
    if head_grads is not None:
        head_grads = [head_grads] if isinstance(head_grads, Tensor) else list(head_grads)
        if len(head_grads) != len(heads):
            raise ValueError(
                f"autograd.grad: {len(heads)} heads but {len(head_grads)} "
                "head_grads; pass one head gradient per head"
            )
    # a head that nothing was recorded for (the gradient of a piecewise-linear op is a
    # constant) contributes zeros, where the core (PyTorch's grad) would refuse it
    live = [i for i, h in enumerate(heads) if h.grad_fn is not None or any(h is v for v in wrt)]
    if not live:
        return [_zeros_like(v) for v in wrt]
    out = _grad(
        [heads[i] for i in live],
        wrt,
        grad_outputs=None if head_grads is None else [head_grads[i] for i in live],
        retain_graph=retain_graph,
        create_graph=create_graph,
        train_mode=train_mode,
        materialize_grads=True,
    )
    from ...tensor import array_class
    from .ndarray.ndarray import _as_array_type

    return [_as_array_type(g, array_class(v)) for g, v in zip(out, wrt, strict=True)]


def _zeros_like(v: Tensor) -> Tensor:
    from ...creation import zeros_like
    from ...tensor import array_class, as_class

    return as_class(zeros_like(v.detach()), array_class(v))


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.autograd)",
    {},
    {
        "get_symbol": "symbols do not exist in tapegrad (it runs eagerly); use "
        "tapegrad.autograd.graph.to_dot(y) to see the recorded graph"
    },
)
