"""Recording modes: no_grad enable_grad set_grad_enabled inference_mode.

Every mode is a per-thread scope on the tape mask (engine/state.py): it changes nothing
when constructed, applies itself on entry and restores the thread's whole previous state on
exit, exceptions included. Each nests, and each doubles as a decorator, both `@no_grad()`
and bare `@no_grad`. The one documented exception, kept for PyTorch users:
`set_grad_enabled(False)` called as a plain function switches the mode at once.

    >>> x = tg.tensor(1.0, requires_grad=True)
    >>> with tg.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..engine.state import AMBIENT, FORWARD, ModeScope, state

if TYPE_CHECKING:
    from ..engine.state import _State

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]


class _Mode(ModeScope):
    """ModeScope whose decorator also covers generator functions: the mode holds while the
    generator body runs (each `next`), not while the caller runs between two `yield`s."""

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        if inspect.isgeneratorfunction(fn):
            # fn makes generators, so _R is Generator[...]: what the wrapper returns
            return _generator_in_mode(self, fn)  # type: ignore[return-value]
        return super().__call__(fn)


def _generator_in_mode(
    mode: ModeScope, fn: Callable[_P, Generator[Any, Any, _R]]
) -> Callable[_P, Generator[Any, Any, _R]]:
    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> Generator[Any, Any, _R]:
        gen = fn(*args, **kwargs)
        try:
            with mode:
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode:
                        gen.close()
                    raise
                except BaseException as e:  # thrown in by the caller: deliver it in the mode
                    with mode:
                        response = gen.throw(e)
                else:
                    with mode:
                        response = gen.send(request)
        except StopIteration as stop:
            value: _R = stop.value  # the generator's return value
            return value

    return wrapper


class _BareDecoratable(_Mode):
    """A mode without arguments may decorate a function bare: `@no_grad` as `@no_grad()`."""

    def __new__(cls, fn: Callable[..., Any] | None = None) -> Any:
        self = super().__new__(cls)
        if fn is None:
            return self
        if not callable(fn):
            raise TypeError(
                f"{cls.__name__}() takes no arguments (got {fn!r}); use `with {cls.__name__}():` "
                f"or decorate a function with @{cls.__name__}"
            )
        return self(fn)  # a wrapped function, not a mode: __init__ is skipped

    def __init__(self, fn: Callable[..., Any] | None = None) -> None:
        pass

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class no_grad(_BareDecoratable):
    """Record nothing in this thread (every tape stops): `with no_grad():` or `@no_grad()`.

    Tensors computed inside have no `grad_fn`; nothing is saved for backward, so memory
    stays as low as plain NumPy. `enable_grad()` and `autograd.record()` switch recording
    back on inside it.

    >>> x = tg.tensor(1.0, requires_grad=True)
    >>> with tg.no_grad():
    ...     y = x * 2          # y.requires_grad is False
    """

    def _enter(self, st: _State) -> None:
        st.active &= FORWARD  # forward AD goes on under no_grad, as in PyTorch


class enable_grad(_BareDecoratable):
    """Record on the ambient (PyTorch) tape again, e.g. inside `no_grad()`.

    Other tapes that were recording keep recording.

    >>> x = tg.tensor(1.0, requires_grad=True)
    >>> with tg.no_grad():
    ...     with tg.enable_grad():
    ...         y = x * 2      # recorded
    """

    def _enter(self, st: _State) -> None:
        st.active |= AMBIENT


class set_grad_enabled(_Mode):
    """Switch ambient recording on (`True`) or off (`False`).

    As in PyTorch it acts at once when called as a plain function,
    `tg.set_grad_enabled(False)`, and also works as a scope (`with set_grad_enabled(b):`,
    which restores the previous state on exit) and as a decorator.

    Args:
        mode: True records on the ambient tape (like `enable_grad`), False stops every tape
            (like `no_grad`).
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, (bool, int)):
            raise TypeError(f"set_grad_enabled(mode): mode must be a bool, got {mode!r}")
        self.mode = bool(mode)
        # the state before the call, restored by the `with` block this object may open
        self._before = threading.local()
        self._before.value = (state.active, state.training, state.inference)
        self._owner = threading.get_ident()
        self._enter(state)

    def _enter(self, st: _State) -> None:
        if self.mode:
            st.active |= AMBIENT
        else:
            st.active &= FORWARD

    def __enter__(self) -> set_grad_enabled:
        before = getattr(self._before, "value", None)
        self._before.value = None
        super().__enter__()  # pushes the current (already switched) state ...
        if before is not None:  # ... but the block must restore what was there before the call
            state.saved_modes[-1] = before
        return self

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        # used as a decorator: undo the switch made by the constructor, switch per call
        before = getattr(self._before, "value", None)
        if before is not None and threading.get_ident() == self._owner:
            state.active, state.training, state.inference = before
        self._before.value = None
        return super().__call__(fn)

    def __repr__(self) -> str:
        return f"set_grad_enabled(mode={self.mode})"


class inference_mode(_Mode):
    """Like `no_grad()`, and marks the thread as in inference mode
    (`is_inference_mode_enabled()`); `inference_mode(False)` leaves it again and re-enables
    ambient recording, as in PyTorch.

    >>> model, x = tg.nn.Linear(3, 1), tg.randn(2, 3)
    >>> with tg.inference_mode():
    ...     y = model(x)
    """

    def __new__(cls, mode: bool | Callable[..., Any] = True) -> Any:
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode: bool | Callable[..., Any] = True) -> None:
        if callable(mode) and not isinstance(mode, bool):
            return
        self.mode = bool(mode)

    def _enter(self, st: _State) -> None:
        if self.mode:
            st.active = 0
            st.inference = True
        else:
            st.active |= AMBIENT
            st.inference = False

    def __repr__(self) -> str:
        return f"inference_mode(mode={self.mode})"


def is_grad_enabled() -> bool:
    """True when ops on tensors that require grad are recorded in this thread
    (the ambient tape is active)."""
    return bool(state.active & AMBIENT)


def is_inference_mode_enabled() -> bool:
    """True inside `inference_mode()` in this thread."""
    return bool(state.inference)
