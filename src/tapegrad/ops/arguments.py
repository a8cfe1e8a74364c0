"""Argument parsing shared by the public functions: `dim=` or `axis=`, dims given as
`f(x, 2, 3)` or `f(x, (2, 3))`, negative axes.

PyTorch users spell a dimension `dim`, NumPy users `axis`; the public functions take both and
resolve them here, so every op sees one normalized parameter.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, _axis


def norm_axes(axis: Any, ndim: int) -> Any:
    """`axis` (None, an int or a sequence of ints) with negative axes made non-negative."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, ndim) for a in axis)
    return _axis(axis, ndim)


def check_scalar_dims(name: str, axis: Any) -> None:
    """Check `axis` (an int or a sequence of ints) given for a 0-d input. PyTorch lends a 0-d
    tensor one dimension: dim 0 and dim -1 name it (a reduction, flip, scan or move over it
    leaves the one value as it is), anything else is out of range, and naming it twice is an
    error (NumPy refuses them all, or turns a scan's result 1-d)."""
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    for a in axes:
        try:
            _axis(a, 0)
        except IndexError as e:
            raise IndexError(f"{name}: {e}; the input is 0-d") from None
    if len(axes) > 1:
        raise RuntimeError(
            f"{name}: dim 0 appears multiple times in the list of dims {axis!r} "
            "(a 0-d input has one dimension, 0 or -1)"
        )


def dims_arg(dims: tuple[Any, ...]) -> tuple[int, ...]:
    """`f(x, 2, 3)` or `f(x, (2, 3))` or `f(x, [2, 3])` -> (2, 3)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    if len(dims) == 1 and isinstance(dims[0], Tensor):
        return tuple(int(d) for d in dims[0].tolist())
    return tuple(dims)


def pick(dim: Any, axis: Any, name: str = "dim") -> Any:
    """Whichever of `dim=` / `axis=` was given (None when neither); both is an error."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"pass {name}= or axis=, not both")
        return axis
    return dim


def need_dim(dim: Any, axis: Any, what: str) -> Any:
    """dim= or axis= (one of them, required), as PyTorch and NumPy users spell it."""
    dim = pick(dim, axis)
    if dim is None:
        raise TypeError(f"{what}() missing argument 'dim' (or axis=)")
    return dim
