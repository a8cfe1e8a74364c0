"""`mx.contrib.autograd`: MXNet's first autograd API (before `mx.autograd`), on tapegrad.

`train_section()` records in training mode, `test_section()` switches to predict mode
inside it; `grad_and_loss(func)` / `grad(func)` turn a function of NDArrays into one
returning its gradients (every argument, or those at `argnum`).

    >>> from tapegrad.compat.mxnet.contrib import autograd as ag
    >>> df = ag.grad(lambda x: x * x)
    >>> df(mx.nd.array([3.0]))[0]
    <BLANKLINE>
    [6.]
    <NDArray 1 @cpu(0)>
"""

from __future__ import annotations

import functools

from .. import autograd as _ag
from ..ndarray import zeros_like
from ..ndarray.ndarray import NDArray

__all__ = [
    "set_is_training",
    "train_section",
    "test_section",
    "mark_variables",
    "backward",
    "compute_gradient",
    "grad_and_loss",
    "grad",
    "NDArray",
    "zeros_like",
]


def set_is_training(is_train: bool) -> bool:
    """Switch recording and training on or off together; returns the previous state."""
    prev = _ag.set_recording(is_train)
    _ag.set_training(is_train)
    return prev


def train_section():
    """Record (in training mode) inside the block: `with train_section():`."""
    return _ag.record(train_mode=True)


def test_section():
    """Predict mode inside the block (still recording inside a train_section)."""
    return _ag.predict_mode()


mark_variables = _ag.mark_variables


def backward(outputs, out_grads=None, retain_graph=False) -> None:
    """Backpropagate from `outputs` (a list of arrays) into the marked variables' buffers."""
    _ag.backward(outputs, out_grads, retain_graph=retain_graph)


def compute_gradient(outputs) -> None:
    """`backward(outputs)` (MXNet's older name)."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """A function returning `(gradients, loss)` of `func` at its arguments.

    Args:
        func: a function of NDArrays returning an NDArray (the loss).
        argnum: an int or a list of ints: which arguments to differentiate (default all).
    """

    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for i, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise TypeError(
                    f"grad_and_loss: argument {i} is a {type(x).__name__}; the "
                    "differentiated arguments must be NDArrays"
                )
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        backward([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs

    return wrapped


def grad(func, argnum=None):
    """A function returning the gradients of `func` at its arguments (see grad_and_loss)."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]

    return wrapped
