"""A differentiable Cholesky factor and triangular solves (tg.linalg has neither yet)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import Function
from ..tensor import Tensor, _wrap


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


class _Cholesky(Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor) -> Tensor:
        try:
            low = np.linalg.cholesky(np.asarray(a.detach().numpy()))
        except np.linalg.LinAlgError:
            raise ValueError(
                "cholesky: the matrix is not positive-definite (the factorization failed); "
                "pass a symmetric positive-definite covariance"
            ) from None
        out = _wrap(np.ascontiguousarray(low))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        # A = L L^T: with P = Phi(L^T G) (lower triangle, halved diagonal),
        # dA = L^-T P L^-1, symmetrized
        (low,) = ctx.saved_tensors
        p = (_mT(low) @ grad).tril()
        n = p.shape[-1]
        import tapegrad as tg

        p = p - 0.5 * p * tg.eye(n, dtype=p.dtype)
        inv = tg.linalg.inv(low)
        s = _mT(inv) @ p @ inv
        return 0.5 * (s + _mT(s))


def cholesky(a: Tensor) -> Tensor:
    """The lower Cholesky factor L of a batch of symmetric positive-definite matrices."""
    return _Cholesky.apply(a)


def solve_lower(low: Tensor, b: Tensor) -> Tensor:
    """X with low @ X = b (b broadcast over low's batch)."""
    import tapegrad as tg

    shape = np.broadcast_shapes(tuple(low.shape[:-2]), tuple(b.shape[:-2]))
    return tg.linalg.solve(low.expand(*shape, *low.shape[-2:]), b.expand(*shape, *b.shape[-2:]))
