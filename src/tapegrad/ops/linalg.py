"""Linear algebra ops: matmul (and `@`), dot, outer, einsum, tensordot, and the matrix
functions behind `tg.linalg`: inv, det, slogdet, solve (norms live in reduce.py).

matmul's rule is one GEMM per wanted input gradient (and none for an input that wants no
gradient): the training speed of every dense layer rests on it.
"""
from __future__ import annotations

import threading

import numpy as np

from ..tensor import Tensor
from .registry import Op, defop, nondifferentiable
from .shape import NumpyStyleOp, _call, numpy_op, reshape
from .xp import array_helper


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


@numpy_op(saves=("x1", "x2"), inputs=2)
def _matmul(xp, x1, x2):
    try:
        return xp.matmul(x1, x2)
    except ValueError:
        raise _mismatch(np.shape(x1), np.shape(x2)) from None


@_matmul.vjp
def _(xp, g, a, b, needs):
    ga = gb = None
    if a.ndim >= 2 and b.ndim >= 2:
        if needs[0]:
            ga = xp.matmul(g, xp.swapaxes(b, -1, -2))
        if needs[1]:
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


# ------------------------------------------------------------------ einsum
def _parse_einsum(subscripts, ndims):
    """Per-operand lists of labels ('...' kept as one label) and the output's."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, rhs = subscripts.split("->")
    else:
        lhs, rhs = subscripts, None
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} name {len(ins)} operands but {len(ndims)} "
            "were given"
        )

    def labels(s):
        out = []
        i = 0
        while i < len(s):
            if s.startswith("...", i):
                out.append("...")
                i += 3
            else:
                out.append(s[i])
                i += 1
        return out

    in_labels = [labels(s) for s in ins]
    if rhs is None:  # implicit mode: labels that appear once, sorted
        counts = {}
        for lab in in_labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out = (["..."] if "..." in counts else []) + sorted(
            c for c, n in counts.items() if n == 1 and c != "...")
    else:
        out = labels(rhs)
    return in_labels, out


class _EinsumOp(NumpyStyleOp):
    """Variadic, saves every operand, and is also callable as NumPy's
    einsum(subscripts, *operands)."""

    _lock = threading.Lock()

    def __call__(self, *args, **params):
        if args and isinstance(args[0], str):
            params["subscripts"] = args[0]
            args = args[1:]
        elif args and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        with self._lock:  # what to save depends on the number of operands
            self.save_idx = tuple(range(len(args)))
            return Op.__call__(self, *args, **params)


@numpy_op(params=("subscripts",), inputs=None)
def _einsum(xp, *operands, subscripts):
    if "..." in subscripts and "->" in subscripts and "..." not in subscripts.split("->")[1]:
        # PyTorch sums an ellipsis the output leaves out; NumPy refuses: spell it out
        ins, out = _explicit_labels(subscripts, operands, None)
        subscripts = ",".join("".join(lab) for lab in ins) + "->" + "".join(out)
    return xp.einsum(subscripts, *operands, optimize=len(operands) > 2)


_einsum.__class__ = _EinsumOp


@array_helper
def eye_like(xp, g, n):
    """An n-by-n identity of g's dtype (a constant)."""
    return xp.eye(n, dtype=g.dtype)


@nondifferentiable(name="eye_like")
def _eye_like(xp, g, n):
    return xp.eye(n, dtype=g.dtype)


def _explicit_labels(subscripts, operands, g):
    """Per-operand and output label lists with '...' spelled out as fresh capital letters
    (NumPy can't sum an ellipsis away, and a rule may need to)."""
    ins, out = _parse_einsum(subscripts, [getattr(o, "ndim", 0) for o in operands])
    nds = [o.ndim - (len(lab) - 1) for o, lab in zip(operands, ins, strict=True) if "..." in lab]
    if "..." in out:  # (g is None only when the output has no ellipsis)
        nds.append(g.ndim - (len(out) - 1))
    if not nds:
        return ins, out
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts][:max(nds)]

    def spell(lab, ndim):
        if "..." not in lab:
            return lab
        k = ndim - (len(lab) - 1)
        i = lab.index("...")
        return lab[:i] + fresh[len(fresh) - k:] + lab[i + 1:]

    return ([spell(lab, o.ndim) for o, lab in zip(operands, ins, strict=True)],
            spell(out, g.ndim) if g is not None else out)


def _einsum_rule(xp, g, *operands, subscripts, needs):
    ins, out = _explicit_labels(subscripts, operands, g)
    out_s = "".join(out)
    grads = []
    for i, lab in enumerate(ins):
        if not needs[i]:
            grads.append(None)
            continue
        others = [o for j, o in enumerate(operands) if j != i]
        other_labels = {c for j, lb in enumerate(ins) if j != i for c in lb} | set(out)
        target = []
        for c in lab:
            if c in other_labels and c not in target:
                target.append(c)
        spec = ",".join([out_s] + ["".join(lb) for j, lb in enumerate(ins) if j != i])
        gi = xp.einsum(spec + "->" + "".join(target), g, *others)
        sizes = dict(zip(lab, operands[i].shape, strict=True))
        uniq = list(dict.fromkeys(lab))
        if len(target) != len(uniq):  # labels only this operand has: broadcast back over them
            for c in uniq:
                if c not in target:
                    gi = xp.expand_dims(gi, -1)
                    target.append(c)
            gi = xp.broadcast_to(gi, tuple(sizes[c] for c in target))
        if len(uniq) != len(lab):  # repeated labels (a diagonal): back onto the diagonal
            full = []
            extra = []
            fresh = iter(c for c in "zyxwvutsrqponmlkjihgfedcba" if c not in subscripts)
            for c in lab:
                if c in full:
                    f = next(fresh)
                    extra.append((c, f))
                    full.append(f)
                else:
                    full.append(c)
            spec = "".join(target) + "".join("," + c + f for c, f in extra)
            eyes = [xp.eye_like(gi, sizes[c]) for c, _ in extra]
            gi = xp.einsum(spec + "->" + "".join(full), gi, *eyes)
        elif target != lab:
            gi = xp.einsum("".join(target) + "->" + "".join(lab), gi)
        grads.append(gi)
    return tuple(grads)


_einsum.vjp(_einsum_rule)


@_einsum.sample
def _(rng):
    r = rng.standard_normal
    return [
        ((r((2, 3)), r((3, 4))), {"subscripts": "ij,jk->ik"}),
        ((r((2, 3, 4)), r((2, 4, 5))), {"subscripts": "bij,bjk->bik"}),
        ((r((3, 3)),), {"subscripts": "ii->i"}),
        ((r((3, 4)),), {"subscripts": "ij->"}),
        ((r((3,)), r((4,))), {"subscripts": "i,j->ij"}),
        ((r((2, 3, 4)), r((4,))), {"subscripts": "...j,j->..."}),
        ((r((2, 3, 4)), r((3, 4))), {"subscripts": "...ij,ij->i"}),
        ((r((3, 2, 2)),), {"subscripts": "bii->b"}),
        ((r((3, 4)), r((4, 2)), r((2,))), {"subscripts": "ij,jk,k->i"}),
        ((r((3, 4)),), {"subscripts": "ij"}),  # implicit: the transpose-free identity
    ]


_einsum.reference(lambda torch, *ops, subscripts: torch.einsum(subscripts, *ops))


# ------------------------------------------------------------------ matrix functions
def _linalg_error(what, shape, e) -> RuntimeError:
    return RuntimeError(
        f"linalg.{what}: the matrix (shape {tuple(shape)}) is singular or not invertible ({e}); "
        "check for linearly dependent rows, or use a least-squares or pseudo-inverse method"
    )


def _check_square(what, shape):
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise RuntimeError(
            f"linalg.{what}: expected a square matrix or a batch of them (shape (..., n, n)), "
            f"got shape {tuple(shape)}"
        )


@array_helper
def inv(xp, x):
    """Array twin of the inv op (rules call xp.inv)."""
    return xp.linalg.inv(x)


@defop(saves="out")
def _inv(xp, x):
    _check_square("inv", x.shape)
    try:
        return xp.linalg.inv(x)
    except xp.linalg.LinAlgError as e:
        raise _linalg_error("inv", x.shape, e) from None


@_inv.vjp
def _(xp, g, out):
    out_t = xp.swapaxes(out, -1, -2)
    return (-xp.matmul(xp.matmul(out_t, g), out_t),)


@array_helper
def det(xp, x):
    """Array twin of the det op."""
    return xp.linalg.det(x)


@defop(saves=("x", "out"))
def _det(xp, x):
    _check_square("det", x.shape)
    return xp.linalg.det(x)


def _as_matrix_scale(xp, s):
    return xp.expand_dims(xp.expand_dims(s, -1), -1)


@_det.vjp
def _(xp, g, x, out):
    return (_as_matrix_scale(xp, g * out) * xp.swapaxes(xp.inv(x), -1, -2),)


@array_helper
def logabsdet(xp, x):
    """Array twin of the logabsdet op."""
    return xp.linalg.slogdet(x)[1]


@defop(saves="x")
def _logabsdet(xp, x):
    _check_square("slogdet", x.shape)
    return xp.linalg.slogdet(x)[1]


@_logabsdet.vjp
def _(xp, g, x):
    return (_as_matrix_scale(xp, g) * xp.swapaxes(xp.inv(x), -1, -2),)


@array_helper
def solve(xp, a, b):
    """Array twin of the solve op."""
    return xp.linalg.solve(a, b)


@defop(saves=("a", "out"))
def _solve(xp, a, b):
    _check_square("solve", a.shape)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise RuntimeError(
            f"linalg.solve: A has shape {tuple(a.shape)}, so B must have shape (..., "
            f"{a.shape[-1]}, k) or ({a.shape[-1]},), got {tuple(b.shape)}"
        )
    try:
        return xp.linalg.solve(a, b)
    except xp.linalg.LinAlgError as e:
        raise _linalg_error("solve", a.shape, e) from None


@_solve.vjp
def _(xp, g, a, out, needs):
    gb = xp.solve(xp.swapaxes(a, -1, -2), g)
    ga = -xp.matmul(gb, xp.swapaxes(out, -1, -2)) if needs[0] else None
    return ga, (gb if needs[1] else None)


def _well_conditioned(rng, shape):
    return rng.standard_normal(shape) + 3 * np.eye(shape[-1])


_inv.sample(lambda rng: [((_well_conditioned(rng, (3, 3)),), {}),
                         ((_well_conditioned(rng, (2, 2, 2)),), {})])
_det.sample(lambda rng: [((_well_conditioned(rng, (3, 3)),), {}),
                         ((_well_conditioned(rng, (2, 2, 2)),), {})])
_logabsdet.sample(lambda rng: [((_well_conditioned(rng, (3, 3)),), {}),
                               ((-_well_conditioned(rng, (2, 3, 3)),), {})])
_solve.sample(lambda rng: [
    ((_well_conditioned(rng, (3, 3)), rng.standard_normal((3, 2))), {}),
    ((_well_conditioned(rng, (2, 3, 3)), rng.standard_normal((3, 1))), {}),  # broadcast B
])
_inv.reference(lambda torch, x: torch.linalg.inv(x))
_det.reference(lambda torch, x: torch.linalg.det(x))
_logabsdet.reference(lambda torch, x: torch.linalg.slogdet(x)[1])
_solve.reference(lambda torch, a, b: torch.linalg.solve(a, torch.broadcast_to(
    b, a.shape[:-2] + b.shape[-2:]) if b.ndim < a.ndim else b))


# ================================================================== public (PyTorch) API
def matmul(input, other):
    """Matrix product with NumPy/PyTorch semantics: 1-D operands are vectors, leading
    dimensions broadcast as batches.

    >>> (tg.ones(2, 3) @ tg.ones(3, 4)).shape
    (2, 4)
    """
    return _call(_matmul, input, other)


def mm(input, mat2):
    """Product of two 2-D matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected two 2-D matrices, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}; use matmul for vectors or batches")
    return _call(_matmul, input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-D tensors (b, n, m) @ (b, m, p)."""
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: expected 3-D tensors with the same batch size, got shapes "
                           f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    return _call(_matmul, input, mat2)


def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: expected a matrix and a vector, got shapes "
                           f"{tuple(input.shape)} and {tuple(vec.shape)}")
    return _call(_matmul, input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors (PyTorch's dot; use matmul or tensordot otherwise)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"dot: expected two 1-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(other.shape)}")
    if input.shape != other.shape:
        raise RuntimeError(f"dot: inconsistent tensor size, shapes {tuple(input.shape)} and "
                           f"{tuple(other.shape)}")
    return _call(_matmul, input, other)


def inner(input, other):
    """Sum over the last dimension of both (NumPy's inner)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def outer(input, vec2):
    """Outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j]."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected two 1-D tensors, got shapes {tuple(input.shape)} "
                           f"and {tuple(vec2.shape)}")
    return reshape(input, (-1, 1)) * reshape(vec2, (1, -1))


ger = outer


def einsum(equation, *operands):
    """Einstein summation: `einsum("bij,bjk->bik", a, b)`; operands may also come as a list.
    Repeated labels (diagonals), '...' and implicit output are supported."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    try:
        return _einsum(*operands, subscripts=equation)
    except ValueError as e:
        shapes = ", ".join(str(tuple(o.shape)) for o in operands)
        raise ValueError(f"einsum {equation!r} with operand shapes {shapes}: {e}") from None


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def tensordot(a, b, dims=2):
    """Sum products over the last `dims` axes of a and the first `dims` of b, or over the
    axes listed as `dims=([a axes], [b axes])`."""
    if isinstance(dims, int):
        a_axes = list(range(a.ndim - dims, a.ndim))
        b_axes = list(range(dims))
    else:
        a_axes, b_axes = ([d] if isinstance(d, int) else list(d) for d in dims)
    a_axes = [d % a.ndim for d in a_axes]
    b_axes = [d % b.ndim for d in b_axes]
    if len(a_axes) != len(b_axes):
        raise RuntimeError(f"tensordot: both sides must contract the same number of dims, got "
                           f"{a_axes} and {b_axes}")
    for i, j in zip(a_axes, b_axes, strict=False):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"tensordot: contracted dimensions don't match: shapes {tuple(a.shape)} and "
                f"{tuple(b.shape)} (dim {i} has size {a.shape[i]}, dim {j} has {b.shape[j]})")
    la = list(_LETTERS[:a.ndim])
    lb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(a_axes, b_axes, strict=False):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in a_axes] + \
          [c for j, c in enumerate(lb) if j not in b_axes]
    return _einsum(a, b, subscripts="".join(la) + "," + "".join(lb) + "->" + "".join(out))


def _as_operand(other, like):
    """A non-tensor operand of `@` (array, list) as a tensor of the tensor's dtype, so a
    float32 graph is not promoted by a float64 array."""
    from ..creation import as_tensor

    return as_tensor(other, dtype=like.dtype)


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        other = _as_operand(other, self)
    return _call(_matmul, self, other)


def _rmatmul(self, other):
    return _call(_matmul, _as_operand(other, self), self)


__all__ = ["matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "einsum", "tensordot"]


def _attach() -> None:
    Tensor.__matmul__ = _matmul_op
    Tensor.__rmatmul__ = _rmatmul
    for name in ("matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "tensordot"):
        setattr(Tensor, name, globals()[name])


_attach()
