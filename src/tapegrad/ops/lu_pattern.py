"""LU with partial pivoting, unblocked, in NumPy: the matrix functions run it instead of
NumPy's LAPACK calls on matrices that hold an inf or a NaN, so that those spread to the
same entries as in PyTorch (the specification), whose linalg functions all go through one
LU (getrf) and triangular solves (getrs). Which entries of inv(A) come out NaN, inf or
finite depends on the pivots and the order of the eliminations; NumPy's inv, det and
solve use other LAPACK routines (gesv, an SVD-free det of a copy) and so other patterns.

For finite matrices NumPy's routines stay in use: same values to rounding, much faster.
Like PyTorch's, these loops record nothing; the rules call them on arrays only.

PyTorch factorises a (C-contiguous) A as it is for inv and solve, and its transpose for
det and slogdet (det(A^T) = det(A), and A^T is the Fortran-ordered copy LAPACK wants).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable

import numpy as np

_TINY = np.finfo(np.float64).tiny


def has_nonfinite(x) -> bool:
    """Whether x holds an inf or a NaN. Its sum first (one pass, no temporary: half the cost
    on small matrices): an inf or NaN anywhere makes it non-finite; so may an overflow, hence
    the exact test then."""
    if x.dtype.kind not in "fc":
        return False
    total = x.sum()
    if cmath.isfinite(total) if x.dtype.kind == "c" else math.isfinite(total):
        return False
    return not bool(np.isfinite(x).all())


def lu(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(LU, perm, sign) of one square matrix: rows `perm` of `a` = L @ U, L unit lower
    triangular in LU's strict lower part; `sign` the permutation's determinant."""
    a = np.array(a, dtype=a.dtype)
    n = a.shape[0]
    perm = np.arange(n)
    sign = 1.0
    with np.errstate(all="ignore"):
        for k in range(n):
            # the pivot: the first largest |a_ik| (a NaN wins only where it comes first, as
            # in idamax, whose `>` is false for NaN)
            p, best = k, abs(a[k, k])
            for i in range(k + 1, n):
                if abs(a[i, k]) > best:
                    p, best = i, abs(a[i, k])
            if p != k:
                a[[k, p]] = a[[p, k]]
                perm[[k, p]] = perm[[p, k]]
                sign = -sign
            pivot = a[k, k]
            if pivot != 0:  # getf2: a reciprocal, then a scaling, unless the pivot is tiny
                if abs(pivot) >= _TINY:
                    a[k + 1 :, k] *= 1 / pivot
                else:
                    a[k + 1 :, k] /= pivot
            a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])
    return a, perm, sign


def lu_solve(lu_: np.ndarray, perm: np.ndarray, b: np.ndarray, adjoint: bool = False):
    """x with A x = b (A^T x = b when `adjoint`) from A's `lu`, column by column as getrs's
    triangular solves (each step subtracts every product, zeros included: 0 * inf is NaN)."""
    n = lu_.shape[0]
    with np.errstate(all="ignore"):
        if not adjoint:  # P A = L U: x = U^-1 L^-1 P b
            x = np.array(b[perm], dtype=np.result_type(lu_, b))
            for j in range(n):
                x[j + 1 :] -= np.outer(lu_[j + 1 :, j], x[j])
            for j in reversed(range(n)):
                x[j] = x[j] / lu_[j, j]
                x[:j] -= np.outer(lu_[:j, j], x[j])
            return x
        # A^T = U^T L^T P: x = P^T L^-T U^-T b
        x = np.array(b, dtype=np.result_type(lu_, b))
        for j in range(n):
            x[j] = (x[j] - lu_[:j, j] @ x[:j]) / lu_[j, j]
        for j in reversed(range(n)):
            x[j] = x[j] - lu_[j + 1 :, j] @ x[j + 1 :]
        out = np.empty_like(x)
        out[perm] = x
        return out


def per_matrix(fn: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """fn applied to each matrix of a batch (the arrays' leading axes, broadcast)."""
    batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    arrays = tuple(np.broadcast_to(a, batch + a.shape[-2:]) for a in arrays)
    results = [fn(*(a[i] for a in arrays)) for i in np.ndindex(*batch)]
    first = np.asarray(results[0]) if results else None
    if first is None:
        return np.empty(batch, dtype=arrays[0].dtype)
    return np.stack([np.asarray(r) for r in results]).reshape(batch + first.shape)


def _zero_pivot(u: np.ndarray) -> bool:
    return bool((np.diagonal(u) == 0).any())


def inv(a: np.ndarray, singular: Callable[[], Exception]) -> np.ndarray:
    """PyTorch's inv: a solve against the identity with A's LU; a zero pivot is singular."""

    def one(m):
        f, perm, _ = lu(m)
        if _zero_pivot(f):
            raise singular()
        return lu_solve(f, perm, np.eye(m.shape[0], dtype=m.dtype))

    return per_matrix(one, a)


def solve(a: np.ndarray, b: np.ndarray, singular: Callable[[], Exception]) -> np.ndarray:
    def one(m, rhs):
        f, perm, _ = lu(m)
        if _zero_pivot(f):
            raise singular()
        return lu_solve(f, perm, rhs)

    return per_matrix(one, a, b)


def det(a: np.ndarray) -> np.ndarray:
    """sign(P) * prod(diag(U)) of the LU of A^T, as PyTorch's det."""

    def one(m):
        f, _, sign = lu(m.T)
        with np.errstate(all="ignore"):
            return np.asarray(sign * np.prod(np.diagonal(f)), dtype=m.dtype)

    return per_matrix(one, a)


def logabsdet(a: np.ndarray) -> np.ndarray:
    """sum(log|diag(U)|) of the LU of A^T, as PyTorch's slogdet."""

    def one(m):
        f, _, _ = lu(m.T)
        with np.errstate(all="ignore"):
            return np.asarray(np.sum(np.log(np.abs(np.diagonal(f)))), dtype=m.dtype)

    return per_matrix(one, a)


def sign_of_det(a: np.ndarray) -> np.ndarray:
    """slogdet's sign as PyTorch's: prod(sgn(diag(U))) * sign(P) of the LU of A^T, where
    sgn is (x > 0) - (x < 0), so 0 at a NaN (NumPy's sign would give NaN)."""

    def one(m):
        f, _, sign = lu(m.T)
        d = np.diagonal(f)
        return np.asarray(sign * np.prod((d > 0).astype(m.dtype) - (d < 0)), dtype=m.dtype)

    return per_matrix(one, a)


def transposed_solve_scaled_identity(a: np.ndarray, scale: np.ndarray, perturb: bool):
    """X with A^T X = scale * I, from the LU of A^T (PyTorch's det and slogdet rules: the
    cofactor matrix det(A) A^-T, and A^-T). `perturb`: a zero pivot becomes machine epsilon,
    as in det's rule (the cofactors of a singular matrix stay finite)."""
    eps = np.finfo(a.dtype).eps

    def one(m, s):
        f, perm, _ = lu(m.T)
        if perturb:
            d = np.diagonal(f).copy()
            f[np.diag_indices_from(f)] = np.where(d == 0, eps, d)
        rhs = np.zeros_like(m)  # scale on the diagonal (not times I: 0 * inf would be NaN)
        rhs[np.diag_indices_from(rhs)] = s[0, 0]
        return lu_solve(f, perm, rhs)

    return per_matrix(one, a, np.asarray(scale)[..., None, None])


def adjoint_solve(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """X with A^T X = g from the LU of A (PyTorch's solve rule)."""

    def one(m, rhs):
        f, perm, _ = lu(m)
        return lu_solve(f, perm, rhs, adjoint=True)

    return per_matrix(one, a, g)
