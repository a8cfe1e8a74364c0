"""Dimension helpers of torch.functional: atleast_1d / 2d / 3d, broadcast_shapes,
unravel_index, chain_matmul (PyTorch's names and rules; composites of views and matmul).

>>> tg.atleast_2d(tg.tensor([1.0, 2.0])).shape
(1, 2)
"""

from __future__ import annotations

import warnings
from functools import reduce

import numpy as np

from ..tensor import Tensor, _wrap
from .linalg import matmul
from .views import reshape

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "unravel_index",
    "chain_matmul",
]


def _each(what: str, tensors: tuple, one):
    """PyTorch's calling forms: one tensor -> a tensor; several, or one list/tuple of them,
    -> a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        if len(tensors) == 1:
            return (one(_check(what, tensors[0])),)
    elif len(tensors) == 1:
        return one(_check(what, tensors[0]))
    return tuple(one(_check(what, t)) for t in tensors)


def _check(what: str, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}(): expected Tensors, got {type(t).__name__}")
    return t


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d one becomes shape (1,)); a view.

    >>> tg.atleast_1d(tg.tensor(3.0))
    tensor([3.])
    >>> [t.shape for t in tg.atleast_1d(tg.tensor(1.0), tg.ones(2, 2))]
    [(1,), (2, 2)]
    """
    return _each("atleast_1d", tensors, lambda t: reshape(t, (1,)) if t.ndim == 0 else t)


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions: () -> (1, 1), (n,) -> (1, n); a view.

    >>> tg.atleast_2d(tg.ones(3)).shape
    (1, 3)
    """

    def one(t):
        return reshape(t, (1,) * (2 - t.ndim) + tuple(t.shape)) if t.ndim < 2 else t

    return _each("atleast_2d", tensors, one)


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions: () -> (1, 1, 1), (n,) -> (1, n, 1),
    (m, n) -> (m, n, 1), as PyTorch and NumPy place them; a view.

    >>> tg.atleast_3d(tg.ones(2, 3)).shape
    (2, 3, 1)
    """

    def one(t):
        if t.ndim == 0:
            return reshape(t, (1, 1, 1))
        if t.ndim == 1:
            return reshape(t, (1, t.shape[0], 1))
        if t.ndim == 2:
            return reshape(t, (*t.shape, 1))
        return t

    return _each("atleast_3d", tensors, one)


def broadcast_shapes(*shapes) -> tuple:
    """The shape that tensors of these shapes (tuples, or ints for 1-d shapes) broadcast to.

    >>> tg.broadcast_shapes((2, 1), (3,), 1)
    (2, 3)
    """
    as_tuples = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*as_tuples))
    except ValueError:
        raise RuntimeError(
            f"broadcast_shapes(): shapes {as_tuples} don't broadcast to a single shape (each "
            "dimension, from the last, must be equal or 1)"
        ) from None


def unravel_index(indices, shape) -> tuple:
    """The coordinates in an array of `shape` of each flat index in `indices`: a tuple of
    int64 tensors shaped as `indices`. As PyTorch, every coordinate is `index // stride %
    size`, so indices past the end or negative wrap around.

    >>> tg.unravel_index(tg.tensor([4, 1]), (2, 3))
    (tensor([1, 0]), tensor([1, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(
            f"unravel_index(): expected 'indices' to be a Tensor, got {type(indices).__name__}"
        )
    data = indices.detach().numpy() if indices.device == "cpu" else indices.asnumpy()
    if data.dtype.kind not in "iu":
        raise TypeError(
            f"unravel_index(): expected 'indices' to be integer dtype, but got {data.dtype}"
        )
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"unravel_index(): 'shape' cannot have negative values, got {dims}")
    flat = data.astype(np.int64)
    strides = np.cumprod((1,) + dims[:0:-1])[::-1]  # row-major strides of `dims`
    with np.errstate(divide="ignore"):
        return tuple(
            _wrap(np.asarray(np.mod(np.floor_divide(flat, s), d) if d else np.zeros_like(flat)))
            for s, d in zip(strides, dims)
        )


def chain_matmul(*matrices):
    """The product of two or more 2-D matrices (deprecated in PyTorch, which warns, for
    tg.linalg.multi_dot; so does this).

    >>> import warnings; warnings.simplefilter("ignore")
    >>> tg.chain_matmul(tg.ones(2, 3), tg.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    warnings.warn(
        "torch.chain_matmul is deprecated; use linalg.multi_dot, which takes a list of two "
        "or more tensors",
        UserWarning,
        stacklevel=2,
    )
    for m in matrices:
        if not isinstance(m, Tensor) or m.ndim != 2:
            shape = tuple(m.shape) if isinstance(m, Tensor) else type(m).__name__
            raise RuntimeError(f"chain_matmul(): expected 2-D tensors, got {shape}")
    if not matrices:
        raise RuntimeError("chain_matmul(): expected one or more tensors")
    return reduce(matmul, matrices) if len(matrices) > 1 else matrices[0].clone()
