"""Functions that rearrange or combine whole tensors, PyTorch's names: roll, diff, take,
tril_indices / triu_indices, cross, kron, block_diag, cartesian_prod, broadcast_tensors,
addmm / baddbmm / addmv, and the small predicates (numel, is_tensor, is_floating_point).

`roll` is one op (`@defop`, its rule rolls the gradient back); the rest are composites of
differentiable ops (slicing, cat, stack, matmul, expand), so each gradient is theirs and exact.

    >>> tg.roll(tg.tensor([1, 2, 3, 4]), 1)
    tensor([4, 1, 2, 3])
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import backend, creation, dtypes
from ..tensor import Tensor, _axis, _wrap
from .joins import cat, stack
from .linalg import bmm, mm, mv
from .matrix import meshgrid
from .registry import defop
from .views import reshape
from .xp import linear_jvp


def check_dim(what: str, dim: Any, ndim: int) -> int:
    """`dim` made non-negative for a tensor of `ndim` dimensions (a 0-d tensor has one,
    as in PyTorch); out of range raises an IndexError naming `what` and the valid range."""
    try:
        return _axis(dim, ndim)
    except IndexError:
        n = builtins.max(ndim, 1)
        raise IndexError(
            f"{what}(): dim {dim} is out of range for a tensor of {ndim} dimension(s); "
            f"pass a dim in [{-n}, {n - 1}]"
        ) from None


def _need_tensor(what: str, t: Any, name: str = "input") -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}(): {name} must be a Tensor, got {type(t).__name__}")


# ------------------------------------------------------------------ roll
@defop(params=("shift", "axis"))
def _roll(xp, x, *, shift, axis=None):
    return xp.roll(x, shift, axis)


@_roll.vjp
def _(xp, g, shift, axis=None):
    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return (xp.roll(g, shift=back, axis=axis),)


_roll.jvp(linear_jvp(_roll))


@_roll.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 4)),), {"shift": 1, "axis": 1}),
        ((rng.standard_normal((3, 4)),), {"shift": (2, -1), "axis": (0, 1)}),
        ((rng.standard_normal((2, 3)),), {"shift": 4, "axis": None}),
        ((rng.standard_normal((5,)),), {"shift": -7, "axis": 0}),
    ]


@_roll.reference
def _(torch, x, shift, axis=None):
    return torch.roll(x, shift, axis)


def roll(input, shifts, dims=None):
    """Shift elements along `dims` by `shifts`, wrapping around; with dims=None the tensor is
    rolled as if flattened (then restored to its shape). `shifts` and `dims` may be tuples of
    the same length.

    >>> tg.roll(tg.tensor([[1, 2], [3, 4]]), 1, 0)
    tensor([[3, 4],
            [1, 2]])
    """
    _need_tensor("roll", input)
    many = isinstance(shifts, (tuple, list))
    shift = tuple(int(s) for s in shifts) if many else int(shifts)
    if dims is None:
        if many and len(shift) != 1:
            raise RuntimeError(
                f"roll(): {len(shift)} shifts given without dims; pass one dim per shift"
            )
        return _roll(input, shift=shift[0] if many else shift, axis=None)
    dims_many = isinstance(dims, (tuple, list))
    axes = tuple(check_dim("roll", d, input.ndim) for d in (dims if dims_many else (dims,)))
    shift = shift if many else (shift,)
    if len(shift) != len(axes):
        raise RuntimeError(
            f"roll(): shifts {tuple(shift)} and dims {tuple(axes)} must have the same length"
        )
    if input.ndim == 0:
        return input.clone()
    return _roll(input, shift=shift, axis=axes)


# ------------------------------------------------------------------ diff
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim`: out[i] = x[i + 1] - x[i], `n` times;
    `prepend` / `append` are joined to `input` along `dim` first (booleans: x[i+1] != x[i]).

    >>> tg.diff(tg.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    """
    _need_tensor("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff(): expects input to be at least one-dimensional")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    d = check_dim("diff", dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in parts:
        _need_tensor("diff", t, "prepend/append")
        if t.ndim != input.ndim:
            raise RuntimeError(
                f"diff(): prepend/append must have {input.ndim} dimensions as input, got "
                f"shape {tuple(t.shape)}"
            )
    x = cat(parts, d) if len(parts) > 1 else input
    key_hi = (builtins.slice(None),) * d + (builtins.slice(1, None),)
    key_lo = (builtins.slice(None),) * d + (builtins.slice(None, -1),)
    for _ in range(n):
        if x.shape[d] == 0:
            break
        x = x[key_hi] != x[key_lo] if x.dtype == np.bool_ else x[key_hi] - x[key_lo]
    return x


# ------------------------------------------------------------------ take, indices
def take(input, index):
    """`input` as if flattened, at `index` (an int64 tensor; negative counts from the end);
    the result has `index`'s shape.

    >>> tg.take(tg.tensor([[4, 3], [5, 6]]), tg.tensor([0, 3]))
    tensor([4, 6])
    """
    _need_tensor("take", input)
    _need_tensor("take", index, "index")
    if index.dtype.kind not in "iu":
        raise TypeError(f"take(): index must be an integer tensor, got {index.dtype}")
    n = input.numel()
    idx = index._data
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx.max()) if idx.max() >= n else int(idx.min())
        raise IndexError(
            f"take(): index {bad} is out of range for a tensor of {n} elements; "
            f"pass indices in [{-n}, {n - 1}]"
        )
    return reshape(input, (n,))[index]


def _triangle_indices(what, np_fn, row, col, offset, dtype):
    row, col, offset = int(row), int(col), int(offset)
    if row < 0 or col < 0:
        raise RuntimeError(f"{what}(): row and col must be non-negative, got {row} and {col}")
    rows, cols = np_fn(row, offset, col)
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    return _wrap(np.stack([rows, cols]).astype(dtype).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix (diagonal
    `offset`), row by row.

    >>> tg.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device="cpu", layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix (diagonal
    `offset`), row by row.

    >>> tg.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype)


# ------------------------------------------------------------------ products
def cross(input, other, dim=None):
    """The cross product of 3-vectors along `dim` (inputs broadcast). Without `dim`, the
    first dimension of size 3, as PyTorch.

    >>> tg.cross(tg.tensor([1.0, 0.0, 0.0]), tg.tensor([0.0, 1.0, 0.0]), dim=0)
    tensor([0., 0., 1.])
    """
    _need_tensor("cross", input)
    _need_tensor("cross", other, "other")
    a, b = broadcast_tensors(input, other)
    if dim is None:
        sizes = [i for i, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise RuntimeError(f"cross(): no dimension of size 3 in shape {tuple(a.shape)}")
        d = sizes[0]
    else:
        d = check_dim("cross", dim, a.ndim)
    if a.ndim == 0 or a.shape[d] != 3:
        raise RuntimeError(f"cross(): dimension {dim} must have size 3, got shape {tuple(a.shape)}")
    a1, a2, a3 = a.unbind(d)
    b1, b2, b3 = b.unbind(d)
    return stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], d)


def kron(input, other):
    """The Kronecker product: every element of `input` times all of `other`, laid out in
    blocks (the shorter shape is padded with leading 1s).

    >>> tg.kron(tg.tensor([1, 2]), tg.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    _need_tensor("kron", input)
    _need_tensor("kron", other, "other")
    nd = builtins.max(input.ndim, other.ndim)
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(n for s in sa for n in (s, 1)))
    b = reshape(other, tuple(n for s in sb for n in (1, s)))
    return reshape(a * b, tuple(x * y for x, y in zip(sa, sb, strict=True)))


def _add_scaled(what, input, product, beta, alpha):
    """beta * input + alpha * product; beta = 0 ignores input (its NaN too), as PyTorch."""
    _need_tensor(what, input)
    scaled = product if alpha == 1 else product * alpha
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(product.shape))
    except ValueError:
        shape = None
    if shape != tuple(product.shape):
        raise RuntimeError(
            f"{what}(): input of shape {tuple(input.shape)} does not broadcast to the "
            f"product's shape {tuple(product.shape)}"
        )
    if beta == 0:  # input's values are not read (a NaN there stays out), its gradient is 0
        from .elementwise import where

        return scaled + where(_wrap(np.zeros((), bool)), input, 0)
    return scaled + (input if beta == 1 else input * beta)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), mat1 and mat2 2-D (input broadcasts).

    >>> tg.addmm(tg.zeros(2, 2), tg.eye(2), tg.ones(2, 2), alpha=2)
    tensor([[2., 2.],
            [2., 2.]])
    """
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2), both 3-D (input broadcasts)."""
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec), mat 2-D and vec 1-D (input broadcasts)."""
    return _add_scaled("addmv", input, mv(mat, vec), beta, alpha)


# ------------------------------------------------------------------ joins
def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views, as PyTorch).

    >>> [t.shape for t in tg.broadcast_tensors(tg.ones(2, 1), tg.ones(3))]
    [(2, 3), (2, 3)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _need_tensor("broadcast_tensors", t, "every argument")
    try:
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        raise RuntimeError(
            "broadcast_tensors(): shapes "
            f"{[tuple(t.shape) for t in tensors]} don't broadcast together"
        ) from None
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def block_diag(*tensors):
    """The tensors (0-d, 1-d as one row, or 2-d) as blocks down the diagonal of one matrix,
    zeros elsewhere (dtype: their common type).

    >>> tg.block_diag(tg.tensor([[1, 2]]), tg.tensor([[3]]))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    blocks = []
    for t in tensors:
        _need_tensor("block_diag", t, "every argument")
        if t.ndim > 2:
            raise RuntimeError(
                f"block_diag(): input tensors must have 2 or fewer dimensions, got {t.ndim}"
            )
        blocks.append(
            reshape(t, (1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else t.shape)
        )
    if not blocks:
        return creation.zeros(1, 0)
    dtype = np.result_type(*(b.dtype for b in blocks))
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        b = b if b.dtype == dtype else b.astype(dtype)
        pieces = [
            creation.zeros(r, left, dtype=dtype),
            b,
            creation.zeros(r, width - left - c, dtype=dtype),
        ]
        rows.append(cat(pieces, 1))
        left += c
    return cat(rows, 0)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows (like
    itertools.product); one tensor is returned as it is.

    >>> tg.cartesian_prod(tg.tensor([1, 2]), tg.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    for t in tensors:
        _need_tensor("cartesian_prod", t, "every argument")
        if t.ndim != 1:
            raise RuntimeError(
                f"cartesian_prod(): expects 1-D tensors, got one of shape {tuple(t.shape)}"
            )
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


# ------------------------------------------------------------------ predicates and metadata
def numel(input) -> int:
    """The number of elements of `input`."""
    _need_tensor("numel", input)
    return input.numel()


def is_tensor(obj) -> bool:
    """Whether `obj` is a tapegrad Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """Whether `input`'s dtype is a floating point type."""
    _need_tensor("is_floating_point", input)
    return bool(dtypes.is_floating(input.dtype))


def type_as(self, other):
    """This tensor converted to `other`'s dtype."""
    _need_tensor("type_as", other, "other")
    return self if self.dtype == other.dtype else self.astype(other.dtype)


def nelement(self) -> int:
    """The number of elements (PyTorch's alias of numel)."""
    return self.numel()


def ndimension(self) -> int:
    """The number of dimensions (PyTorch's alias of dim)."""
    return self.ndim


def stride(self, dim=None):
    """The step, in elements, between neighbours along each dimension (a tuple), or along
    `dim` (an int)."""
    item = self._data.itemsize
    strides = tuple(s // item for s in self._data.strides)
    if dim is None:
        return strides
    if self.ndim == 0:
        check_dim("stride", dim, 0)
        raise IndexError("stride(): a 0-d tensor has no dimensions")
    return strides[check_dim("stride", dim, self.ndim)]


def data_ptr(self) -> int:
    """The address of this tensor's first element."""
    data = self._data
    if backend.array_module(data) is np:
        return int(data.__array_interface__["data"][0])
    return int(data.data.ptr)  # CuPy


def _rebind(self, view: Tensor, what: str) -> Tensor:
    """Make `self` the view `view` (same storage): the in-place view methods (t.unsqueeze_)
    change the metadata and, when recorded, the node of this tensor, as PyTorch does."""
    from .registry import check_inplace_allowed

    if view._tapes:
        check_inplace_allowed(self)
    self._data = view._data
    self.grad_fn, self._out_nr, self._tapes = view.grad_fn, view._out_nr, view._tapes
    return self


def unsqueeze_(self, dim):
    """In-place unsqueeze: this tensor gets a new dimension of size 1 at `dim`."""
    return _rebind(self, self.unsqueeze(dim), "unsqueeze_")


def squeeze_(self, dim=None):
    """In-place squeeze: this tensor loses its dimensions of size 1 (or just `dim`)."""
    return _rebind(self, self.squeeze() if dim is None else self.squeeze(dim), "squeeze_")


def t_(self):
    """In-place t(): a 2-D tensor is transposed (0-d and 1-d stay as they are)."""
    return _rebind(self, self.t(), "t_")


def transpose_(self, dim0, dim1):
    """In-place transpose of dimensions `dim0` and `dim1`."""
    return _rebind(self, self.transpose(dim0, dim1), "transpose_")


__all__ = [
    "roll",
    "diff",
    "take",
    "tril_indices",
    "triu_indices",
    "cross",
    "kron",
    "addmm",
    "baddbmm",
    "addmv",
    "broadcast_tensors",
    "block_diag",
    "cartesian_prod",
    "numel",
    "is_tensor",
    "is_floating_point",
]
