"""Anomaly detection: find the forward op whose backward produced NaN or Inf.

Inside `detect_anomaly()` the dispatcher stores, with every node it records, the traceback
of the forward call that created it; a backward run in anomaly mode checks every gradient it
produces and raises at the first NaN/Inf, naming the op (`MulBackward`, ...) and showing
that traceback. Both cost time: use it to debug, not to train.

    >>> x = tg.tensor(1.0, requires_grad=True)
    >>> with tg.autograd.detect_anomaly():
    ...     y = x * float("inf")
    ...     y.backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'MulBackward' returned nan or inf ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ..engine.state import state

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Scope = TypeVar("_Scope", bound="detect_anomaly")

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


class detect_anomaly:
    """Scope (and decorator) that turns anomaly detection on in this thread.

    Args:
        check_nan: True (default) to check gradients for NaN/Inf; False leaves the mode
            off (PyTorch would still record tracebacks).

    Restores the previous setting on exit, exceptions included; nests.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)

    def __enter__(self: _Scope) -> _Scope:
        # one LIFO per thread: the same object may be entered again (recursion, threads)
        _stack().append(state.anomaly)
        state.anomaly = self.check_nan
        return self

    def __exit__(self, *exc: object) -> None:
        state.anomaly = _stack().pop()

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with self:
                return fn(*args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        return f"detect_anomaly(check_nan={self.check_nan})"


def _stack() -> list[bool]:
    stack: list[bool] | None = getattr(state, "anomaly_modes", None)
    if stack is None:
        stack = state.anomaly_modes = []  # made on first use
    return stack


class set_detect_anomaly(detect_anomaly):
    """Turn anomaly detection on or off in this thread at once (`set_detect_anomaly(True)`),
    or for a block (`with set_detect_anomaly(False):`, restored on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.check_nan = bool(mode) and bool(check_nan)
        self._before = state.anomaly
        state.anomaly = self.check_nan

    def __enter__(self) -> set_detect_anomaly:
        _stack().append(self._before)
        state.anomaly = self.check_nan
        return self

    def __repr__(self) -> str:
        return f"set_detect_anomaly(mode={self.check_nan})"


def is_anomaly_enabled() -> bool:
    """True when anomaly detection is on in this thread."""
    return bool(state.anomaly)
