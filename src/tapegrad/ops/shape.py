"""Shape ops: reshape and views, transposes, broadcasting, tiling, concatenation, splitting,
padding — every name importable from here, defined in the modules that own them:

    views.py        reshape broadcast_to sum_to expand_dims squeeze transpose swapaxes moveaxis
    tiling.py       flip tile repeat (copies that repeat or reorder elements)
    joins.py        concatenate stack pad, and split / chunk / unbind

The internal ops have NumPy's names and signatures (derivative rules call `xp.reshape(g, s)`,
`xp.swapaxes(g, -1, -2)` on arrays and on tensors alike); the public functions follow PyTorch
(`transpose(x, dim0, dim1)`, `repeat` = tile, `flip(dims)`, `split(size)`, `pad` with the last
dimension first). Importing this module registers their ops in that order.
"""

# ruff: noqa: I001  (the imports below are in registration order, not alphabetical)
from __future__ import annotations

import builtins

from .views import (  # noqa: F401
    _broadcast_to,
    _expand_dims,
    _moveaxis,
    _mT,
    _reshape,
    _squeeze,
    _sum_to,
    _swapaxes,
    _transpose,
    broadcast_to,
    contiguous,
    expand,
    expand_as,
    expand_dims,
    flatten,
    moveaxis,
    movedim,
    permute,
    reshape,
    reshape_as,
    squeeze,
    sum_to_size,
    swapaxes,
    swapdims,
    t,
    transpose,
    unflatten,
    unsqueeze,
    view,
    view_as,
)
from .tiling import (  # noqa: F401
    _flip,
    _full_reps,
    _repeat,
    _repeat_grad,
    _tile,
    flip,
    fliplr,
    flipud,
    repeat,
    repeat_interleave,
    tile,
)
from .joins import (  # noqa: F401
    _PAD_MODES,
    _as,
    _ConcatenateOp,
    _concatenate,
    _first_tensor,
    _narrow,
    _pad,
    _stack,
    cat,
    chunk,
    concat,
    concatenate,
    hstack,
    pad,
    split,
    stack,
    tensor_split,
    unbind,
    vstack,
)

_slice = builtins.slice

__all__ = [
    "reshape",
    "view",
    "view_as",
    "reshape_as",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "expand_dims",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "permute",
    "moveaxis",
    "movedim",
    "broadcast_to",
    "expand",
    "expand_as",
    "sum_to_size",
    "repeat",
    "tile",
    "repeat_interleave",
    "flip",
    "fliplr",
    "flipud",
    "cat",
    "concatenate",
    "concat",
    "stack",
    "hstack",
    "vstack",
    "split",
    "tensor_split",
    "chunk",
    "unbind",
    "pad",
]
