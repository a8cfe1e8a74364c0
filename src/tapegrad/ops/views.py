"""Views of one input: reshape, broadcast_to, sum_to, expand_dims, squeeze, transpose,
swapaxes, moveaxis (NumPy-style internal ops) and their PyTorch-style public functions
(`reshape`, `view`, `flatten`, `squeeze`, `unsqueeze`, `transpose(x, dim0, dim1)`, `permute`,
`expand`, `.T`, `.mT`, ...). Re-exported by shape.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..tensor import _axis
from .arguments import check_scalar_dims, dims_arg, need_dim, norm_axes, pick
from .quiet import quiet
from .registry import defop, dispatch
from .xp import linear_jvp, sum_to_axes

if TYPE_CHECKING:
    from ..tensor import Tensor


# ------------------------------------------------------------------ views of one input
@defop(params=("shape",), in_shape=True, view=True)
def _reshape(xp, x, *, shape, in_shape=None):
    return x.reshape(shape)


@_reshape.vjp
def _(xp, g, shape, in_shape):
    return (xp.reshape(g, in_shape),)


_reshape.jvp(linear_jvp(_reshape))  # linear: the tangent goes through the op


@_reshape.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"shape": (6, 4)}),
        ((rng.standard_normal((2, 3)),), {"shape": (-1,)}),
        ((rng.standard_normal(()),), {"shape": (1, 1)}),
        ((rng.standard_normal((4,)),), {"shape": (2, 1, 2)}),
    ]


_reshape.reference(lambda torch, x, shape: x.reshape(shape))


@defop(params=("shape",), view=True)
def _broadcast_to(xp, x, *, shape):
    return xp.broadcast_to(x, shape)


@_broadcast_to.vjp
def _(xp, g, shape):
    return (g,)  # the engine sums the gradient back to the input's shape


_broadcast_to.jvp(linear_jvp(_broadcast_to))  # linear: the tangent goes through the op


@_broadcast_to.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 1)),), {"shape": (2, 3, 4)}),
        ((rng.standard_normal(()),), {"shape": (3,)}),
        ((rng.standard_normal((4,)),), {"shape": (2, 4)}),
    ]


_broadcast_to.reference(lambda torch, x, shape: torch.broadcast_to(x, shape))


@defop(params=("shape",), in_shape=True, array_twin=True)
def _sum_to(xp, x, *, shape, in_shape=None):
    """Sum a broadcast gradient back to `shape` (the inverse of broadcast_to); the engine
    calls it on every input's gradient as `xp.sum_to(g, shape)`."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        axes = sum_to_axes(x.shape, shape)
        out = x.sum(axis=axes) if axes else x
        # a sum that has the shape already is returned as it is: a reshaped view would be
        # copied again by the engine before it becomes a leaf's .grad (a bias gradient)
        return out if type(out) is np.ndarray and out.shape == shape else out.reshape(shape)


@_sum_to.vjp
def _(xp, g, shape, in_shape):
    return (xp.broadcast_to(g, in_shape),)


@_sum_to.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"shape": (3, 1)}),
        ((rng.standard_normal((2, 3)),), {"shape": ()}),
        ((rng.standard_normal((2, 3)),), {"shape": (2, 3)}),
    ]


_sum_to.reference(lambda torch, x, shape: x.sum_to_size(shape) if shape else x.sum())


@defop(params=("axis",), view=True)
def _expand_dims(xp, x, *, axis):
    return xp.expand_dims(x, axis)


@_expand_dims.vjp
def _(xp, g, axis):
    return (xp.squeeze(g, axis),)


_expand_dims.jvp(linear_jvp(_expand_dims))  # linear: the tangent goes through the op


@_expand_dims.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)),), {"axis": 1}),
        ((rng.standard_normal((2, 3)),), {"axis": -1}),
        ((rng.standard_normal(()),), {"axis": 0}),
        ((rng.standard_normal((3,)),), {"axis": (0, 2)}),
    ]


@_expand_dims.reference
def _(torch, x, axis):
    if isinstance(axis, int):
        return x.unsqueeze(axis)  # PyTorch checks the range itself ([-1, 0] for a 0-d x)
    nd = x.ndim + len(axis)
    for a in sorted(axis, key=lambda a: a % nd):
        if not -nd <= a < nd:  # the unsqueezes below see wrapped axes: check as NumPy does
            raise IndexError(f"axis {a} out of range for {nd} dimensions")
        x = x.unsqueeze(a % nd)
    return x


@defop(params=("axis",), in_shape=True, view=True)
def _squeeze(xp, x, *, axis=None, in_shape=None):
    return xp.squeeze(x, axis)


@_squeeze.vjp
def _(xp, g, axis=None, in_shape=None):
    return (xp.reshape(g, in_shape),)


_squeeze.jvp(linear_jvp(_squeeze))  # linear: the tangent goes through the op


@_squeeze.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 1, 3)),), {"axis": 1}),
        ((rng.standard_normal((2, 1, 3, 1)),), {"axis": -1}),
        ((rng.standard_normal((1, 3, 1)),), {"axis": None}),
        ((rng.standard_normal((1,)),), {"axis": 0}),
    ]


_squeeze.reference(lambda torch, x, axis=None: x.squeeze() if axis is None else x.squeeze(axis))


@defop(params=("axes",), view=True)
def _transpose(xp, x, *, axes=None):
    return xp.transpose(x, axes)


@_transpose.vjp
def _(xp, g, axes=None):
    return (
        xp.transpose(
            g,
            None if axes is None else tuple(int(i) for i in np.argsort([a % g.ndim for a in axes])),
        ),
    )


_transpose.jvp(linear_jvp(_transpose))  # linear: the tangent goes through the op


@_transpose.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"axes": (2, 0, 1)}),
        ((rng.standard_normal((2, 3)),), {"axes": None}),
        ((rng.standard_normal((2, 3, 4)),), {"axes": (-1, 0, 1)}),
    ]


_transpose.reference(  # a tuple, not *dims: x.permute() with no dims is a TypeError for 0-d x
    lambda torch, x, axes=None: x.permute(tuple(reversed(range(x.ndim))) if axes is None else axes)
)


@defop(params=("axis1", "axis2"), view=True)
def _swapaxes(xp, x, *, axis1, axis2):
    return xp.swapaxes(x, axis1, axis2)


@_swapaxes.vjp
def _(xp, g, axis1, axis2):
    return (xp.swapaxes(g, axis1, axis2),)


_swapaxes.jvp(linear_jvp(_swapaxes))  # linear: the tangent goes through the op


@_swapaxes.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"axis1": 0, "axis2": 2}),
        ((rng.standard_normal((2, 3)),), {"axis1": -1, "axis2": -2}),
    ]


_swapaxes.reference(lambda torch, x, axis1, axis2: x.transpose(axis1, axis2))


@defop(params=("source", "destination"), view=True)
def _moveaxis(xp, x, *, source, destination):
    if x.ndim == 0:  # dim 0 / -1 of a 0-d input, as PyTorch: nothing moves
        check_scalar_dims("moveaxis", source)
        check_scalar_dims("moveaxis", destination)
        return x[...]
    return xp.moveaxis(x, source, destination)


@_moveaxis.vjp
def _(xp, g, source, destination):
    return (g if g.ndim == 0 else xp.moveaxis(g, destination, source),)


@_moveaxis.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"source": 0, "destination": -1}),
        ((rng.standard_normal((2, 3, 4)),), {"source": (0, 1), "destination": (2, 0)}),
    ]


_moveaxis.reference(lambda torch, x, source, destination: torch.movedim(x, source, destination))


# ================================================================== public (PyTorch) API
def reshape(input, *shape):
    """A tensor with the same data in `shape` (a view when possible); one size may be -1.

    >>> tg.arange(6).reshape(2, 3).shape
    (2, 3)
    """
    shape = dims_arg(shape)
    try:
        return dispatch(_reshape, input, shape=shape, in_shape=input.shape)
    except ValueError:
        raise RuntimeError(
            f"shape {list(shape)} is invalid for input of shape {tuple(input.shape)} "
            f"({input.numel()} elements); the sizes must multiply to {input.numel()}"
        ) from None


def view(input, *shape):
    """`input` in `shape` sharing its storage: like reshape, but refused (as in PyTorch) when
    the layout of a non-contiguous tensor (`t.T`, a strided slice) would need a copy."""
    data = input._data
    if type(data) is np.ndarray and not data.flags.c_contiguous:
        target = dims_arg(shape)
        try:
            np.reshape(data, target, copy=False)
        except ValueError as e:
            if "copy" not in str(e):
                raise RuntimeError(
                    f"shape {list(target)} is invalid for input of shape {tuple(input.shape)}"
                ) from None
            raise RuntimeError(
                f"view: size {list(target)} is not compatible with the input's size "
                f"{list(input.shape)} and stride (at least one dimension spans across two "
                "contiguous subspaces, as after a transpose). Use .reshape(...) instead, or "
                ".contiguous().view(...)"
            ) from None
    return reshape(input, *shape)


def view_as(input, other):
    """`input` reshaped to `other`'s shape."""
    return reshape(input, other.shape)


def reshape_as(input, other):
    """`input` reshaped to `other`'s shape."""
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions start_dim..end_dim into one: `x.flatten(1)` keeps the batch axis."""
    shape = input.shape
    if not shape:
        return reshape(input, (1,))
    s, e = _axis(start_dim, len(shape)), _axis(end_dim, len(shape))
    if s > e:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if s == e:
        return input
    merged = math.prod(shape[s : e + 1])  # not -1: an empty batch leaves -1 undetermined
    return reshape(input, shape[:s] + (merged,) + shape[e + 1 :])


def unflatten(input, dim, sizes):
    """Split dimension `dim` into `sizes` (one may be -1)."""
    d = _axis(dim, input.ndim)
    return reshape(input, input.shape[:d] + tuple(sizes) + input.shape[d + 1 :])


def squeeze(input, dim=None, *, axis=None):
    """Drop size-1 dimensions: all of them, or only `dim` (int or tuple) where it is 1."""
    dim = pick(dim, axis)
    shape = input.shape
    if dim is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(a for a in (_axis(d, len(shape)) for d in dims) if shape and shape[a] == 1)
    return dispatch(_squeeze, input, axis=axes, in_shape=shape) if axes else input


def unsqueeze(input, dim=None, *, axis=None):
    """Insert a size-1 dimension at `dim` (-1 appends one)."""
    dim = need_dim(dim, axis, "unsqueeze")
    nd = input.ndim + 1
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return dispatch(_expand_dims, input, axis=dim % nd)


def expand_dims(input, axis=None, *, dim=None):
    """NumPy's expand_dims: insert size-1 dimensions at `axis` (int or tuple)."""
    return dispatch(_expand_dims, input, axis=need_dim(dim, axis, "expand_dims"))


def transpose(input, dim0, dim1):
    """Swap two dimensions (PyTorch's meaning; NumPy's transpose is `permute`)."""
    nd = input.ndim
    if nd == 0:
        return input
    return dispatch(_swapaxes, input, axis1=_axis(dim0, nd), axis2=_axis(dim1, nd))


def swapaxes(input, axis0, axis1):
    """Swap two dimensions (= transpose(input, axis0, axis1))."""
    return transpose(input, axis0, axis1)


swapdims = swapaxes


def t(input):
    """Transpose a tensor of at most 2 dimensions."""
    if input.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but got {input.ndim}D (shape "
            f"{tuple(input.shape)}); use transpose(dim0, dim1) or .mT"
        )
    return dispatch(_transpose, input, axes=None) if input.ndim == 2 else input


def permute(input, *dims):
    """Reorder the dimensions: `x.permute(2, 0, 1)`."""
    dims = dims_arg(dims)
    nd = input.ndim
    axes = tuple(_axis(d, nd) for d in dims)
    if len(axes) != nd or len(set(axes)) != nd:
        raise RuntimeError(
            f"permute: dims {list(dims)} must name each of the {nd} dimensions of a tensor of "
            f"shape {tuple(input.shape)} exactly once"
        )
    return dispatch(_transpose, input, axes=axes)


def moveaxis(input, source, destination):
    """Move dimension(s) `source` to position(s) `destination`."""
    nd = input.ndim
    source, destination = norm_axes(source, nd), norm_axes(destination, nd)
    if nd == 0:  # dims 0 and -1 of a 0-d tensor: nothing moves (still a view, as in PyTorch)
        return reshape(input, ())
    return dispatch(_moveaxis, input, source=source, destination=destination)


movedim = moveaxis


def _mT(input):
    if input.ndim < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on tensors of >= 2 dimensions, got "
            f"shape {tuple(input.shape)}"
        )
    return dispatch(_swapaxes, input, axis1=-2, axis2=-1)


def broadcast_to(input: Tensor, *shape: Any) -> Tensor:
    """A read-only broadcast view of `input` with `shape`."""
    shape = dims_arg(shape)
    if tuple(shape) == input.shape:
        return input
    try:
        return dispatch(_broadcast_to, input, shape=shape)
    except ValueError:
        raise RuntimeError(
            f"broadcast_to: the tensor of shape {tuple(input.shape)} can't be broadcast to "
            f"{tuple(shape)} (each dimension must match or be 1)"
        ) from None


def expand(input, *sizes):
    """Broadcast to `sizes` without copying; -1 keeps a dimension, new ones go in front."""
    sizes = dims_arg(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes ({len(sizes)}) must be >= the number of dimensions "
            f"of the tensor ({input.ndim}, shape {tuple(input.shape)})"
        )
    shape = tuple(
        input.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes)
    )
    return broadcast_to(input, shape)


def expand_as(input, other):
    """`input` broadcast (without copying) to `other`'s shape."""
    return broadcast_to(input, other.shape)


def sum_to_size(input, *size):
    """Sum broadcast dimensions so the result has `size` (the inverse of expand)."""
    size = dims_arg(size)
    return dispatch(_sum_to, input, shape=size, in_shape=input.shape)


def contiguous(input, memory_format=None):
    """The tensor itself when its storage is in row-major order, else a row-major copy (what
    `view` needs after a transpose). Differentiable."""
    data = input._data
    if data.flags.c_contiguous:
        return input
    # a reshape to 1-D copies in row-major order; the reshape back is a view of that copy
    flat = dispatch(_reshape, input, shape=(-1,), in_shape=input.shape)
    return dispatch(_reshape, flat, shape=input.shape, in_shape=flat.shape)


def is_contiguous(input, memory_format=None) -> bool:
    """True when the storage is in row-major order (so `view` can reshape it freely)."""
    return bool(input._data.flags.c_contiguous)


__all__ = [
    "reshape",
    "view",
    "view_as",
    "reshape_as",
    "flatten",
    "unflatten",
    "squeeze",
    "unsqueeze",
    "expand_dims",
    "transpose",
    "swapaxes",
    "swapdims",
    "t",
    "permute",
    "moveaxis",
    "movedim",
    "broadcast_to",
    "expand",
    "expand_as",
    "sum_to_size",
    "is_contiguous",
]
