"""`mx.util`: NumPy-mode switches and small helpers, as `mxnet.util`."""

from __future__ import annotations

import os

from .numpy_extension import (  # noqa: F401
    is_np_array,
    is_np_shape,
    np_array,
    np_shape,
    reset_np,
    set_np,
    set_np_shape,
    use_np,
    use_np_array,
    use_np_shape,
)

__all__ = [
    "is_np_array",
    "is_np_shape",
    "np_array",
    "np_shape",
    "reset_np",
    "set_np",
    "set_np_shape",
    "use_np",
    "use_np_array",
    "use_np_shape",
    "getenv",
    "setenv",
    "makedirs",
    "get_gpu_count",
]


def getenv(name: str):
    """The value of environment variable `name` (None when unset)."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set environment variable `name` (None unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def makedirs(d: str) -> None:
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def get_gpu_count() -> int:
    from .context import num_gpus

    return num_gpus()
