"""Shape ops: reshape and views, transposes, broadcasting, tiling, concatenation, splitting,
padding.

The internal ops have NumPy's names and signatures (derivative rules call `xp.reshape(g, s)`,
`xp.swapaxes(g, -1, -2)` on arrays and on tensors alike); the public functions below them
follow PyTorch (`transpose(x, dim0, dim1)`, `repeat` = tile, `flip(dims)`, `split(size)`,
`pad` with the last dimension first).
"""
from __future__ import annotations

import builtins

import numpy as np

from ..tensor import Tensor, _axis
from .registry import Op, defop
from .xp import sum_to_axes

_slice = builtins.slice


class NumpyStyleOp(Op):
    """An op that can also be called the NumPy way.

    Parameters may come positionally after the inputs (a rule running on tensors calls
    `xp.swapaxes(g, -1, -2)` exactly as it would on arrays); variadic ops accept a sequence
    first (`xp.concatenate([a, b], axis)`); ops whose rule needs the input's shape get it as
    the `in_shape` parameter, so they never have to save the input itself.
    """

    n_inputs = 1  # None: variadic
    param_names: tuple = ()
    wants_in_shape = False

    def __call__(self, *args, **params):
        n = self.n_inputs
        if n is None:
            if args and isinstance(args[0], (list, tuple)):
                params.update(zip(self.param_names, args[1:], strict=False))
                args = tuple(args[0])
        elif len(args) > n:
            params.update(zip(self.param_names, args[n:], strict=False))
            args = args[:n]
        for k, v in params.items():  # an index array saved as a tensor is a constant here
            if isinstance(v, Tensor):
                params[k] = v._data
        if self.wants_in_shape:
            params["in_shape"] = args[0].shape
        return Op.__call__(self, *args, **params)


def numpy_op(params=(), inputs=1, in_shape=False, **kw):
    """`defop` for a NumPy-style op: `params` names the keyword parameters in NumPy's
    positional order, `inputs` how many leading arguments are inputs (None: variadic)."""

    def register(forward):
        op = defop(**kw)(forward)
        op.__class__ = NumpyStyleOp
        op.n_inputs = inputs
        op.param_names = tuple(params)
        op.wants_in_shape = in_shape
        return op

    return register


_call = Op.__call__  # public functions pass every parameter by keyword: skip the remapping


def _norm_axes(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_axis(a, ndim) for a in axis)
    return _axis(axis, ndim)


# ------------------------------------------------------------------ views of one input
@numpy_op(params=("shape",), in_shape=True, view=True)
def _reshape(xp, x, *, shape, in_shape=None):
    return x.reshape(shape)


@_reshape.vjp
def _(xp, g, shape, in_shape):
    return (xp.reshape(g, in_shape),)


@_reshape.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"shape": (6, 4)}),
        ((rng.standard_normal((2, 3)),), {"shape": (-1,)}),
        ((rng.standard_normal(()),), {"shape": (1, 1)}),
        ((rng.standard_normal((4,)),), {"shape": (2, 1, 2)}),
    ]


_reshape.reference(lambda torch, x, shape: x.reshape(shape))


@numpy_op(params=("shape",), view=True)
def _broadcast_to(xp, x, *, shape):
    return xp.broadcast_to(x, shape)


@_broadcast_to.vjp
def _(xp, g, shape):
    return (g,)  # the engine sums the gradient back to the input's shape


@_broadcast_to.sample
def _(rng):
    return [
        ((rng.standard_normal((3, 1)),), {"shape": (2, 3, 4)}),
        ((rng.standard_normal(()),), {"shape": (3,)}),
        ((rng.standard_normal((4,)),), {"shape": (2, 4)}),
    ]


_broadcast_to.reference(lambda torch, x, shape: torch.broadcast_to(x, shape))


@numpy_op(params=("shape",), in_shape=True)
def _sum_to(xp, x, *, shape, in_shape=None):
    shape = tuple(shape)
    if x.shape == shape:
        return x
    axes = sum_to_axes(x.shape, shape)
    out = x.sum(axis=axes) if axes else x
    return out.reshape(shape)


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


@numpy_op(params=("axis",), view=True)
def _expand_dims(xp, x, *, axis):
    return xp.expand_dims(x, axis)


@_expand_dims.vjp
def _(xp, g, axis):
    return (xp.squeeze(g, axis),)


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
    axes = (axis,) if isinstance(axis, int) else axis
    nd = x.ndim + len(axes)
    for a in sorted(a % nd for a in axes):
        x = x.unsqueeze(a)
    return x


@numpy_op(params=("axis",), in_shape=True, view=True)
def _squeeze(xp, x, *, axis=None, in_shape=None):
    return xp.squeeze(x, axis)


@_squeeze.vjp
def _(xp, g, axis=None, in_shape=None):
    return (xp.reshape(g, in_shape),)


@_squeeze.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 1, 3)),), {"axis": 1}),
        ((rng.standard_normal((2, 1, 3, 1)),), {"axis": -1}),
        ((rng.standard_normal((1, 3, 1)),), {"axis": None}),
        ((rng.standard_normal((1,)),), {"axis": 0}),
    ]


_squeeze.reference(lambda torch, x, axis=None: x.squeeze() if axis is None else x.squeeze(axis))


@numpy_op(params=("axes",), view=True)
def _transpose(xp, x, *, axes=None):
    return xp.transpose(x, axes)


@_transpose.vjp
def _(xp, g, axes=None):
    return (xp.transpose(g, None if axes is None else
                         tuple(int(i) for i in np.argsort([a % g.ndim for a in axes]))),)


@_transpose.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"axes": (2, 0, 1)}),
        ((rng.standard_normal((2, 3)),), {"axes": None}),
        ((rng.standard_normal((2, 3, 4)),), {"axes": (-1, 0, 1)}),
    ]


_transpose.reference(
    lambda torch, x, axes=None: x.permute(*(reversed(range(x.ndim)) if axes is None else axes))
)


@numpy_op(params=("axis1", "axis2"), view=True)
def _swapaxes(xp, x, *, axis1, axis2):
    return xp.swapaxes(x, axis1, axis2)


@_swapaxes.vjp
def _(xp, g, axis1, axis2):
    return (xp.swapaxes(g, axis1, axis2),)


@_swapaxes.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"axis1": 0, "axis2": 2}),
        ((rng.standard_normal((2, 3)),), {"axis1": -1, "axis2": -2}),
    ]


_swapaxes.reference(lambda torch, x, axis1, axis2: x.transpose(axis1, axis2))


@numpy_op(params=("source", "destination"), view=True)
def _moveaxis(xp, x, *, source, destination):
    return xp.moveaxis(x, source, destination)


@_moveaxis.vjp
def _(xp, g, source, destination):
    return (xp.moveaxis(g, destination, source),)


@_moveaxis.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3, 4)),), {"source": 0, "destination": -1}),
        ((rng.standard_normal((2, 3, 4)),), {"source": (0, 1), "destination": (2, 0)}),
    ]


_moveaxis.reference(lambda torch, x, source, destination: torch.movedim(x, source, destination))


# ------------------------------------------------------------------ copies
@numpy_op(params=("axis",))
def _flip(xp, x, *, axis=None):
    return xp.flip(x, axis).copy()  # PyTorch's flip copies; a write to it must not reach x


@_flip.vjp
def _(xp, g, axis=None):
    return (xp.flip(g, axis),)


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


@numpy_op(params=("reps",), in_shape=True)
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


@numpy_op(params=("repeats", "axis"), in_shape=True)
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
        split = shape[:axis] + (n, r) + shape[axis + 1:]
        target = shape[:axis] + (n, 1) + shape[axis + 1:]
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


class _ConcatenateOp(NumpyStyleOp):
    """concatenate(*xs, axis) or NumPy's concatenate([a, b], axis); the rule needs each
    input's size along `axis`, which the call records as `sizes`."""

    def __call__(self, *args, **params):
        if args and isinstance(args[0], (list, tuple)):
            params.update(zip(("axis",), args[1:], strict=False))
            args = tuple(args[0])
        axis = params.get("axis", 0)
        params["sizes"] = tuple(a.shape[axis] for a in args)
        return Op.__call__(self, *args, **params)


@numpy_op(params=("axis",), inputs=None)
def _concatenate(xp, *xs, axis=0, sizes=()):
    return xp.concatenate(xs, axis)


_concatenate.__class__ = _ConcatenateOp


@_concatenate.vjp
def _(xp, g, axis=0, sizes=(), needs=None):
    lead = (_slice(None),) * (axis % g.ndim)
    out = []
    start = 0
    for n, need in zip(sizes, needs, strict=False):
        out.append(g[lead + (_slice(start, start + n),)] if need else None)
        start += n
    return tuple(out)


@_concatenate.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)), rng.standard_normal((4, 3))), {"axis": 0}),
        ((rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 2))),
         {"axis": -1}),
    ]


_concatenate.reference(lambda torch, *xs, axis=0: torch.cat(xs, axis))


@numpy_op(params=("axis",), inputs=None)
def _stack(xp, *xs, axis=0):
    return xp.stack(xs, axis)


@_stack.vjp
def _(xp, g, axis=0, needs=None):
    lead = (_slice(None),) * (axis % g.ndim)
    return tuple(g[lead + (i,)] if need else None for i, need in enumerate(needs))


@_stack.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)), rng.standard_normal((2, 3))), {"axis": 0}),
        ((rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
         {"axis": -1}),
        ((rng.standard_normal(()), rng.standard_normal(())), {"axis": 0}),
    ]


_stack.reference(lambda torch, *xs, axis=0: torch.stack(xs, axis))


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap", "edge": "edge", "wrap": "wrap"}


@numpy_op(params=("pad_width", "mode", "value"), in_shape=True)
def _pad(xp, x, *, pad_width, mode="constant", value=0.0, in_shape=None):
    if mode == "constant":
        return xp.pad(x, pad_width, mode="constant", constant_values=value)
    return xp.pad(x, pad_width, mode=_PAD_MODES[mode])


@_pad.vjp
def _(xp, g, pad_width, mode="constant", value=0.0, in_shape=None):
    if mode == "constant":
        return (g[tuple(_slice(lo, g.shape[i] - hi) for i, (lo, hi) in enumerate(pad_width))],)
    # any other mode: each output element copies one input element; sum them back
    n = int(np.prod(in_shape))
    src = np.pad(np.arange(n).reshape(in_shape), pad_width, mode=_PAD_MODES[mode])
    flat = xp.getitem_backward(xp.reshape(g, (-1,)), shape=(n,), key=(src.reshape(-1),),
                               accumulate=True)
    return (xp.reshape(flat, in_shape),)


@_pad.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)),), {"pad_width": ((0, 0), (1, 2))}),
        ((rng.standard_normal((2, 3)),), {"pad_width": ((1, 1), (2, 0)), "value": 1.5}),
        ((rng.standard_normal((1, 2, 4)),), {"pad_width": ((0, 0), (0, 0), (2, 1)),
                                              "mode": "reflect"}),
        ((rng.standard_normal((1, 2, 3)),), {"pad_width": ((0, 0), (0, 0), (2, 3)),
                                              "mode": "replicate"}),
        ((rng.standard_normal((1, 2, 3)),), {"pad_width": ((0, 0), (0, 0), (1, 2)),
                                              "mode": "circular"}),
    ]


@_pad.reference
def _(torch, x, pad_width, mode="constant", value=0.0):
    if mode == "constant":
        flat = [n for lo_hi in reversed(pad_width) for n in lo_hi]
        return torch.nn.functional.pad(x, flat, value=value)
    # the same gather that F.pad does (whose double backward PyTorch records needlessly);
    # tests/ops/test_shape.py compares with F.pad itself
    src = np.pad(np.arange(x.numel()).reshape(tuple(x.shape)), pad_width, mode=_PAD_MODES[mode])
    return x.reshape(-1)[torch.as_tensor(src)]


# ================================================================== public (PyTorch) API
def _dims_arg(dims):
    """`f(x, 2, 3)` or `f(x, (2, 3))` or `f(x, [2, 3])` -> (2, 3)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    if len(dims) == 1 and isinstance(dims[0], Tensor):
        return tuple(int(d) for d in dims[0].tolist())
    return tuple(dims)


def _pick(dim, axis, name="dim"):
    if axis is not None:
        if dim is not None:
            raise TypeError(f"pass {name}= or axis=, not both")
        return axis
    return dim


def reshape(input, *shape):
    """A tensor with the same data in `shape` (a view when possible); one size may be -1.

    >>> tg.arange(6).reshape(2, 3).shape
    (2, 3)
    """
    shape = _dims_arg(shape)
    try:
        return _call(_reshape, input, shape=shape, in_shape=input.shape)
    except ValueError:
        raise RuntimeError(
            f"shape {list(shape)} is invalid for input of shape {tuple(input.shape)} "
            f"({input.numel()} elements); the sizes must multiply to {input.numel()}"
        ) from None


def view(input, *shape):
    """Like reshape (tapegrad's views share the version counter with their base)."""
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
    return reshape(input, shape[:s] + (-1,) + shape[e + 1:]) if s != e else input


def unflatten(input, dim, sizes):
    """Split dimension `dim` into `sizes` (one may be -1)."""
    d = _axis(dim, input.ndim)
    return reshape(input, input.shape[:d] + tuple(sizes) + input.shape[d + 1:])


def squeeze(input, dim=None, *, axis=None):
    """Drop size-1 dimensions: all of them, or only `dim` (int or tuple) where it is 1."""
    dim = _pick(dim, axis)
    shape = input.shape
    if dim is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(a for a in (_axis(d, len(shape)) for d in dims) if shape and shape[a] == 1)
    return _call(_squeeze, input, axis=axes, in_shape=shape) if axes else input


def unsqueeze(input, dim):
    """Insert a size-1 dimension at `dim` (-1 appends one)."""
    nd = input.ndim + 1
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return _call(_expand_dims, input, axis=dim % nd)


def expand_dims(input, axis):
    """NumPy's expand_dims: insert size-1 dimensions at `axis` (int or tuple)."""
    return _call(_expand_dims, input, axis=axis)


def transpose(input, dim0, dim1):
    """Swap two dimensions (PyTorch's meaning; NumPy's transpose is `permute`)."""
    nd = input.ndim
    if nd == 0:
        return input
    return _call(_swapaxes, input, axis1=_axis(dim0, nd), axis2=_axis(dim1, nd))


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
    return _call(_transpose, input, axes=None) if input.ndim == 2 else input


def permute(input, *dims):
    """Reorder the dimensions: `x.permute(2, 0, 1)`."""
    dims = _dims_arg(dims)
    nd = input.ndim
    axes = tuple(_axis(d, nd) for d in dims)
    if len(axes) != nd or len(set(axes)) != nd:
        raise RuntimeError(
            f"permute: dims {list(dims)} must name each of the {nd} dimensions of a tensor of "
            f"shape {tuple(input.shape)} exactly once"
        )
    return _call(_transpose, input, axes=axes)


def moveaxis(input, source, destination):
    """Move dimension(s) `source` to position(s) `destination`."""
    nd = input.ndim
    return _call(_moveaxis, input, source=_norm_axes(source, nd),
                 destination=_norm_axes(destination, nd))


movedim = moveaxis


def _mT(input):
    if input.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on tensors of >= 2 dimensions, got "
                           f"shape {tuple(input.shape)}")
    return _call(_swapaxes, input, axis1=-2, axis2=-1)


def broadcast_to(input, *shape):
    """A read-only broadcast view of `input` with `shape`."""
    shape = _dims_arg(shape)
    if tuple(shape) == input.shape:
        return input
    try:
        return _call(_broadcast_to, input, shape=shape)
    except ValueError:
        raise RuntimeError(
            f"broadcast_to: the tensor of shape {tuple(input.shape)} can't be broadcast to "
            f"{tuple(shape)} (each dimension must match or be 1)"
        ) from None


def expand(input, *sizes):
    """Broadcast to `sizes` without copying; -1 keeps a dimension, new ones go in front."""
    sizes = _dims_arg(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes ({len(sizes)}) must be >= the number of dimensions "
            f"of the tensor ({input.ndim}, shape {tuple(input.shape)})"
        )
    shape = tuple(input.shape[i - lead] if s == -1 and i >= lead else s
                  for i, s in enumerate(sizes))
    return broadcast_to(input, shape)


def expand_as(input, other):
    """`input` broadcast (without copying) to `other`'s shape."""
    return broadcast_to(input, other.shape)


def sum_to_size(input, *size):
    """Sum broadcast dimensions so the result has `size` (the inverse of expand)."""
    size = _dims_arg(size)
    return _call(_sum_to, input, shape=size, in_shape=input.shape)


def repeat(input, *sizes):
    """PyTorch's repeat: tile the tensor `sizes` times along each dimension (NumPy's tile).

    >>> tg.tensor([1, 2]).repeat(2)
    tensor([1, 2, 1, 2])
    """
    sizes = _dims_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"repeat: number of repeat dims ({len(sizes)}) can not be smaller than the number "
            f"of dimensions of the tensor ({input.ndim}, shape {tuple(input.shape)})"
        )
    return _call(_tile, input, reps=sizes, in_shape=input.shape)


def tile(input, dims):
    """Tile like NumPy: `dims` shorter than ndim is padded with ones in front."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return _call(_tile, input, reps=dims, in_shape=input.shape)


def repeat_interleave(input, repeats, dim=None, *, axis=None, output_size=None):
    """Repeat each element `repeats` times (an int or one count per element) along `dim`;
    without `dim` the tensor is flattened first (NumPy's repeat)."""
    dim = _pick(dim, axis)
    if isinstance(repeats, Tensor):
        repeats = repeats._data
        if repeats.ndim == 0:
            repeats = int(repeats)
    if dim is not None:
        dim = _axis(dim, input.ndim)
    return _call(_repeat, input, repeats=repeats, axis=dim, in_shape=input.shape)


def flip(input, dims=None, *, axis=None):
    """Reverse the order of elements along `dims` (int or tuple); a copy, as in PyTorch."""
    dims = _pick(dims, axis, "dims")
    if dims is None:
        raise TypeError("flip() missing argument 'dims' (the dimensions to reverse)")
    return _call(_flip, input, axis=_norm_axes(dims, input.ndim))


def fliplr(input):
    """Reverse the columns (dimension 1)."""
    return flip(input, 1)


def flipud(input):
    """Reverse the rows (dimension 0)."""
    return flip(input, 0)


def cat(tensors, dim=0, *, axis=None):
    """Join tensors along an existing dimension `dim`; the other sizes must match."""
    dim = _pick(dim if dim != 0 or axis is None else None, axis)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("cat: expected a non-empty list of tensors")
    first = _first_tensor(tensors, "cat")
    tensors = [_as(t, first) for t in tensors]
    ref = tensors[0].shape
    d = _axis(dim, len(ref))
    for i, x in enumerate(tensors[1:], 1):
        s = x.shape
        if len(s) != len(ref) or s[:d] + s[d + 1:] != ref[:d] + ref[d + 1:]:
            raise RuntimeError(
                f"cat: sizes of tensors must match except in dimension {dim}: tensor 0 has shape "
                f"{ref} but tensor {i} has shape {s}"
            )
    return _call(_concatenate, *tensors, axis=d, sizes=tuple(x.shape[d] for x in tensors))


concatenate = concat = cat


def stack(tensors, dim=0, *, axis=None):
    """Join tensors of equal shape along a new dimension `dim`."""
    dim = _pick(dim if dim != 0 or axis is None else None, axis)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack: expected a non-empty list of tensors")
    first = _first_tensor(tensors, "stack")
    tensors = [_as(t, first) for t in tensors]
    ref = tensors[0].shape
    for i, x in enumerate(tensors[1:], 1):
        if x.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {ref} at entry 0 and "
                f"{x.shape} at entry {i}"
            )
    nd = len(ref) + 1
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return _call(_stack, *tensors, axis=dim % nd)


def hstack(tensors):
    """Join along dimension 1 (dimension 0 for 1-D tensors)."""
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dimension 0, 1-D tensors as rows."""
    return cat([t if t.ndim >= 2 else reshape(t, (1, -1)) for t in tensors], 0)


def _first_tensor(items, what):
    for t in items:
        if isinstance(t, Tensor):
            return t
    raise TypeError(f"{what}: expected a sequence of Tensors")


def _as(t, like):
    if isinstance(t, Tensor):
        return t
    from ..creation import as_tensor

    return as_tensor(np.asarray(t, dtype=like.dtype))


def _narrow(input, d, start, stop):
    key = (_slice(None),) * d + (_slice(start, stop),)
    from .index import getitem

    return getitem(input, key)


def split(tensor, split_size_or_sections, dim=0):
    """PyTorch's split: chunks of size `split_size_or_sections` (the last may be smaller), or
    pieces of the listed sizes (which must add up to the dimension). Returns a tuple of views.
    """
    d = _axis(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0:
            raise RuntimeError(f"split: split_size must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
        if not sizes:
            sizes = [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split: split_sizes {sizes} add up to {sum(sizes)}, but dimension {dim} of the "
                f"tensor (shape {tuple(tensor.shape)}) has size {n}"
            )
    out = []
    start = 0
    for s in sizes:
        out.append(_narrow(tensor, d, start, start + s))
        start += s
    return tuple(out)


def tensor_split(input, indices_or_sections, dim=0):
    """NumPy's array_split: `sections` near-equal pieces, or split before each index."""
    d = _axis(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        q, r = divmod(n, k)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (k - r))
    else:
        bounds = [0, *indices_or_sections, n]
    pairs = zip(bounds[:-1], bounds[1:], strict=True)
    return tuple(_narrow(input, d, int(a), int(b)) for a, b in pairs)


def chunk(input, chunks, dim=0):
    """Split into `chunks` pieces of size ceil(n / chunks) (fewer when they run out)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_axis(dim, input.ndim)]
    return split(input, max(-(-n // chunks), 1), dim)


def unbind(input, dim=0):
    """The slices along `dim`, as a tuple of tensors with that dimension removed."""
    from .index import getitem

    d = _axis(dim, input.ndim)
    lead = (_slice(None),) * d
    return tuple(getitem(input, lead + (i,)) for i in range(input.shape[d]))


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: `pad` lists (left, right) amounts starting from the LAST
    dimension: `pad(x, (1, 1))` pads the last dim, `(1, 1, 2, 2)` also the one before.
    mode: 'constant' (with `value`, negative amounts crop), 'reflect', 'replicate', 'circular'.
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(
            f"pad: the padding list must have an even length of at most 2 * ndim "
            f"(= {2 * input.ndim} for shape {tuple(input.shape)}), got {pad}"
        )
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: unknown mode {mode!r}; use 'constant', 'reflect', "
                         "'replicate' or 'circular'")
    k = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - k) + [(pad[2 * i], pad[2 * i + 1])
                                            for i in reversed(range(k))]
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        if mode != "constant":
            raise ValueError(f"pad: negative padding {pad} is only allowed in 'constant' mode")
        from .index import getitem

        input = getitem(input, tuple(_slice(max(-lo, 0), n - max(-hi, 0))
                                     for (lo, hi), n in zip(widths, input.shape, strict=False)))
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "reflect":
        for (lo, hi), n in zip(widths, input.shape, strict=False):
            if lo >= n or hi >= n:
                raise ValueError(
                    f"pad: reflect padding ({lo}, {hi}) must be smaller than the dimension it "
                    f"pads (size {n}, input shape {tuple(input.shape)})"
                )
    return _call(_pad, input, pad_width=tuple(widths), mode=mode,
                 value=0.0 if value is None else value, in_shape=input.shape)


def contiguous(input, memory_format=None):
    """The tensor itself (tapegrad never needs a contiguous copy)."""
    return input


__all__ = [
    "reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
    "expand_dims", "transpose", "swapaxes", "swapdims", "t", "permute", "moveaxis", "movedim",
    "broadcast_to", "expand", "expand_as", "sum_to_size", "repeat", "tile", "repeat_interleave",
    "flip", "fliplr", "flipud", "cat", "concatenate", "concat", "stack", "hstack", "vstack",
    "split", "tensor_split", "chunk", "unbind", "pad",
]


def _attach() -> None:
    for name in ("reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
                 "unsqueeze", "transpose", "swapaxes", "swapdims", "t", "permute", "moveaxis",
                 "movedim", "broadcast_to", "expand", "expand_as", "sum_to_size", "repeat",
                 "tile", "repeat_interleave", "flip", "fliplr", "flipud", "split",
                 "tensor_split", "chunk", "unbind", "contiguous"):
        setattr(Tensor, name, globals()[name])
    Tensor.T = property(lambda self: _call(_transpose, self, axes=None) if self.ndim > 1 else self,
                        doc="All dimensions reversed.")
    Tensor.mT = property(_mT, doc="The last two dimensions swapped (batched matrix transpose).")


_attach()
