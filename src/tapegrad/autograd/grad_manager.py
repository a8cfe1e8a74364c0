"""MegEngine's GradManager on the tape mask: each manager is one more bit.

`gm.attach(x)` sets the manager's bit on `x`; `gm.record()` makes the bit active in this
thread, so ops on `x` (and on what is computed from it) are recorded for the manager from
then on; `gm.backward(y)` runs the one engine restricted to that bit, hands each attached
tensor's gradient through its callbacks and accumulates it into `.grad`.

Nesting gives higher order for free: while an outer manager records, the engine runs an
inner manager's backward on tensors (recorded by the outer bit), so the gradients it leaves
in `.grad` can be differentiated by the outer `backward`.

    >>> x = tg.tensor([1.0, 2.0])
    >>> gm = tg.autodiff.GradManager().attach(x)
    >>> with gm:
    ...     y = (x * x).sum()
    ...     gm.backward(y)
    >>> x.grad
    tensor([2., 4.])
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from ..engine import backward as _engine
from ..engine.node import ACCUMULATE
from ..engine.state import allocate_tape_bit, free_tape_bit, state
from ..tensor import Tensor, _wrap
from .heads import head_gradients

__all__ = ["GradManager"]


class _Spec:
    """What the manager knows of one attached tensor: a weak reference and its callbacks."""

    __slots__ = ("ref", "callbacks")

    def __init__(self, ref, callbacks) -> None:
        self.ref = ref
        self.callbacks = callbacks


def _release_bit(bit: int, specs: dict) -> None:
    # runs when the manager dies: untrack its tensors so a new owner of the bit starts clean
    for spec in specs.values():
        t = spec.ref()
        if t is not None:
            t._tapes &= ~bit
    specs.clear()
    state.active &= ~bit  # died while recording (in this thread): stop recording for it
    free_tape_bit(bit)


def _as_callbacks(callbacks) -> list:
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
        self._finalizer = weakref.finalize(self, _release_bit, self._bit, self._specs)

    # ------------------------------------------------------------------ attach
    def attach(self, tensors, callbacks=None, *, callback=None) -> GradManager:
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
                raise TypeError(
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

    def _forget(self, key: int):
        specs = self._specs  # not self: a dying tensor must not keep the manager alive

        def forget(ref) -> None:
            spec = specs.get(key)
            if spec is not None and spec.ref is ref:
                del specs[key]

        return forget

    def attached_tensors(self) -> list:
        """The attached tensors that are still alive, in the order they were attached."""
        return [t for t in (s.ref() for s in list(self._specs.values())) if t is not None]

    # ------------------------------------------------------------------ recording
    @property
    def is_recording(self) -> bool:
        """True between `record()` (or entering `with gm:`) and `backward()`/`release()`."""
        return self._recording

    def record(self) -> GradManager:
        """Start recording operations on the attached tensors (in this thread)."""
        if self._recording:
            raise RuntimeError(
                "GradManager.record(): already recording; call backward() or release() before "
                "recording again (or use a second GradManager for higher-order gradients)"
            )
        bit = self._bit
        for t in self.attached_tensors():
            t._tapes |= bit
        self._recording = True
        state.active |= bit
        return self

    def release(self) -> None:
        """Stop recording and drop the history (backward() does this itself)."""
        self._recording = False
        state.active &= ~self._bit
        self._untrack()

    def _untrack(self) -> None:
        # attached tensors carry the bit only while recording: outside, nothing about them
        # is recorded for the manager, even if a scope restores a mask that has the bit
        bit = self._bit
        for t in self.attached_tensors():
            t._tapes &= ~bit

    def __enter__(self) -> GradManager:
        return self.record()

    def __exit__(self, *exc) -> None:
        self.release()

    # ------------------------------------------------------------------ backward
    def backward(self, y=None, dy=None) -> None:
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
        # validate every head before anything runs (None: ones, whatever y's shape)
        all_heads = head_gradients(ys, dys if dy is not None else None,
                                   ones_for_any_shape=True, require_graph=False)
        roots, heads = [], []
        for t, head in zip(ys, all_heads, strict=True):
            if t._tapes & bit:  # a y that no attached tensor reaches contributes nothing
                roots.append(t)
                heads.append(head)
        # stop recording first: this backward is recorded by *other* active tapes only
        self._recording = False
        state.active &= ~bit
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
                    _engine.run_backward(roots, heads, own_mask=bit, force_add=True,
                                         retain_graph=shared)
                else:
                    grads = _engine.run_backward(roots, heads, own_mask=bit, capture=targets,
                                                 allow_unused=True, retain_graph=shared)
                    _accumulate(targets, self._callbacks(targets, grads))
        finally:
            self._untrack()
            _forget_history(roots, bit)

    def _callbacks(self, targets, grads) -> list:
        out = []
        for t, g in zip(targets, grads, strict=True):
            if g is not None:
                for cb in self._specs[id(t)].callbacks:
                    new = cb(t, g)
                    if not isinstance(new, Tensor):
                        if new is None or not hasattr(new, "shape"):
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


def _as_heads(x) -> list:
    """y or dy as a list: None is no tensor, a single one a list of one."""
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _accumulate(targets, grads) -> None:
    """`.grad += grad` for every computed gradient (written only after all were computed)."""
    with _engine._write_lock:
        for t, g in zip(targets, grads, strict=True):
            if g is None:
                continue  # y does not depend on it: .grad stays as it was
            if g.grad_fn is None:  # a plain gradient: own a copy (arrays may be shared)
                g = g._data.astype(t.dtype, copy=True)
            _engine.accumulate_grad(t, g, "add")


def _forget_history(roots, bit: int) -> None:
    """Take the manager's bit off the graph it just used, so that tensors kept from this
    recording are constants next time (as in MegEngine, one history per recording)."""
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node.op is ACCUMULATE or not node.tapes & bit:
            continue  # a leaf, another tape's node, or one already visited (bit cleared)
        node.tapes &= ~bit
        stack.extend(e[0] for e in node.next if e is not None)
