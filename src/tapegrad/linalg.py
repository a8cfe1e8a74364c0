"""tg.linalg: inv det slogdet solve svd svdvals norm vector_norm matrix_norm (PyTorch's
torch.linalg).

>>> import tapegrad as tg
>>> a = tg.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
>>> tg.linalg.det(a)
tensor(8., grad_fn=<DetBackward>)
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .backend import array_module
from .ops import lu_pattern
from .ops.elementwise import abs as _abs
from .ops.linalg import _det, _inv, _logabsdet, _solve, matmul
from .ops.reduce import amax, amin
from .ops.reduce import sum as _sum
from .ops.shape import expand_dims, moveaxis, squeeze
from .ops.statistics import _vector_norm
from .ops.svd import SvdResult, linalg_svd
from .tensor import Tensor, _axis, _wrap

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])

__all__ = [
    "inv",
    "det",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "norm",
    "vector_norm",
    "matrix_norm",
    "matmul",
    "multi_dot",
]


def inv(A):
    """The inverse of a square matrix (or of each matrix in a batch (..., n, n)).

    Raises RuntimeError for a singular matrix."""
    return _inv(A)


def det(A):
    """The determinant of a square matrix (or of each in a batch)."""
    return _det(A)


def slogdet(A):
    """(sign, logabsdet) of the determinant (a named tuple); only logabsdet is differentiable.

    >>> sign, logabsdet = tg.linalg.slogdet(tg.eye(3) * 2)
    """
    data = A._data
    if data.ndim < 2 or data.shape[-1] != data.shape[-2]:
        raise RuntimeError(
            f"linalg.slogdet: expected a square matrix or a batch of them (shape (..., n, n)), "
            f"got shape {tuple(data.shape)}"
        )
    xp = array_module(data)
    if xp is np and lu_pattern.has_nonfinite(data):  # PyTorch's sign (0 where NaN spreads)
        return SlogdetResult(_wrap(lu_pattern.sign_of_det(data)), _logabsdet(A))
    return SlogdetResult(_wrap(xp.asarray(xp.linalg.slogdet(data)[0])), _logabsdet(A))


def solve(A, B, *, left=True):
    """X with A @ X = B. B is (..., n, k), or a vector (n,) / (..., n) of matching batch.

    >>> tg.linalg.solve(tg.eye(2) * 2, tg.tensor([2.0, 4.0]))
    tensor([1., 2.])
    """
    if not left:
        raise NotImplementedError("linalg.solve(left=False): solve A.mT @ X.mT = B.mT instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        return squeeze(_solve(A, expand_dims(B, -1)), -1)
    return _solve(A, B)


def svd(A, full_matrices: bool = True) -> SvdResult:
    """A = U diag(S) Vh for a matrix (..., m, n): a named tuple (U, S, Vh), S descending.

    full_matrices=True (PyTorch's default): U is (m, m) and Vh (n, n); False: U (m, k), Vh
    (k, n) with k = min(m, n). Differentiable (float32/float64): S always; U and Vh where the
    singular values are distinct (and non-zero for a non-square A). Their signs are LAPACK's
    choice, so compare losses that do not depend on them (S, U diag(S) Vh, |U|).

    >>> A = tg.tensor([[3.0, 0.0], [0.0, -2.0], [0.0, 0.0]], requires_grad=True)
    >>> U, S, Vh = tg.linalg.svd(A, full_matrices=False)
    >>> U.shape, S, Vh.shape
    ((3, 2), tensor([3., 2.], grad_fn=<GetitemBackward>), (2, 2))
    >>> S.sum().backward(); A.grad
    tensor([[ 1.,  0.],
            [ 0., -1.],
            [ 0.,  0.]])
    """
    return linalg_svd(A, full_matrices)


def svdvals(A):
    """The singular values of a matrix (..., m, n), descending (shape (..., min(m, n))).

    >>> tg.linalg.svdvals(tg.tensor([[0.0, 2.0], [-1.0, 0.0]]))
    tensor([2., 1.])
    """
    return linalg_svd(A, full_matrices=False).S


def multi_dot(tensors):
    """The product of a list of two or more matrices; the first may be a vector (as a row)
    and the last a vector (as a column), which then leave the result without that dimension.

    >>> tg.linalg.multi_dot([tg.ones(3), tg.ones(3, 4), tg.ones(4)])
    tensor(12.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"linalg.multi_dot(): expected 2 or more tensors, got {len(tensors)}")
    for i, t in enumerate(tensors):
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if not isinstance(t, Tensor) or t.ndim not in want:
            shape = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
            raise RuntimeError(
                f"linalg.multi_dot(): tensor {i} must be "
                f"{'1-D or 2-D' if len(want) == 2 else '2-D'}, got {shape}"
            )
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def vector_norm(x, ord=2, dim=None, keepdim=False):  # noqa: A002
    """The vector `ord`-norm over `dim` (all elements when None): 2, 1, inf, -inf, 0, any p."""
    axis = (
        None
        if dim is None
        else tuple(_axis(d, x.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,)))
    )
    return _vector_norm(x, axis=axis, ord=float(ord), keepdims=keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):  # noqa: A002
    """Matrix norm over the two dimensions `dim`: 'fro', 'nuc' (the sum of the singular
    values), 2 / -2 (the largest / smallest singular value), 1, -1 (max / min column sum of
    |A|), inf or -inf (max / min row sum).

    >>> tg.linalg.matrix_norm(tg.tensor([[3.0, 0.0], [0.0, -2.0]]), 'nuc')
    tensor(5.)
    """
    if A.ndim < 2:
        raise RuntimeError(
            f"linalg.matrix_norm: expected a tensor with 2 or more dimensions, "
            f"got shape {tuple(A.shape)}"
        )
    r, c = (_axis(d, A.ndim) for d in dim)
    if ord == "fro":
        return _vector_norm(A, axis=(r, c), ord=2.0, keepdims=keepdim)
    if ord in (1, -1, float("inf"), -float("inf")):
        # 1: largest column sum of |A| (sum over rows); inf: largest row sum
        over, then = (r, c) if ord in (1, -1) else (c, r)
        sums = _sum(_abs(A), dim=over, keepdim=True)
        pick = amax if ord > 0 else amin
        out = pick(sums, dim=then, keepdim=True)
        return out if keepdim else squeeze(out, (r, c))
    if ord in ("nuc", 2, -2):
        # over the two dims moved last (then put back as size-1 dims for keepdim)
        s = svdvals(moveaxis(A, (r, c), (-2, -1)))
        out = _sum(s, dim=-1) if ord == "nuc" else (amax if ord == 2 else amin)(s, dim=-1)
        return expand_dims(expand_dims(out, min(r, c)), max(r, c)) if keepdim else out
    raise RuntimeError(
        f"linalg.matrix_norm: ord={ord!r} is not supported; use 'fro', 'nuc', 2, -2, 1, -1, "
        "inf or -inf"
    )


def norm(A, ord=None, dim=None, keepdim=False):  # noqa: A002
    """torch.linalg.norm: without `ord` the 2-norm of the flattened tensor (or a vector norm
    over an int `dim`, the Frobenius norm over a 2-tuple `dim`); with `ord` a vector norm of a
    1-D input and a matrix norm of a 2-D input (or over a 2-tuple `dim`).

    >>> tg.linalg.norm(tg.tensor([3.0, 4.0]))
    tensor(5.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.norm expects a Tensor, got {type(A).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim)
        return vector_norm(A, 2, dim, keepdim)
    if dim is None:
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim)
        raise RuntimeError(
            f"linalg.norm: with ord={ord!r} the input must be 1-D or 2-D (got shape "
            f"{tuple(A.shape)}), or pass dim="
        )
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim)
    return vector_norm(A, ord, dim, keepdim)
