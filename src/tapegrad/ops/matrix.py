"""Matrix structure: diagonals (diag, diagonal, trace), triangles (tril, triu) and meshgrid.

Internal ops have NumPy's names and signatures (`diagonal(x, offset, axis1, axis2)`,
`tril(x, k)`); `diagonal_backward` (zeros with `g` written on a diagonal) is diagonal's
rule and, by its own rule, diagonal again, so both run to any order. `diag` of a vector
is that same op. Public functions follow PyTorch (`diagonal(input, offset, dim1, dim2)`,
`tril(input, diagonal=0)`, `meshgrid(..., indexing="ij")`).

    >>> a = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> tg.trace(a).backward(); a.grad
    tensor([[1., 0.],
            [0., 1.]])
"""

from __future__ import annotations

from ..tensor import Tensor, _axis
from .registry import apply_inplace, defop, dispatch
from .views import broadcast_to, reshape


def _diagonal_key(xp, shape, offset, axis1, axis2):
    """(rows, cols): where diagonal `offset` of axes (axis1, axis2) lies."""
    n, m = shape[axis1], shape[axis2]
    length = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    i = xp.arange(length)
    return i + max(-offset, 0), i + max(offset, 0)


@defop(params=("offset", "axis1", "axis2"), in_shape=True, view=True)
def _diagonal(xp, x, *, offset=0, axis1=0, axis2=1, in_shape=None):
    # a view, as PyTorch's: `x.diagonal().fill_(0)` writes into x. NumPy's view is read-only
    # by choice, not necessity: it may be made writeable when its base is
    d = xp.diagonal(x, offset, axis1, axis2)
    if not d.flags.writeable and getattr(x, "flags", None) is not None and x.flags.writeable:
        d.flags.writeable = True
    return d


@_diagonal.vjp
def _(xp, g, offset=0, axis1=0, axis2=1, in_shape=None):
    return (xp.diagonal_backward(g, in_shape, offset, axis1, axis2),)


@_diagonal.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 3)),), {}),
        ((rng.standard_normal((3, 5)),), {"offset": 1}),
        ((rng.standard_normal((4, 2)),), {"offset": -1}),
        ((rng.standard_normal((2, 3, 4)),), {"offset": 0, "axis1": 2, "axis2": 0}),
    ]


_diagonal.reference(
    lambda torch, x, offset=0, axis1=0, axis2=1: torch.diagonal(x, offset, axis1, axis2)
)


@defop(params=("shape", "offset", "axis1", "axis2"), array_twin=True)
def _diagonal_backward(xp, g, *, shape, offset=0, axis1=0, axis2=1):
    """Zeros of `shape` with `g` written on diagonal `offset` of axes (axis1, axis2)."""
    out = xp.zeros(tuple(shape), dtype=g.dtype)
    rows, cols = _diagonal_key(xp, shape, offset, axis1, axis2)
    nd = len(shape)
    kept = tuple(n for i, n in enumerate(shape) if i not in (axis1 % nd, axis2 % nd))
    if tuple(g.shape) != kept + (len(rows),):  # as diagonal_scatter: g is not broadcast
        raise RuntimeError(
            f"diagonal_backward: the values have shape {tuple(g.shape)}, but diagonal {offset} "
            f"of dims ({axis1}, {axis2}) of shape {tuple(shape)} has shape "
            f"{kept + (len(rows),)}; pass one value per diagonal element"
        )
    xp.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = g
    return out


@_diagonal_backward.vjp
def _(xp, g, shape, offset=0, axis1=0, axis2=1):
    return (xp.diagonal(g, offset, axis1, axis2),)


@_diagonal_backward.sample
def _(rng):
    return [
        ((rng.standard_normal((3,)),), {"shape": (3, 3)}),
        ((rng.standard_normal((2,)),), {"shape": (3, 4), "offset": 2}),
        (
            (rng.standard_normal((2, 2)),),
            {"shape": (2, 3, 2), "axis1": 1, "axis2": 2, "offset": -1},
        ),
    ]


@_diagonal_backward.reference
def _(torch, g, shape, offset=0, axis1=0, axis2=1):
    out = torch.zeros(shape, dtype=g.dtype)
    return torch.diagonal_scatter(out, g, offset, axis1, axis2)


def _triangle_samples(rng):
    return [
        ((rng.standard_normal((3, 3)),), {}),
        ((rng.standard_normal((3, 4)),), {"k": 1}),
        ((rng.standard_normal((2, 4, 3)),), {"k": -1}),
    ]


# tril / triu keep one triangle (from the k-th diagonal); linear, so each rule keeps the same
# triangle of g
@defop(params=("k",))
def _tril(xp, x, *, k=0):
    return xp.tril(x, k)


_tril.vjp(lambda xp, g, k=0: (xp.tril(g, k),))


@defop(params=("k",))
def _triu(xp, x, *, k=0):
    return xp.triu(x, k)


_triu.vjp(lambda xp, g, k=0: (xp.triu(g, k),))
for _op in (_tril, _triu):
    _op.sample(_triangle_samples)
_tril.reference(lambda torch, x, k=0: torch.tril(x, k))
_triu.reference(lambda torch, x, k=0: torch.triu(x, k))


# ================================================================== public (PyTorch) API
def _at_least_2d(input, what: str) -> None:
    if input.ndim < 2:
        raise RuntimeError(
            f"{what}: expected a tensor with at least 2 dimensions, got shape {tuple(input.shape)}"
        )


def diagonal(input, offset=0, dim1=0, dim2=1):
    """Diagonal `offset` of the matrices in dimensions (dim1, dim2), as the last dimension:
    a view, as in PyTorch (`x.diagonal().fill_(0)` zeroes x's diagonal; `diag` copies).

    >>> tg.diagonal(tg.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    _at_least_2d(input, "diagonal")
    a1, a2 = _axis(dim1, input.ndim), _axis(dim2, input.ndim)
    if a1 == a2:
        raise RuntimeError(f"diagonal: dim1 and dim2 are the same dimension ({dim1}, {dim2})")
    return dispatch(_diagonal, input, offset=int(offset), axis1=a1, axis2=a2, in_shape=input.shape)


def diag(input, diagonal=0):  # noqa: A002 - PyTorch's argument name shadows the function
    """A 1-D tensor -> the square matrix with it on diagonal `diagonal`; a 2-D tensor -> its
    diagonal `diagonal` (0 main, > 0 above, < 0 below).

    >>> tg.diag(tg.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    k = int(diagonal)
    if input.ndim == 1:
        n = input.shape[0] + abs(k)
        return dispatch(_diagonal_backward, input, shape=(n, n), offset=k, axis1=0, axis2=1)
    if input.ndim == 2:  # a copy, as PyTorch's diag (diagonal is the view)
        d = dispatch(_diagonal, input, offset=k, axis1=0, axis2=1, in_shape=input.shape)
        return d.clone()
    raise RuntimeError(
        f"diag: expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}; "
        "use tg.diagonal for batches of matrices"
    )


def trace(input):
    """The sum of the main diagonal of a 2-D tensor.

    >>> tg.trace(tg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    if input.ndim != 2:
        raise RuntimeError(
            f"trace: expected a 2-D tensor (a matrix), got shape {tuple(input.shape)}"
        )
    return dispatch(_diagonal, input, offset=0, axis1=0, axis2=1, in_shape=input.shape).sum()


def tril(input, diagonal=0):  # noqa: A002
    """The lower triangle (on and below diagonal `diagonal`) of the last two dimensions; the
    rest is zero.

    >>> tg.tril(tg.ones(2, 2))
    tensor([[1., 0.],
            [1., 1.]])
    """
    _at_least_2d(input, "tril")
    return dispatch(_tril, input, k=int(diagonal))


def triu(input, diagonal=0):  # noqa: A002
    """The upper triangle (on and above diagonal `diagonal`) of the last two dimensions; the
    rest is zero.

    >>> tg.triu(tg.ones(2, 2))
    tensor([[1., 1.],
            [0., 1.]])
    """
    _at_least_2d(input, "triu")
    return dispatch(_triu, input, k=int(diagonal))


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-D tensors: output i varies along dimension i ("ij", the
    default) or, with indexing="xy", the first two dimensions are swapped (NumPy's default).
    The outputs are broadcast views: their gradients sum back to the inputs.

    >>> xs, ys = tg.meshgrid(tg.tensor([1, 2]), tg.tensor([3, 4, 5]))
    >>> xs.shape, ys.shape
    ((2, 3), (2, 3))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid: expected at least one tensor")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or t.ndim > 1:
            what = tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__
            raise RuntimeError(f"meshgrid: expected 0-D or 1-D tensors, argument {i} is {what}")
    sizes = [t.shape[0] if t.ndim else 1 for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        pos = (1 - i if i < 2 else i) if swap else i
        shape = [1] * len(tensors)
        shape[pos] = sizes[pos]
        out.append(broadcast_to(reshape(t, tuple(shape)), tuple(sizes)))
    return tuple(out)


__all__ = ["diag", "diagonal", "trace", "tril", "triu", "meshgrid"]


def _tril_(self, diagonal=0):  # noqa: A002
    """Zero the elements above the `diagonal`-th diagonal, in place."""
    _at_least_2d(self, "tril_")
    return apply_inplace(_tril, self, k=int(diagonal))


def _triu_(self, diagonal=0):  # noqa: A002
    """Zero the elements below the `diagonal`-th diagonal, in place."""
    _at_least_2d(self, "triu_")
    return apply_inplace(_triu, self, k=int(diagonal))
