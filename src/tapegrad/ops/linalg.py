"""Linear algebra ops: matmul (and `@`), mm, bmm, mv, dot, inner, outer. einsum and tensordot
(einsum.py) and the matrix functions behind `tg.linalg`, inv, det, slogdet, solve
(matfuncs.py), are importable from here too (norms live in statistics.py).

matmul's rule is one GEMM per wanted input gradient (and none for an input that wants no
gradient): the training speed of every dense layer rests on it.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import parallel
from .einsum import _einsum, einsum, tensordot  # noqa: F401  (public names of the family)
from .matfuncs import _det, _inv, _logabsdet, _solve  # noqa: F401  (for tg.linalg)
from .promotion import check_same_float
from .quiet import quiet
from .registry import defop, dispatch
from .views import reshape
from .xp import plus_tangents


def _mismatch(a_shape, b_shape) -> ValueError:
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if not a_shape or not b_shape:
        return ValueError(
            f"matmul: both operands need at least 1 dimension, got shapes {a_shape} and "
            f"{b_shape}; use * to multiply by a scalar"
        )
    k_b = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if a_shape[-1] != k_b:
        return ValueError(
            f"matmul: shapes {a_shape} and {b_shape} don't align (dimension {a_shape[-1]} != "
            f"{k_b}); transpose one operand?"
        )
    return ValueError(
        f"matmul: the batch dimensions of shapes {a_shape} and {b_shape} don't broadcast "
        f"({a_shape[:-2]} vs {b_shape[:-2]})"
    )


@defop(saves=("x1", "x2"), inputs=2)
def _matmul(xp, x1, x2):
    check_same_float("matmul", x1, x2)
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        try:
            if parallel.intra_op_threads() > 1:  # (then a small GEMM keeps one BLAS thread)
                with parallel.small_gemm(xp, x1, x2):
                    return xp.matmul(x1, x2)
            return xp.matmul(x1, x2)
        except ValueError:
            raise _mismatch(np.shape(x1), np.shape(x2)) from None


@_matmul.vjp
def _(xp, g, a, b, needs):
    ga = gb = None
    if a.ndim >= 2 and b.ndim >= 2:
        if needs[0]:
            bt = xp.swapaxes(b, -1, -2)
            with parallel.small_gemm(xp, g, bt):  # (nothing unless intra-op splits are on)
                ga = xp.matmul(g, bt)
        if needs[1]:
            with parallel.small_gemm(xp, a, g):
                gb = xp.matmul(xp.swapaxes(a, -1, -2), g)
    elif a.ndim == 1 and b.ndim == 1:  # inner product: g is 0-d
        ga = g * b if needs[0] else None
        gb = g * a if needs[1] else None
    elif a.ndim == 1:  # (k,) @ (..., k, n) -> (..., n)
        if needs[0]:
            ga = xp.matmul(xp.expand_dims(g, -2), xp.swapaxes(b, -1, -2))  # (..., 1, k)
        if needs[1]:
            gb = xp.expand_dims(a, -1) * xp.expand_dims(g, -2)
    else:  # (..., m, k) @ (k,) -> (..., m)
        if needs[0]:
            ga = xp.expand_dims(g, -1) * b
        if needs[1]:
            gb = xp.matmul(xp.expand_dims(g, -2), a)  # (..., 1, k)
    return ga, gb


@_matmul.jvp
def _(xp, tangents, a, b, *, out):
    ta, tb = tangents
    return plus_tangents(
        None if ta is None else xp.matmul(ta, b), None if tb is None else xp.matmul(a, tb)
    )


@_matmul.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((3, 4)), r((4, 5))), {}),
        ((r((2, 3, 4)), r((4, 2))), {}),  # batch broadcasting
        ((r((2, 1, 3, 4)), r((3, 4, 2))), {}),
        ((r((4,)), r((4, 3))), {}),  # vector cases
        ((r((3, 4)), r((4,))), {}),
        ((r((4,)), r((4,))), {}),
        ((r((4,)), r((2, 4, 3))), {}),
        ((r((2, 3, 4)), r((4,))), {}),
    ]


_matmul.reference(lambda torch, a, b: torch.matmul(a, b))


# ================================================================== public (PyTorch) API
def matmul(input, other):
    """Matrix product with NumPy/PyTorch semantics: 1-D operands are vectors, leading
    dimensions broadcast as batches.

    >>> (tg.ones(2, 3) @ tg.ones(3, 4)).shape
    (2, 4)
    """
    return dispatch(_matmul, input, other)


def mm(input, mat2):
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(
            f"mm: expected two 2-D matrices, got shapes {tuple(input.shape)} and "
            f"{tuple(mat2.shape)}; use matmul for vectors or batches"
        )
    return dispatch(_matmul, input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-D tensors (b, n, m) @ (b, m, p)."""
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError(
            f"bmm: expected 3-D tensors with the same batch size, got shapes "
            f"{tuple(input.shape)} and {tuple(mat2.shape)}"
        )
    return dispatch(_matmul, input, mat2)


def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"mv: expected a matrix and a vector, got shapes "
            f"{tuple(input.shape)} and {tuple(vec.shape)}"
        )
    return dispatch(_matmul, input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors (PyTorch's dot; use matmul or tensordot otherwise)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"dot: expected two 1-D tensors, got shapes {tuple(input.shape)} and "
            f"{tuple(other.shape)}"
        )
    if input.shape != other.shape:
        raise RuntimeError(
            f"dot: inconsistent tensor size, shapes {tuple(input.shape)} and {tuple(other.shape)}"
        )
    return dispatch(_matmul, input, other)


def inner(input, other):
    """Sum over the last dimension of both (NumPy's inner)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def outer(input, vec2):
    """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j]."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"outer: expected two 1-D tensors, got shapes {tuple(input.shape)} "
            f"and {tuple(vec2.shape)}"
        )
    return reshape(input, (-1, 1)) * reshape(vec2, (1, -1))


ger = outer


def _as_operand(other, like):
    """A non-tensor operand of `@` (array, list) as a tensor of the tensor's dtype, so a
    float32 graph is not promoted by a float64 array."""
    from ..creation import as_tensor

    return as_tensor(other, dtype=like.dtype)


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        other = _as_operand(other, self)
    return dispatch(_matmul, self, other)


def _rmatmul(self, other):
    return dispatch(_matmul, _as_operand(other, self), self)


__all__ = ["matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "einsum", "tensordot"]


# einsum, tensordot, inv, det, logabsdet, solve: registered after matmul, re-exported from here
