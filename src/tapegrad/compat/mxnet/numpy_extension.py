"""`mx.npx`: MXNet's NumPy extensions (`set_np`, activations, softmax, one_hot ...).

`set_np()` / `reset_np()` choose what Gluon parameters are (as in MXNet 1.x): `mx.np.ndarray`s
after `set_np()`, `mx.nd.NDArray`s otherwise (`mx.np.ndarray` is a subclass of `NDArray`,
so Gluon blocks take either, and ops mixing the two return `mx.np.ndarray`s).
"""
from __future__ import annotations

from .._facade import facade_getattr
from .ndarray import Activation, batch_dot, log_softmax, one_hot, softmax  # noqa: F401

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "use_np", "relu", "sigmoid",
           "softmax", "log_softmax", "one_hot", "activation", "batch_dot", "waitall"]


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


def use_np(obj):
    """Accepted as a decorator; returns `obj` unchanged."""
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
