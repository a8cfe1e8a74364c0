"""`mx.npx`: MXNet's NumPy extensions (`set_np`, activations, softmax, one_hot ...).

`set_np()` / `reset_np()` are accepted and change nothing: `mx.np` and `mx.nd` arrays are
the same tapegrad tensors, and Gluon blocks take either.
"""
from __future__ import annotations

from .._facade import facade_getattr
from .ndarray import Activation, batch_dot, log_softmax, one_hot, softmax  # noqa: F401

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "use_np", "relu", "sigmoid",
           "softmax", "log_softmax", "one_hot", "activation", "batch_dot", "waitall"]


def set_np(shape=True, array=True, dtype=False) -> None:
    """Accepted (a no-op): tapegrad's arrays already are NumPy-style."""


def reset_np() -> None:
    """Accepted (a no-op)."""


def is_np_array() -> bool:
    return True


def is_np_shape() -> bool:
    return True


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
