"""MegEngine's GradManager on the tape mask: each manager is one more bit.

`gm.attach(x)` sets the manager's bit on `x`; `gm.record()` makes the bit active in this
thread, so ops on `x` (and on what is computed from it) are recorded for the manager from
then on; `gm.backward(y)` runs the one engine restricted to that bit, hands each attached
tensor's gradient through its callbacks and accumulates it into `.grad`.

Nesting gives higher order, with MegEngine's rule of who sees whom: a manager's backward is
recorded by the managers that *began recording before it* (and are still recording), and by
no other. So with `with gm: with gm2: ...`, `gm2.backward(y)` runs on tensors recorded by
`gm`, and `gm.backward(x.grad)` differentiates that gradient; with the nesting the other way
round, or with `gm | gm2` (both begin at once), `gm.backward(x.grad)` sees a constant. A
`dy` that an earlier manager tracks makes the backward differentiable in `dy` too (forward
mode by two reverse passes). See docs/recording.md.

Each recording is its own history: when it ends (`backward`, `release`, leaving `with gm:`
by an exception, or the manager dying), the manager's bit is taken off every node recorded
for it (`engine.recorder.drop_history`), so tensors kept from it are constants to any later
recording, of this manager or of a new one that reuses the bit.

    >>> x = tg.tensor([1.0, 2.0])
    >>> gm = tg.autodiff.GradManager().attach(x)
    >>> with gm:
    ...     y = (x * x).sum()
    ...     gm.backward(y)
    >>> x.grad
    tensor([2., 4.])
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from functools import reduce
from operator import or_
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import dtypes
from ..engine import backward as _engine
from ..engine.recorder import drop_history, log_history
from ..engine.state import AMBIENT, RECORD, ModeScope, allocate_tape_bit, free_tape_bit, state
from ..tensor import Tensor, _wrap
from .heads import head_gradients

if TYPE_CHECKING:
    from ..engine.state import _State

# cb(tensor, grad) -> the gradient to use (None: none is accumulated); grad is a Tensor,
# or None where an earlier callback returned None (as in MegEngine, the chain goes on)
Callback = Callable[[Tensor, Any], Any]

__all__ = ["GradManager", "GradManagerGroup", "AttachDtypeError"]

_start_order = itertools.count()  # when each record() began: earlier managers see later ones


class _Recording(threading.local):
    def __init__(self) -> None:
        # tape bit of each manager recording in this thread -> the order it began in
        self.order: dict[int, int] = {}


_recording = _Recording()


class AttachDtypeError(TypeError, AssertionError):
    """`attach` of a tensor that cannot have a gradient (not floating point).

    A TypeError (tapegrad's convention for a wrong argument) that is also an AssertionError,
    the exception MegEngine raises there, so handlers written for either keep working."""


class _HiddenFrom(ModeScope):
    """Turn the tapes in `mask` off for a while: a manager's backward runs hidden from the
    managers that began recording with it or after it."""

    def __init__(self, mask: int) -> None:
        self.mask = mask

    def _enter(self, st: _State) -> None:
        st.active &= ~self.mask


class _Spec:
    """What the manager knows of one attached tensor: a weak reference and its callbacks."""

    __slots__ = ("ref", "callbacks")

    def __init__(self, ref: weakref.ref[Tensor], callbacks: list[Callback]) -> None:
        self.ref = ref
        self.callbacks = callbacks


def _release_bit(bit: int, specs: dict[int, _Spec]) -> None:
    # runs when the manager dies: untrack its tensors so a new owner of the bit starts clean
    for spec in specs.values():
        t = spec.ref()
        if t is not None:
            t._tapes &= ~bit
    specs.clear()
    state.active &= ~bit  # died while recording (in this thread): stop recording for it
    _recording.order.pop(bit, None)
    drop_history(bit)  # a new owner of the bit must not inherit this history
    free_tape_bit(bit)


def _as_callbacks(callbacks: Callback | Iterable[Callback] | None) -> list[Callback]:
    if callbacks is None:
        return []
    if callable(callbacks):
        return [callbacks]
    cbs = list(callbacks)
    for i, cb in enumerate(cbs):
        if not callable(cb):
            raise TypeError(
                f"GradManager.attach: callback {i} is a {type(cb).__name__}, not callable"
            )
    return cbs


class GradManager:
    """Computes gradients of the tensors you attach, for what you compute while it records.

    `attach` before you compute (computation done earlier is a constant to the manager),
    then `record()` ... `backward(y)` (or `with gm: ... gm.backward(y)`): gradients are
    accumulated into the attached tensors' `.grad` (clear them yourself between steps).

    >>> model, loss_fn = tg.nn.Linear(3, 1), tg.nn.MSELoss()
    >>> opt = tg.optim.SGD(model.parameters(), lr=0.1)
    >>> data = [(tg.randn(4, 3), tg.randn(4, 1))]
    >>> gm = GradManager().attach(model.parameters())
    >>> for x, t in data:
    ...     with gm:
    ...         loss = loss_fn(model(x), t)
    ...         gm.backward(loss)
    ...     opt.step(); opt.zero_grad()
    """

    def __init__(self) -> None:
        self._bit = allocate_tape_bit()
        self._specs: dict[int, _Spec] = {}  # id(tensor) -> spec, in attach order
        self._recording = False
        self._order = -1  # start order of the current recording
        self._finalizer = weakref.finalize(self, _release_bit, self._bit, self._specs)

    # ------------------------------------------------------------------ attach
    def attach(
        self,
        tensors: Tensor | Iterable[Tensor],
        callbacks: Callback | Iterable[Callback] | None = None,
        *,
        callback: Callback | Iterable[Callback] | None = None,
    ) -> GradManager:
        """Track `tensors` (a tensor or an iterable) and run `callbacks` on their gradients.

        Args:
            tensors: floating tensors: parameters, inputs, or (while recording) intermediates.
            callbacks: a function or a list of them, `cb(tensor, grad) -> grad`, run in
                order before the gradient is accumulated. Attaching a tensor again only
                adds callbacks. (`callback=` is accepted as another name for it.)
        Returns:
            the manager, so `gm = GradManager().attach(params)` works.
        """
        ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
        cbs = _as_callbacks(callbacks) + _as_callbacks(callback)
        for i, t in enumerate(ts):  # validate all before attaching any
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"GradManager.attach: element {i} is a {type(t).__name__}, not a Tensor"
                )
            if not dtypes.is_floating(t.dtype):
                raise AttachDtypeError(
                    f"GradManager.attach: element {i} has dtype {t.dtype}; only floating point "
                    "tensors have gradients. Convert it first (x.astype('float32'))."
                )
        specs = self._specs
        for t in ts:
            spec = specs.get(id(t))
            if spec is None or spec.ref() is not t:
                specs[id(t)] = _Spec(weakref.ref(t, self._forget(id(t))), list(cbs))
            else:
                spec.callbacks.extend(cbs)
            if self._recording:  # tracked from this moment on
                t._tapes |= self._bit
        return self

    def _forget(self, key: int) -> Callable[[weakref.ref[Tensor]], None]:
        specs = self._specs  # not self: a dying tensor must not keep the manager alive

        def forget(ref: weakref.ref[Tensor]) -> None:
            spec = specs.get(key)
            if spec is not None and spec.ref is ref:
                del specs[key]

        return forget

    def attached_tensors(self) -> list[Tensor]:
        """The attached tensors that are still alive, in the order they were attached."""
        return [t for t in (s.ref() for s in list(self._specs.values())) if t is not None]

    # ------------------------------------------------------------------ recording
    @property
    def is_recording(self) -> bool:
        """True between `record()` (or entering `with gm:`) and `backward()`/`release()`."""
        return self._recording

    def record(self) -> GradManager:
        """Start recording operations on the attached tensors (in this thread).

        The managers already recording will see this one's backward; it will not see theirs.
        """
        if self._recording:
            raise RuntimeError(
                "GradManager.record(): already recording; call backward() or release() before "
                "recording again (or use a second GradManager for higher-order gradients)"
            )
        return self._start(next(_start_order))

    def _start(self, order: int) -> GradManager:
        bit = self._bit
        for t in self.attached_tensors():
            t._tapes |= bit
        self._recording = True
        self._order = order
        _recording.order[bit] = order
        log_history(bit)
        state.active |= bit
        return self

    def release(self) -> None:
        """Stop recording and drop the recorded history (backward() does this itself)."""
        self._stop()
        self._untrack()
        drop_history(self._bit)

    def _stop(self) -> None:
        self._recording = False
        state.active &= ~self._bit
        _recording.order.pop(self._bit, None)

    def __or__(self, other: GradManager | GradManagerGroup) -> GradManagerGroup:
        """`gm | gm2`: one group that records both, beginning at the same moment (so
        neither sees the other's backward)."""
        return GradManagerGroup([self]) | other

    def _untrack(self) -> None:
        # attached tensors carry the bit only while recording: outside, nothing about them
        # is recorded for the manager, even if a scope restores a mask that has the bit
        bit = self._bit
        for t in self.attached_tensors():
            t._tapes &= ~bit

    def __enter__(self) -> GradManager:
        return self.record()

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ------------------------------------------------------------------ backward
    def backward(self, y: Any = None, dy: Any = None) -> None:
        """Accumulate d(y)/d(attached) (vector-Jacobian products with `dy`) into `.grad`.

        Args:
            y: a tensor or a list of tensors computed while recording (None: nothing).
            dy: matching head gradients (None: ones of y's shape; None inside a list too).

        Every gradient is computed and passed through its callbacks before any `.grad` is
        written. An invalid `y`/`dy` raises before anything runs (the manager still records:
        fix the call and try again); past that, recording ends whatever happens.
        """
        if not self._recording:
            raise RuntimeError(
                "GradManager.backward: no computation history. Did you forget record() "
                "(or `with gm:`), or call backward()/release() already? Each recording "
                "allows one backward."
            )
        bit = self._bit
        ys, dys = _as_heads(y), _as_heads(dy)
        if dy is not None and len(dys) == len(ys):
            dys = [_broadcast_head(t, d) for t, d in zip(ys, dys)]
        # who sees this backward: the managers recording since before this one began
        later = reduce(
            or_,
            (b for b, order in _recording.order.items() if order >= self._order and b != bit),
            0,
        )
        outer = state.active & ~later & ~bit & ~(AMBIENT | RECORD)
        # a dy that an outer manager tracks: the backward must be differentiable in it
        diff_heads = any(isinstance(d, Tensor) and d._tapes & outer for d in dys)
        # validate every head before anything runs (None: ones, whatever y's shape)
        all_heads = head_gradients(
            ys,
            dys if dy is not None else None,
            create_graph=diff_heads,
            ones_for_any_shape=True,
            require_graph=False,
        )
        roots, heads = [], []
        for t, head in zip(ys, all_heads, strict=True):
            if t._tapes & bit:  # a y that no attached tensor reaches contributes nothing
                roots.append(t)
                heads.append(head)
        # stop recording first: this backward is recorded by the outer managers only
        self._stop()
        try:
            targets = self.attached_tensors()
            if roots and targets:
                # a graph other tapes track too (side-by-side managers, requires_grad) must
                # survive this backward: those tapes may still run their own over it
                shared = any(t._tapes & ~bit for t in roots)
                specs = self._specs
                if all(t.grad_fn is None and not specs[id(t)].callbacks for t in targets):
                    # the common case, fastest: the engine adds into the leaves carrying
                    # our bit (exactly the attached ones), after computing every gradient
                    with _HiddenFrom(later):
                        _engine.run_backward(
                            roots,
                            heads,
                            own_mask=bit,
                            force_add=True,
                            retain_graph=shared,
                            create_graph=diff_heads,
                        )
                else:
                    with _HiddenFrom(later):
                        grads = _engine.run_backward(
                            roots,
                            heads,
                            own_mask=bit,
                            capture=targets,
                            allow_unused=True,
                            retain_graph=shared,
                            create_graph=diff_heads,
                        )
                        grads = self._callbacks(targets, grads)
                    _accumulate(targets, grads)
        finally:
            self._untrack()
            drop_history(bit)

    def _callbacks(
        self, targets: Sequence[Tensor], grads: Sequence[Tensor | None]
    ) -> list[Tensor | None]:
        out: list[Tensor | None] = []
        for t, g in zip(targets, grads, strict=True):
            if g is not None:
                for cb in self._specs[id(t)].callbacks:
                    new = cb(t, g)
                    if new is None:  # MegEngine: the gradient becomes None (not accumulated)
                        g = None
                        continue
                    if not isinstance(new, Tensor):
                        if not hasattr(new, "shape"):
                            raise TypeError(
                                f"GradManager callback {getattr(cb, '__name__', cb)!r} returned "
                                f"{type(new).__name__}; a callback must return the gradient "
                                f"(a Tensor of shape {t.shape})"
                            )
                        # an array of the tensor's backend, or anything NumPy can convert
                        new = _wrap(new if type(new) is type(t._data) else np.asarray(new))
                    if new.shape != t.shape:
                        raise RuntimeError(
                            f"GradManager callback {getattr(cb, '__name__', cb)!r} returned a "
                            f"gradient of shape {new.shape} for a tensor of shape {t.shape}; "
                            "it must return a gradient of the tensor's shape"
                        )
                    g = new
            out.append(g)
        return out

    def __repr__(self) -> str:
        n = len(self.attached_tensors())
        return f"GradManager(attached={n}, recording={self._recording})"


class GradManagerGroup:
    """Several GradManagers that record together (`gm | gm2`): `with gm | gm2:` starts them
    at one moment, so each sees none of the others' backward, and releases them all."""

    def __init__(self, managers: Iterable[GradManager]) -> None:
        self._managers: list[GradManager] = list(managers)

    def __or__(self, other: GradManager | GradManagerGroup) -> GradManagerGroup:
        more = other._managers if isinstance(other, GradManagerGroup) else [other]
        for m in more:
            if not isinstance(m, GradManager):
                raise TypeError(
                    f"GradManager | {type(m).__name__}: both sides must be "
                    "GradManagers (or groups of them)"
                )
        return GradManagerGroup(self._managers + [m for m in more if m not in self._managers])

    __ror__ = __or__

    def record(self) -> GradManagerGroup:
        """Start every manager of the group recording, at the same moment."""
        busy = [m for m in self._managers if m.is_recording]
        if busy:
            raise RuntimeError(f"GradManagerGroup.record(): {busy[0]!r} is already recording")
        order = next(_start_order)
        for m in self._managers:
            m._start(order)
        return self

    def release(self) -> None:
        """Release every manager of the group."""
        for m in reversed(self._managers):
            m.release()

    def __enter__(self) -> GradManagerGroup:
        return self.record()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"GradManagerGroup({len(self._managers)} managers)"


def _broadcast_head(y: Any, dy: Any) -> Any:
    """MegEngine broadcasts `dy` to `y`'s shape (a Tensor dy stays differentiable)."""
    if dy is None or not isinstance(y, Tensor):
        return dy
    shape = tuple(dy.shape) if hasattr(dy, "shape") else ()
    if shape == y.shape:
        return dy
    try:
        target = np.broadcast_shapes(shape, y.shape)
    except ValueError:
        return dy  # head_gradients names the mismatch
    if target != y.shape:
        return dy
    if isinstance(dy, Tensor):
        from ..ops.views import broadcast_to

        return broadcast_to(dy, y.shape)
    return np.broadcast_to(np.asarray(dy), y.shape)


def _as_heads(x: Any) -> list[Any]:
    """y or dy as a list: None is no tensor, a single one a list of one."""
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _accumulate(targets: Sequence[Tensor], grads: Sequence[Tensor | None]) -> None:
    """`.grad += grad` for every computed gradient (written only after all were computed)."""
    with _engine._write_lock:
        for t, g in zip(targets, grads, strict=True):
            if g is None:
                continue  # y does not depend on it: .grad stays as it was
            # a plain gradient: own a copy (arrays may be shared)
            grad: Any = g._data.astype(t.dtype, copy=True) if g.grad_fn is None else g
            _engine.accumulate_grad(t, grad, "add")
