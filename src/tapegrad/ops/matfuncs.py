"""The matrix functions behind `tg.linalg`: inv, det, logabsdet (slogdet's second half) and
solve, with rules; a singular matrix raises an error that says so. Re-exported by linalg.py.
"""

from __future__ import annotations

import numpy as np

from . import lu_pattern
from .registry import defop


# ------------------------------------------------------------------ matrix functions
def _linalg_error(what, shape, e) -> RuntimeError:
    return RuntimeError(
        f"linalg.{what}: the matrix (shape {tuple(shape)}) is singular or not invertible ({e}); "
        "check for linearly dependent rows, or use a least-squares or pseudo-inverse method"
    )


def _numpy(xp):
    """Whether the arrays are NumPy's: the forward gets the module, a rule its namespace (and
    a recorded backward the tensor namespace, whose module is None: the SVD path stays)."""
    return xp is np or getattr(xp, "module", None) is np


def _check_square(what, shape):
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise RuntimeError(
            f"linalg.{what}: expected a square matrix or a batch of them (shape (..., n, n)), "
            f"got shape {tuple(shape)}"
        )


@defop(saves="out", array_twin=True)
def _inv(xp, x):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        _check_square("inv", x.shape)
        if _numpy(xp) and lu_pattern.has_nonfinite(x):  # PyTorch's NaN/inf pattern
            return lu_pattern.inv(x, lambda: _linalg_error("inv", x.shape, "a zero pivot"))
        try:
            return xp.linalg.inv(x)
        except xp.linalg.LinAlgError as e:
            raise _linalg_error("inv", x.shape, e) from None


@_inv.vjp
def _(xp, g, out):
    out_t = xp.swapaxes(out, -1, -2)
    return (-xp.matmul(out_t, xp.matmul(g, out_t)),)  # PyTorch's order (its inf/NaN pattern)


@defop(saves=("x", "out"), array_twin=True)
def _det(xp, x):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        _check_square("det", x.shape)
        if _numpy(xp) and lu_pattern.has_nonfinite(x):  # PyTorch's NaN/inf pattern
            return lu_pattern.det(x)
        return xp.linalg.det(x)


def _as_matrix_scale(xp, s):
    return xp.expand_dims(xp.expand_dims(s, -1), -1)


@_det.vjp
def _(xp, g, x, out):
    # the cofactor matrix, not det * inv^T: it is also the gradient at a singular matrix
    if _numpy(xp) and lu_pattern.has_nonfinite(x):  # PyTorch's: A^T X = g det(A) I
        if x.shape[-1] == 1:  # the derivative of a 1 x 1 det is 1, inf or NaN in A (PyTorch)
            return (_as_matrix_scale(xp, g) * xp.ones_like(x),)
        with np.errstate(all="ignore"):
            scale = g * out
        return (lu_pattern.transposed_solve_scaled_identity(x, scale, perturb=True),)
    return (_as_matrix_scale(xp, g) * xp.cofactor(x),)


def _cofactor_values(xp, x):
    """The cofactor matrix (the adjugate transposed) from an SVD, so it exists for singular
    matrices too: for x = U diag(s) Vh it is det(U) det(Vh) U diag(prod of the other s) Vh."""
    n = x.shape[-1]
    if n == 0 or x.size == 0:
        return xp.zeros_like(x)
    finite = xp.all(xp.isfinite(x), axis=(-2, -1))
    if not xp.all(finite):  # an inf or NaN: det(A) inv(A)^T as PyTorch computes them
        if _numpy(xp):
            try:
                inv = lu_pattern.inv(x, lambda: _linalg_error("det", x.shape, "a zero pivot"))
            except RuntimeError:  # a zero pivot too: no inverse to scale, NaN cofactors below
                pass
            else:
                with np.errstate(all="ignore"):
                    return _as_matrix_scale(xp, lu_pattern.det(x)) * xp.swapaxes(inv, -1, -2)
        out = _cofactor_values(xp, xp.where(finite[..., None, None], x, 0.0))
        return xp.where(finite[..., None, None], out, xp.nan)
    u, s, vh = xp.linalg.svd(x)
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), -1), -1), -1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)  # each is +-1
    return _as_matrix_scale(xp, sign) * xp.matmul(u * xp.expand_dims(before * after, -2), vh)


@defop(saves="x", name="cofactor", array_twin=True)  # det's rule calls xp.cofactor
def _cofactor(xp, x):
    _check_square("det", x.shape)
    return _cofactor_values(xp, x)


@_cofactor.vjp
def _(xp, h, x):
    # cofactor(A) = det(A) A^-T where A is invertible, so its vjp is
    # det(A) (<H, A^-T> A^-T - A^-T H^T A^-T) (second order at a singular matrix: not defined)
    inv_t = xp.swapaxes(xp.inv(x), -1, -2)
    inner = xp.sum(h * inv_t, axis=(-2, -1), keepdims=True)
    cross = xp.matmul(xp.matmul(inv_t, xp.swapaxes(h, -1, -2)), inv_t)
    return (_as_matrix_scale(xp, xp.det(x)) * (inner * inv_t - cross),)


@defop(saves="x", array_twin=True)
def _logabsdet(xp, x):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        _check_square("slogdet", x.shape)
        if _numpy(xp) and lu_pattern.has_nonfinite(x):  # PyTorch's NaN/inf pattern
            return lu_pattern.logabsdet(x)
        return xp.linalg.slogdet(x)[1]


@_logabsdet.vjp
def _(xp, g, x):
    # inv(x)^T, written as cofactor / det so that a singular matrix gives +-inf (PyTorch's)
    # instead of a failed inversion
    if _numpy(xp) and lu_pattern.has_nonfinite(x):  # PyTorch's: A^T X = g I
        return (lu_pattern.transposed_solve_scaled_identity(x, g, perturb=False),)
    return (_as_matrix_scale(xp, g / xp.det(x)) * xp.cofactor(x),)


@defop(saves=("a", "out"), array_twin=True)
def _solve(xp, a, b):
    with np.errstate(all="ignore"):  # NaN/Inf stay in the values silently, as in PyTorch
        _check_square("solve", a.shape)
        if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
            raise RuntimeError(
                f"linalg.solve: A has shape {tuple(a.shape)}, so B must have shape (..., "
                f"{a.shape[-1]}, k) or ({a.shape[-1]},), got {tuple(b.shape)}"
            )
        if _numpy(xp) and lu_pattern.has_nonfinite(a):  # PyTorch's NaN/inf pattern
            return lu_pattern.solve(a, b, lambda: _linalg_error("solve", a.shape, "a zero pivot"))
        try:
            return xp.linalg.solve(a, b)
        except xp.linalg.LinAlgError as e:
            raise _linalg_error("solve", a.shape, e) from None


@_solve.vjp
def _(xp, g, a, out, needs):
    if _numpy(xp) and lu_pattern.has_nonfinite(a):  # PyTorch's: A's LU, solved for A^T
        with np.errstate(all="ignore"):
            gb = lu_pattern.adjoint_solve(a, g)
            ga = -xp.matmul(gb, xp.swapaxes(out, -1, -2)) if needs[0] else None
        return ga, (gb if needs[1] else None)
    gb = xp.solve(xp.swapaxes(a, -1, -2), g)
    ga = -xp.matmul(gb, xp.swapaxes(out, -1, -2)) if needs[0] else None
    return ga, (gb if needs[1] else None)


def _well_conditioned(rng, shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


_inv.sample(
    lambda rng: [
        ((_well_conditioned(rng, (3, 3)),), {}),
        ((_well_conditioned(rng, (2, 2, 2)),), {}),
    ]
)
_det.sample(
    lambda rng: [
        ((_well_conditioned(rng, (3, 3)),), {}),
        ((_well_conditioned(rng, (2, 2, 2)),), {}),
    ]
)
_cofactor.sample(
    lambda rng: [
        ((_well_conditioned(rng, (3, 3)),), {}),
        ((_well_conditioned(rng, (2, 2, 2)),), {}),
    ]
)
_cofactor.reference(lambda torch, x: torch.linalg.det(x)[..., None, None] * torch.linalg.inv(x).mT)
_logabsdet.sample(
    lambda rng: [
        ((_well_conditioned(rng, (3, 3)),), {}),
        ((-_well_conditioned(rng, (2, 3, 3)),), {}),
    ]
)
_solve.sample(
    lambda rng: [
        ((_well_conditioned(rng, (3, 3)), rng.standard_normal((3, 2))), {}),
        ((_well_conditioned(rng, (2, 3, 3)), rng.standard_normal((3, 1))), {}),  # broadcast B
    ]
)
_inv.reference(lambda torch, x: torch.linalg.inv(x))
_det.reference(lambda torch, x: torch.linalg.det(x))
_logabsdet.reference(lambda torch, x: torch.linalg.slogdet(x)[1])
_solve.reference(
    lambda torch, a, b: torch.linalg.solve(
        a, torch.broadcast_to(b, a.shape[:-2] + b.shape[-2:]) if b.ndim < a.ndim else b
    )
)
