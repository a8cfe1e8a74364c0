"""The singular value decomposition behind tg.linalg.svd / svdvals / matrix_norm(2, -2, 'nuc')
and PyTorch's older tg.svd (U, S, V).

The op table holds single-output ops, so the decomposition is one op, `svd_packed`, whose
output is U, S and Vh flattened side by side along the last dimension; the public functions
cut it apart with views, and the engine hands the rule the packed gradient (zeros where a
part was not used). The rule is the real-case SVD derivative (Townsend, "Differentiating
the singular value decomposition", 2016): with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal,

    gA = U [F o (U^T gU - gU^T U) S + diag(gS) + S F o (V^T gV - gV^T V)] V^T
         + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)

defined for distinct (and, for the last two terms, non-zero) singular values; a loss that
reads only S (svdvals, the norms) needs neither, as in PyTorch. With full_matrices=True the
columns of U (rows of Vh) past min(m, n) are not determined by A and get no gradient.

>>> U, S, Vh = tg.linalg.svd(tg.tensor([[3.0, 0.0], [0.0, 2.0]]))
>>> S
tensor([3., 2.])
"""

from __future__ import annotations

import types
from collections import namedtuple

import numpy as np

from ..tensor import Tensor
from .registry import defop, dispatch
from .views import reshape

# named as PyTorch's torch.return_types are (the repr reads `linalg_svd(U=..., S=..., Vh=...)`)
SvdResult = namedtuple("linalg_svd", ["U", "S", "Vh"])  # type: ignore[name-match]
LegacySvdResult = namedtuple("svd", ["U", "S", "V"])  # type: ignore[name-match]


def _sizes(m: int, n: int, full: bool) -> tuple[int, int, int]:
    """(columns of U, number of singular values, rows of Vh)."""
    k = min(m, n)
    return (m, k, n) if full else (k, k, k)


def _unpack(xp, p, m: int, n: int, full: bool):
    """U, S, Vh out of a packed (..., m*ku + k + kv*n) array or tensor."""
    ku, k, kv = _sizes(m, n, full)
    batch = tuple(p.shape[:-1])
    u = xp.reshape(p[..., : m * ku], batch + (m, ku))
    s = p[..., m * ku : m * ku + k]
    vh = xp.reshape(p[..., m * ku + k :], batch + (kv, n))
    return u, s, vh


def _is_zero(block) -> bool:
    """Whether a gradient block is all zeros, so the rule may take its S-only shortcut. Never
    for a gradient that is itself differentiated (a recorded backward, or forward mode
    transposing this rule with a zero cotangent): its zeros are a value of the moment, and
    the rule must stay the full linear map of it."""
    if getattr(block, "requires_grad", False):
        return False
    data = getattr(block, "_data", block)  # a Tensor in a recorded backward
    return not bool(data.any())


def _svd_of_finite(xp, x, full_matrices):
    with np.errstate(all="ignore"):  # overflow in the factors stays in the values, as in PyTorch
        return xp.linalg.svd(x, full_matrices=full_matrices)


@defop(saves=("x", "out"), array_twin=True)
def _svd_packed(xp, x, *, full_matrices=False):
    if x.ndim < 2:
        raise RuntimeError(
            f"linalg.svd: the input must have at least 2 dimensions (..., m, n), got shape "
            f"{tuple(x.shape)}; reshape a vector to (1, n) or (n, 1)"
        )
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:
        raise TypeError(
            f"linalg.svd: expected a float32 or float64 tensor, got {x.dtype}; "
            "convert it with .double() or .float()"
        )
    m, n = x.shape[-2:]
    finite = xp.isfinite(x).all(axis=(-2, -1))
    if not finite.all():
        if xp.isnan(x).any():  # PyTorch's refusal (LAPACK's gesdd does not converge on NaN)
            raise RuntimeError(
                "linalg.svd: The algorithm failed to converge because the input matrix "
                "contained non-finite values (a NaN); check the input with tg.isfinite"
            )
        # an inf: gesdd never returns (NumPy 2.4's OpenBLAS build spins forever); PyTorch's
        # S is NaN then and its U, Vh carry no information, so such matrices go in as zeros
        # and all three factors come out NaN
        u, s, vh = _svd_of_finite(xp, xp.where(finite[..., None, None], x, 0.0), full_matrices)
        u = xp.where(finite[..., None, None], u, xp.nan)
        s = xp.where(finite[..., None], s, xp.nan)
        vh = xp.where(finite[..., None, None], vh, xp.nan)
    else:
        u, s, vh = _svd_of_finite(xp, x, full_matrices)
    batch = x.shape[:-2]
    parts = [u.reshape(batch + (-1,)), s, vh.reshape(batch + (-1,))]
    return xp.concatenate([a.astype(x.dtype, copy=False) for a in parts], axis=-1)


@_svd_packed.vjp
def _(xp, g, x, out, *, full_matrices=False):
    m, n = x.shape[-2:]
    k = min(m, n)
    u, s, vh = _unpack(xp, out, m, n, full_matrices)
    gu, gs, gvh = _unpack(xp, g, m, n, full_matrices)
    if full_matrices:  # the columns past k are not functions of A: no gradient through them
        u, gu = u[..., :k], gu[..., :k]
        vh, gvh = vh[..., :k, :], gvh[..., :k, :]
    eye = xp.eye_like(s, k)
    core = xp.expand_dims(gs, -1) * eye  # diag(gS)
    if _is_zero(gu) and _is_zero(gvh):  # a loss of S alone: U diag(gS) Vh
        return (xp.matmul(u, xp.matmul(core, vh)),)
    with np.errstate(all="ignore"):  # repeated or zero singular values: inf/NaN, as PyTorch
        s2 = s * s
        f = (1.0 - eye) / (xp.expand_dims(s2, -2) - xp.expand_dims(s2, -1) + eye)
        utgu = xp.matmul(xp.swapaxes(u, -1, -2), gu)
        vtgv = xp.matmul(vh, xp.swapaxes(gvh, -1, -2))
        core = (
            core
            + f * (utgu - xp.swapaxes(utgu, -1, -2)) * xp.expand_dims(s, -2)
            + xp.expand_dims(s, -1) * (f * (vtgv - xp.swapaxes(vtgv, -1, -2)))
        )
        ga = xp.matmul(u, xp.matmul(core, vh))
        if m > k:  # (I - U U^T) gU S^-1 Vh
            ga = ga + xp.matmul(gu - xp.matmul(u, utgu), vh / xp.expand_dims(s, -1))
        if n > k:  # U S^-1 (gVh - gVh V Vh)
            gvh_v = xp.matmul(gvh, xp.swapaxes(vh, -1, -2))
            ga = ga + xp.matmul(u / xp.expand_dims(s, -2), gvh - xp.matmul(gvh_v, vh))
    return (ga,)


def _separated(rng, shape):
    """A matrix whose singular values are well apart (so U and V have stable gradients)."""
    q1, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (shape[-2], shape[-2])))
    q2, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (shape[-1], shape[-1])))
    k = min(shape[-2:])
    d = np.zeros(shape)
    idx = np.arange(k)
    d[..., idx, idx] = np.linspace(3.0, 1.0, k)
    return q1 @ d @ q2


_svd_packed.sample(
    lambda rng: [
        ((_separated(rng, (3, 3)),), {}),
        ((_separated(rng, (4, 3)),), {}),
        ((_separated(rng, (2, 4)),), {}),
        ((_separated(rng, (2, 3, 2)),), {}),
        ((_separated(rng, (3, 3)),), {"full_matrices": True}),
    ]
)


@_svd_packed.reference
def _(torch, x, *, full_matrices=False):
    # signs of singular vectors are arbitrary (LAPACK builds differ): PyTorch's U and Vh are
    # turned to the signs NumPy chose, a constant per pair, before packing
    u, s, vh = torch.linalg.svd(x, full_matrices=full_matrices)
    nu, _, nvh = np.linalg.svd(x.detach().numpy(), full_matrices=full_matrices)
    k = s.shape[-1]
    sign = np.sign(np.sum(nu[..., :k] * u[..., :k].detach().numpy(), axis=-2))
    d = torch.from_numpy(sign)
    u = torch.cat([u[..., :k] * d.unsqueeze(-2), u[..., k:]], dim=-1)
    vh = torch.cat([vh[..., :k, :] * d.unsqueeze(-1), vh[..., k:, :]], dim=-2)
    batch = x.shape[:-2]
    return torch.cat([u.reshape(batch + (-1,)), s, vh.reshape(batch + (-1,))], dim=-1)


def _check(what: str, A) -> None:
    if not isinstance(A, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(
            f"{what}: the input must have at least 2 dimensions (..., m, n), got shape "
            f"{tuple(A.shape)}; reshape a vector to (1, n) or (n, 1)"
        )


def linalg_svd(A, full_matrices: bool = True) -> SvdResult:
    """torch.linalg.svd: A = U diag(S) Vh, S descending (see tg.linalg.svd)."""
    _check("linalg.svd", A)
    packed = dispatch(_svd_packed, A, full_matrices=bool(full_matrices))
    return SvdResult(*_unpack_tensor(packed, A.shape[-2], A.shape[-1], bool(full_matrices)))


def _unpack_tensor(p, m, n, full):
    return _unpack(_TENSORS, p, m, n, full)


_TENSORS = types.SimpleNamespace(reshape=reshape)  # what _unpack calls, on tensors


def svd(input, some: bool = True, compute_uv: bool = True) -> LegacySvdResult:
    """PyTorch's older torch.svd: (U, S, V) with input = U diag(S) V^T, V not transposed.

    Args:
        some: True (default): the reduced decomposition, U (m, k) and V (n, k) with
            k = min(m, n); False: the full one, U (m, m) and V (n, n).
        compute_uv: False: only S is computed (and differentiable); U and V are then
            zero-filled (m, m) and (n, n) matrices, as PyTorch returns them.

    New code should use tg.linalg.svd, which returns Vh.

    >>> U, S, V = tg.svd(tg.tensor([[0.0, 2.0], [1.0, 0.0]]))
    >>> S
    tensor([2., 1.])
    >>> bool(((U * S) @ V.T - tg.tensor([[0.0, 2.0], [1.0, 0.0]])).abs().max() < 1e-6)
    True
    """
    _check("svd", input)
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    if not compute_uv:
        from ..creation import zeros

        s = linalg_svd(input, full_matrices=False).S
        return LegacySvdResult(
            zeros(batch + (m, m), dtype=input.dtype), s, zeros(batch + (n, n), dtype=input.dtype)
        )
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return LegacySvdResult(u, s, vh.mT)


__all__ = ["svd"]
