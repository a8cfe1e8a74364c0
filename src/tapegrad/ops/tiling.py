"""Copies that repeat or reorder elements: flip, tile, repeat (NumPy-style internal ops)
and the PyTorch-style `flip(dims)`, `repeat` (= NumPy's tile), `tile`, `repeat_interleave`,
`fliplr`, `flipud`. Re-exported by shape.py.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..tensor import Tensor, _axis
from .arguments import check_scalar_dims, dims_arg, norm_axes, pick
from .registry import defop, dispatch

_slice = builtins.slice


# ------------------------------------------------------------------ copies
@defop(params=("axis",))
def _flip(xp, x, *, axis=None):
    if x.ndim == 0 and axis is not None:  # dim 0 / -1 of a 0-d input, as PyTorch
        check_scalar_dims("flip", axis)
        axis = None
    return xp.flip(x, axis).copy()  # PyTorch's flip copies; a write to it must not reach x


@_flip.vjp
def _(xp, g, axis=None):
    return (xp.flip(g, None if g.ndim == 0 else axis),)


@_flip.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"axis": (0, 2)}),
        ((rng.standard_normal((2, 3)),), {"axis": -1}),
        ((rng.standard_normal((3,)),), {"axis": None}),
    ]


@_flip.reference
def _(torch, x, axis=None):
    dims = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return torch.flip(x, dims)


def _full_reps(reps, ndim):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    return (1,) * (ndim - len(reps)) + reps, max(ndim, len(reps))


@defop(params=("reps",), in_shape=True)
def _tile(xp, x, *, reps, in_shape=None):
    return xp.tile(x, reps)


@_tile.vjp
def _(xp, g, reps, in_shape):
    reps, nd = _full_reps(reps, len(in_shape))
    shape = (1,) * (nd - len(in_shape)) + tuple(in_shape)
    # (r0*s0, r1*s1, ...) -> (r0, s0, r1, s1, ...), then sum every r axis
    split = tuple(n for r, s in zip(reps, shape, strict=False) for n in (r, s))
    target = tuple(n for s in shape for n in (1, s))
    return (xp.reshape(xp.sum_to(xp.reshape(g, split), target), in_shape),)


@_tile.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)),), {"reps": (2, 1)}),
        ((rng.standard_normal((3,)),), {"reps": (2, 2)}),
        ((rng.standard_normal((2, 3)),), {"reps": 3}),
        ((rng.standard_normal(()),), {"reps": (4,)}),
    ]


@_tile.reference
def _(torch, x, reps):
    return torch.tile(x, (reps,) if isinstance(reps, int) else reps)


@defop(params=("repeats", "axis"), in_shape=True)
def _repeat(xp, x, *, repeats, axis=None, in_shape=None):
    return xp.repeat(x, repeats, axis)


@_repeat.vjp
def _(xp, g, repeats, axis=None, in_shape=None):
    if axis is None:
        flat = (int(np.prod(in_shape)),)
        return (xp.reshape(_repeat_grad(xp, g, repeats, 0, flat), in_shape),)
    return (_repeat_grad(xp, g, repeats, axis % len(in_shape), tuple(in_shape)),)


def _repeat_grad(xp, g, repeats, axis, shape):
    n = shape[axis]
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.reshape(repeats, -1)[0]) if np.ndim(repeats) else int(repeats)
        split = shape[:axis] + (n, r) + shape[axis + 1 :]
        target = shape[:axis] + (n, 1) + shape[axis + 1 :]
        return xp.reshape(xp.sum_to(xp.reshape(g, split), target), shape)
    src = np.repeat(np.arange(n), np.asarray(repeats))  # output position -> source index
    key = (_slice(None),) * axis + (src,)
    return xp.getitem_backward(g, shape=shape, key=key, accumulate=True)


@_repeat.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)),), {"repeats": 2, "axis": 1}),
        ((rng.standard_normal((2, 3)),), {"repeats": 2, "axis": None}),
        ((rng.standard_normal((3, 2)),), {"repeats": np.array([1, 0, 3]), "axis": 0}),
        ((rng.standard_normal((2, 3)),), {"repeats": 3, "axis": -1}),
    ]


@_repeat.reference
def _(torch, x, repeats, axis=None):
    if not isinstance(repeats, int):
        repeats = torch.as_tensor(np.asarray(repeats))
    return torch.repeat_interleave(x, repeats, dim=axis)


# ================================================================== public (PyTorch) API
def repeat(input, *sizes):
    """PyTorch's repeat: tile the tensor `sizes` times along each dimension (NumPy's tile).

    >>> tg.tensor([1, 2]).repeat(2)
    tensor([1, 2, 1, 2])
    """
    sizes = dims_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"repeat: number of repeat dims ({len(sizes)}) can not be smaller than the number "
            f"of dimensions of the tensor ({input.ndim}, shape {tuple(input.shape)})"
        )
    return dispatch(_tile, input, reps=sizes, in_shape=input.shape)


def tile(input, dims):
    """Tile like NumPy: `dims` shorter than ndim is padded with ones in front."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return dispatch(_tile, input, reps=dims, in_shape=input.shape)


def repeat_interleave(input, repeats, dim=None, *, axis=None, output_size=None):
    """Repeat each element `repeats` times (an int or one count per element) along `dim`;
    without `dim` the tensor is flattened first (NumPy's repeat)."""
    dim = pick(dim, axis)
    if isinstance(repeats, Tensor):
        repeats = repeats._data
        if repeats.ndim == 0:
            repeats = int(repeats)
    if dim is not None:
        dim = _axis(dim, input.ndim)
    return dispatch(_repeat, input, repeats=repeats, axis=dim, in_shape=input.shape)


def flip(input, dims=None, *more_dims, axis=None):
    """Reverse the order of elements along `dims` (int or tuple; `t.flip(0, 2)` as in
    PyTorch's method); a copy, as in PyTorch."""
    if more_dims:
        dims = (*(dims if isinstance(dims, (tuple, list)) else (dims,)), *more_dims)
    dims = pick(dims, axis, "dims")
    if dims is None:
        raise TypeError("flip() missing argument 'dims' (the dimensions to reverse)")
    axes = norm_axes(dims, input.ndim)  # checks the dims (a 0-d tensor takes 0 and -1)
    if input.ndim == 0:
        return input.clone()  # nothing to reverse
    return dispatch(_flip, input, axis=axes)


def fliplr(input):
    """Reverse the columns (dimension 1)."""
    return flip(input, 1)


def flipud(input):
    """Reverse the rows (dimension 0)."""
    return flip(input, 0)


__all__ = ["repeat", "tile", "repeat_interleave", "flip", "fliplr", "flipud"]
