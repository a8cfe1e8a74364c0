"""`megengine.functional.tensor`: MegEngine's home of the tensor-making and -shaping
functions (`ones`, `zeros`, `concat`, ...). The same objects as `F.ones` etc.

    >>> from tapegrad.compat.megengine.functional.tensor import ones
    >>> ones((2,)).numpy().tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import importlib

# the names of MegEngine 1.13's functional/tensor.py (resolved lazily from F)
_NAMES = [
    "arange",
    "broadcast_to",
    "concat",
    "cond_take",
    "copy",
    "cumsum",
    "diag",
    "expand_dims",
    "eye",
    "flatten",
    "full",
    "full_like",
    "gather",
    "linspace",
    "meshgrid",
    "ones",
    "ones_like",
    "repeat",
    "reshape",
    "roll",
    "split",
    "squeeze",
    "stack",
    "scatter",
    "tile",
    "transpose",
    "where",
    "zeros",
    "zeros_like",
    "swapaxes",
]


def __getattr__(name: str):
    if name.startswith("__") or name not in _NAMES:
        raise AttributeError(
            f"{name!r} is not in megengine.functional.tensor; see megengine.functional"
        )
    return getattr(importlib.import_module(__package__), name)


def __dir__():
    return sorted(_NAMES)
