"""Thread-local recording state: which tapes are active, and whether layers train.

A *tape* is one bit of a mask. A tensor carries the bits of the tapes that track it
(`Tensor._tapes`); the thread carries the bits of the tapes that are recording now
(`state.active`). An op is recorded when the two masks share a bit.

    bit 0  AMBIENT  PyTorch style: `requires_grad=True`; active unless `no_grad()`
    bit 1  RECORD   MXNet style: `attach_grad()`; active only inside `record()`
    bit 2  FORWARD  dual tensors of forward-mode AD; active only inside `forward_ad.dual_level()`
                    (it records no graph: the dispatcher computes the output's tangent)
    bit 3  TRACING  set by `tg.compile` on the tensors it traces (compile/hook.py); never
                    active, so nothing records on it: it only routes their ops to the tracer
    bit 4+          one per GradManager (MegEngine), handed out by `allocate_tape_bit`

A tensor *requires grad* when it carries a bit outside `NOT_GRAD` (FORWARD and TRACING
track no graph): every "does it require grad" check masks with it, so a traced tensor
raises where the same tensor untraced raises.

The mask changes only through a `ModeScope` (`no_grad`, `enable_grad`, `record`, ...; library
code that needs another mode for a while enters one of them, so an exception restores the
caller's state), the two plain-function switches PyTorch and MXNet code calls
(`set_grad_enabled(b)`, `set_recording(b)`), and a GradManager's `record()`/`release()` of
its own bit. `tests/engine/test_mode_scopes.py` fails on an assignment anywhere else.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:  # the level's class lives above the engine; only its type is needed here
    from ..autograd.forward_ad import _Level

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Scope = TypeVar("_Scope", bound="ModeScope")

AMBIENT = 1
RECORD = 2
FORWARD = 4
TRACING = 8
NOT_GRAD = FORWARD | TRACING  # bits that do not make a tensor require grad
_FIRST_MANAGER_BIT = 4


class _State(threading.local):
    """Per-thread flags. Every thread starts with the defaults below."""

    def __init__(self) -> None:
        self.active = AMBIENT  # mask of tapes recording in this thread
        self.training = False  # MXNet's is_training(): Dropout/BatchNorm with training=None
        self.inference = False  # inference_mode(): tensors made here can never join a graph
        self.anomaly = False  # detect_anomaly(): check every gradient backward produces
        # what each entered ModeScope restores on exit (LIFO): (active, training, inference)
        self.saved_modes: list[tuple[int, bool, bool]] = []
        self.dual_level: _Level | None = None  # the forward_ad level entered in this thread, if any
        # called as f(node, tensor) when a recorded backward rebuilds a node's saved output;
        # set only through engine.backward.observing_rebuilt_outputs (vmap's tracer)
        self.on_output_rebuilt: Callable[[Any, Any], None] | None = None


state = _State()

_bits_lock = threading.Lock()
_free_bits: list[int] = []
_next_bit = _FIRST_MANAGER_BIT


def allocate_tape_bit() -> int:
    """A fresh tape bit for a GradManager; returned with `free_tape_bit` when it dies."""
    global _next_bit
    with _bits_lock:
        if _free_bits:
            return _free_bits.pop()
        bit = 1 << _next_bit
        _next_bit += 1
        return bit


def free_tape_bit(bit: int) -> None:
    with _bits_lock:
        _free_bits.append(bit)


class ModeScope:
    """Base of every recording/training mode: per-thread, restores on exit, doubles as a decorator.

    Subclasses override `_enter(state)`; constructing one changes nothing until it is entered.
    """

    def _enter(self, st: _State) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __enter__(self: _Scope) -> _Scope:
        st = state
        # one LIFO stack per thread, so the same object can be entered again (nested, by
        # recursion through a decorator, or by another thread) without sharing saved state
        st.saved_modes.append((st.active, st.training, st.inference))
        self._enter(st)
        return self

    def __exit__(self, *exc: object) -> None:
        st = state
        st.active, st.training, st.inference = st.saved_modes.pop()

    def __call__(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with self:  # the saved-state stack makes re-entry (recursion, threads) safe
                return fn(*args, **kwargs)

        return wrapper


class also_recording(ModeScope):
    """Internal: inside the block, the tapes of `mask` record too (on top of what already
    records). A compiled function's eager fallback uses it to re-record on the tapes it traced."""

    def __init__(self, mask: int) -> None:
        self._mask = mask

    def _enter(self, st: _State) -> None:
        st.active |= self._mask


class not_recording(ModeScope):
    """Internal: inside the block, the tapes of `mask` do not record (the others are as they
    were). `jacfwd` evaluates a function with reverse mode off; forward AD derives a tangent
    with its own tape off."""

    def __init__(self, mask: int) -> None:
        self._mask = mask

    def _enter(self, st: _State) -> None:
        st.active &= ~self._mask
