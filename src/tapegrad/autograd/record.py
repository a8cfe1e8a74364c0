"""The MXNet record scope: `record pause train_mode predict_mode`, `attach_grad`, `mark_variables`.

The record scope is bit `RECORD` of the tape mask (engine/state.py). A tensor joins it with
`x.attach_grad()`; an op is recorded for it only while `record()` is active in the current
thread. Recording and training are two independent, thread-local flags, set exactly as
Apache MXNet sets them:

    scope                          is_recording()   is_training()
    (outside every scope)          False            False
    record()                       True             True
    record(train_mode=False)       True             False
    predict_mode() inside record() True             False
    train_mode()                   unchanged        True
    pause()                        False            False

    >>> x = tg.tensor([1.0, 2.0, 3.0])
    >>> x.attach_grad()
    >>> with tg.autograd.record():
    ...     y = 2 * x ** 2
    >>> y.backward()
    >>> x.grad
    tensor([ 4.,  8., 12.])
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..engine.state import AMBIENT, RECORD, ModeScope, state
from ..tensor import Tensor, _wrap, array_class

if TYPE_CHECKING:
    from ..engine.state import _State

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
]

GRAD_REQS = ("write", "add", "null")
_RECORDING = AMBIENT | RECORD  # record() also re-enables the ambient tape (as enable_grad)


class _RecordingStateScope(ModeScope):
    """Set recording and/or training for a block (None leaves that flag alone)."""

    def __init__(self, is_record: bool | None, train_mode: bool | None) -> None:
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode

    def _enter(self, st: _State) -> None:
        if self._enter_is_record is not None:
            # pause() stops every tape, like no_grad(); record() starts the two it owns
            st.active = (st.active | _RECORDING) if self._enter_is_record else 0
        if self._enter_train_mode is not None:
            st.training = bool(self._enter_train_mode)


def record(train_mode: bool = True) -> _RecordingStateScope:
    """Record operations on `attach_grad()` variables in this block (and train, by default).

    Args:
        train_mode: layers run in training mode inside the block (Dropout drops).

    >>> x = tg.tensor([1.0, 2.0]); x.attach_grad()
    >>> with tg.autograd.record():
    ...     y = x * 2
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:
    """Stop recording (every tape) in this block; predict mode unless `train_mode=True`.

    >>> x = tg.tensor([1.0, 2.0]); x.attach_grad()
    >>> with tg.autograd.record():
    ...     y = x * 2
    ...     with tg.autograd.pause():
    ...         stats = y.mean()  # a constant to every tape
    """
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """Training mode in this block (Dropout drops); recording is left as it is."""
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """Predict mode in this block (Dropout is the identity); recording is left as it is.

    >>> net, x = tg.nn.Dropout(0.5), tg.ones(4)
    >>> with tg.autograd.record():
    ...     with tg.autograd.predict_mode():
    ...         y = net(x)  # recorded, but layers run as in inference
    """
    return _RecordingStateScope(None, False)


def is_recording() -> bool:
    """True inside `record()` (and not inside a `pause()` or `no_grad()` within it)."""
    return bool(state.active & RECORD)


def is_training() -> bool:
    """True inside `record()` (default) or `train_mode()`: layers with training=None train."""
    return state.training


# which bits of the mask the last set_recording(True) of this thread switched on, so that
# set_recording(False) switches exactly those off again (the ambient tape stays as it was)
_switched = threading.local()


def set_recording(is_recording: bool) -> bool:  # MXNet names the parameter so
    """Switch recording on or off in this thread; returns the previous value.

    Prefer `with record():`, which restores the state even when an exception is raised.
    """
    st = state
    prev = bool(st.active & RECORD)
    if is_recording and not prev:
        _switched.bits = _RECORDING & ~st.active
        st.active |= _RECORDING
    elif not is_recording and prev:
        st.active &= ~(getattr(_switched, "bits", RECORD) | RECORD)
        _switched.bits = RECORD
    return prev


def set_training(train_mode: bool) -> bool:
    """Switch training mode on or off in this thread; returns the previous value."""
    st = state
    prev = st.training
    st.training = bool(train_mode)
    return prev


# ------------------------------------------------------------------ variables
def _check_req(req: object, where: str) -> str:
    if req not in GRAD_REQS:
        raise ValueError(
            f"{where}: grad_req must be one of 'write', 'add' or 'null', got {req!r}. "
            "'write' overwrites .grad on every backward, 'add' accumulates, 'null' computes "
            "no gradient."
        )
    return str(req)  # one of GRAD_REQS


def _check_floating(t: object, where: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{where}: expected a Tensor, got {type(t).__name__}")
    if not dtypes.is_floating(t.dtype):
        raise TypeError(
            f"{where}: only floating point tensors can have gradients, this one is {t.dtype}; "
            "convert it first, e.g. x = x.astype('float32')"
        )


def _mark(t: Tensor, grad: Tensor | None, req: str) -> None:
    """Make `t` a variable of the record scope (validated by the caller)."""
    if t.grad_fn is not None:
        # as in MXNet, a computed array marked as a variable starts a new graph there
        t.grad_fn = None
        t._out_nr = 0
        t._tapes = 0
        t._accum = None
    if req == "null":
        # nothing is recorded for it, so a backward reaching only it says "not in a graph"
        t._tapes &= ~RECORD
        t._grad_req = "null"
        t._record_var = True  # setting grad_req to "write"/"add" attaches it again
        t._grad = None
        return
    t._tapes |= RECORD
    t._grad_req = req
    t._grad = grad


def attach_grad(self: Tensor, grad_req: str = "write", stype: str | None = None) -> None:
    """Give this tensor a zero `.grad` now and make it a variable of `autograd.record()`.

    Args:
        grad_req: "write" (each backward overwrites `.grad`), "add" (accumulates) or
            "null" (no gradient; frees `.grad`).
        stype: accepted for MXNet compatibility; only dense storage exists.

    >>> x = tg.tensor([1.0, 2.0]); x.attach_grad()
    >>> x.grad
    tensor([0., 0.])
    """
    _check_req(grad_req, "attach_grad")
    _check_floating(self, "attach_grad")
    if stype not in (None, "default"):
        raise ValueError(f"attach_grad: stype {stype!r} is not supported; only dense storage")
    _mark(self, _wrap(np.zeros_like(self._data), 0, array_class(self)), grad_req)


def mark_variables(
    variables: Tensor | Sequence[Tensor],
    gradients: Tensor | Sequence[Tensor],
    grad_reqs: str | Sequence[str] = "write",
) -> None:
    """Mark tensors as record-scope variables, with the given gradient buffers.

    Args:
        variables: a tensor or a list of tensors.
        gradients: the matching initial `.grad` tensors (same shapes).
        grad_reqs: one of "write", "add", "null", or a list with one per variable.

    >>> x, gx = tg.tensor([1.0, 2.0]), tg.zeros(2)
    >>> tg.autograd.mark_variables([x], [gx])
    >>> x.grad is gx
    True
    """
    variables = [variables] if isinstance(variables, Tensor) else list(variables)
    gradients = [gradients] if isinstance(gradients, Tensor) else list(gradients)
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if len(gradients) != len(variables) or len(reqs) != len(variables):
        raise ValueError(
            f"mark_variables: got {len(variables)} variables, {len(gradients)} gradients and "
            f"{len(reqs)} grad_reqs; pass one gradient (and one grad_req, or a single string) "
            "per variable"
        )
    # validate everything before marking anything
    for i, (v, g, req) in enumerate(zip(variables, gradients, reqs, strict=True)):
        _check_req(req, f"mark_variables (variable {i})")
        _check_floating(v, f"mark_variables (variable {i})")
        if not isinstance(g, Tensor):
            raise TypeError(
                f"mark_variables: gradient {i} is a {type(g).__name__}, not a Tensor; pass "
                "tg.zeros_like(variable)"
            )
        if g.shape != v.shape:
            raise ValueError(
                f"mark_variables: gradient {i} has shape {g.shape} but variable {i} has shape "
                f"{v.shape}; they must match"
            )
        if g.dtype != v.dtype:
            raise TypeError(
                f"mark_variables: gradient {i} has dtype {g.dtype} but variable {i} is "
                f"{v.dtype}; they must match"
            )
    for v, g, req in zip(variables, gradients, reqs, strict=True):
        _mark(v, g, req)
