"""`mx.npx`: MXNet's NumPy extensions (`set_np`, activations, softmax, one_hot ...).

`set_np()` / `reset_np()` choose what Gluon parameters are (as in MXNet 1.x): `mx.np.ndarray`s
after `set_np()`, `mx.nd.NDArray`s otherwise (`mx.np.ndarray` is a subclass of `NDArray`,
so Gluon blocks take either, and ops mixing the two return `mx.np.ndarray`s).
"""

from __future__ import annotations

import functools

from .._facade import facade_getattr
from .ndarray import Activation, batch_dot, log_softmax, one_hot, softmax  # noqa: F401

__all__ = [
    "set_np",
    "reset_np",
    "is_np_array",
    "is_np_shape",
    "use_np",
    "np_array",
    "np_shape",
    "set_np_shape",
    "use_np_array",
    "use_np_shape",
    "relu",
    "sigmoid",
    "softmax",
    "log_softmax",
    "one_hot",
    "activation",
    "batch_dot",
    "waitall",
]


_np_mode = [False]  # process-wide, as MXNet's


def set_np(shape=True, array=True, dtype=False) -> None:
    """NumPy mode: Gluon parameters made from now on are `mx.np.ndarray`s."""
    _np_mode[0] = bool(array)


def reset_np() -> None:
    """Back to `mx.nd.NDArray` parameters."""
    _np_mode[0] = False


def is_np_array() -> bool:
    """True after `set_np()` (Gluon parameters are `mx.np.ndarray`s)."""
    return _np_mode[0]


def is_np_shape() -> bool:
    """True: shapes follow NumPy (0-d arrays and zero-size dimensions are allowed)."""
    return True


def array_class() -> type:
    """The array type Gluon parameters get now: `mx.np.ndarray` in NumPy mode, else NDArray."""
    if _np_mode[0]:
        from .numpy.multiarray import ndarray

        return ndarray
    from .ndarray.ndarray import NDArray

    return NDArray


def set_np_shape(active) -> bool:
    """Accepted: shapes always follow NumPy here. Returns the previous value (True)."""
    return True


class _NpScope:
    """`with np_array(True):` / `@np_array()`: NumPy array mode inside, restored after."""

    def __init__(self, active=True) -> None:
        self._active = bool(active)
        self._prev = False  # the mode to restore, read on __enter__ (a bool, as the flag is)

    def __enter__(self):
        self._prev = _np_mode[0]
        _np_mode[0] = self._active
        return self

    def __exit__(self, *exc) -> None:
        _np_mode[0] = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def scoped(*args, **kwargs):
            with _NpScope(self._active):
                return fn(*args, **kwargs)

        return scoped


class _ShapeScope(_NpScope):
    """`with np_shape(True):`: accepted; shapes always follow NumPy here."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def np_array(active=True) -> _NpScope:
    """A scope (and decorator) in which Gluon parameters are `mx.np.ndarray`s (`active`)."""
    return _NpScope(active)


def np_shape(active=True) -> _ShapeScope:
    """A scope accepted for MXNet code: shapes always follow NumPy here."""
    return _ShapeScope(active)


def use_np(obj):
    """Run a function (or every method of a class, its inherited ones included, as MXNet's
    decorator does) in NumPy mode: Gluon parameters made inside, deferred ones made at the
    first forward too, are `mx.np.ndarray`s; the mode before is restored after each call."""
    if isinstance(obj, type):
        import inspect

        for name, value in inspect.getmembers(obj, inspect.isfunction):
            if name.startswith("__") and name not in ("__init__", "__call__"):
                continue
            setattr(obj, name, _NpScope(True)(value))
        return obj
    return _NpScope(True)(obj)


use_np_array = use_np


def use_np_shape(obj):
    """Accepted: shapes always follow NumPy here; returns `obj` unchanged."""
    return obj


def relu(data):
    import tapegrad as tg

    return tg.relu(data)


def sigmoid(data):
    import tapegrad as tg

    return tg.sigmoid(data)


def activation(data, act_type="relu"):
    return Activation(data, act_type)


def waitall() -> None:
    """Nothing to wait for: tapegrad runs eagerly."""


__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.npx)", {})
