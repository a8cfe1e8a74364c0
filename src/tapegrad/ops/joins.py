"""Joining, splitting and padding: concatenate, stack, pad (NumPy-style internal ops) and
the PyTorch-style `cat`, `stack`, `hstack`, `vstack`, `split(size)`, `tensor_split`, `chunk`,
`unbind`, `pad` (last dimension first). Re-exported by shape.py.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from ..tensor import Tensor, _axis
from .arguments import pick
from .registry import NumpyStyleOp, defop, dispatch
from .views import reshape

_slice = builtins.slice


class _ConcatenateOp(NumpyStyleOp):
    """concatenate(*xs, axis) or NumPy's concatenate([a, b], axis); the rule needs each
    input's size along `axis`, which the call records as `sizes`."""

    def arguments(self, args, params):
        args, params = NumpyStyleOp.arguments(self, args, params)
        axis = params.get("axis", 0)
        params["sizes"] = tuple(a.shape[axis] for a in args)
        return args, params


@defop(params=("axis",), inputs=None, op_class=_ConcatenateOp)
def _concatenate(xp, *xs, axis=0, sizes=()):
    return xp.concatenate(xs, axis)


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
        (
            (rng.standard_normal((2, 3)), rng.standard_normal((2, 1)), rng.standard_normal((2, 2))),
            {"axis": -1},
        ),
    ]


_concatenate.reference(lambda torch, *xs, axis=0: torch.cat(xs, axis))


@defop(params=("axis",), inputs=None)
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
        (
            (rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))),
            {"axis": -1},
        ),
        ((rng.standard_normal(()), rng.standard_normal(())), {"axis": 0}),
    ]


_stack.reference(lambda torch, *xs, axis=0: torch.stack(xs, axis))


_PAD_MODES = {
    "constant": "constant",
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "wrap",
    "edge": "edge",
    "wrap": "wrap",
}


@defop(params=("pad_width", "mode", "value"), in_shape=True)
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
    flat = xp.getitem_backward(
        xp.reshape(g, (-1,)), shape=(n,), key=(src.reshape(-1),), accumulate=True
    )
    return (xp.reshape(flat, in_shape),)


@_pad.sample
def _(rng):
    return [
        ((rng.standard_normal((2, 3)),), {"pad_width": ((0, 0), (1, 2))}),
        ((rng.standard_normal((2, 3)),), {"pad_width": ((1, 1), (2, 0)), "value": 1.5}),
        (
            (rng.standard_normal((1, 2, 4)),),
            {"pad_width": ((0, 0), (0, 0), (2, 1)), "mode": "reflect"},
        ),
        (
            (rng.standard_normal((1, 2, 3)),),
            {"pad_width": ((0, 0), (0, 0), (2, 3)), "mode": "replicate"},
        ),
        (
            (rng.standard_normal((1, 2, 3)),),
            {"pad_width": ((0, 0), (0, 0), (1, 2)), "mode": "circular"},
        ),
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
def cat(tensors, dim=0, *, axis=None):
    """Join tensors along an existing dimension `dim`; the other sizes must match."""
    dim, tensors = _join_args(tensors, dim, axis, "cat")
    ref = tensors[0].shape
    d = _axis(dim, len(ref))
    for i, x in enumerate(tensors[1:], 1):
        s = x.shape
        if len(s) != len(ref) or s[:d] + s[d + 1 :] != ref[:d] + ref[d + 1 :]:
            raise RuntimeError(
                f"cat: sizes of tensors must match except in dimension {dim}: tensor 0 has shape "
                f"{ref} but tensor {i} has shape {s}"
            )
    return dispatch(_concatenate, *tensors, axis=d, sizes=tuple(x.shape[d] for x in tensors))


concatenate = concat = cat


def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors of equal shape along a new dimension `dim`."""
    dim, tensors = _join_args(tensors, dim, axis, "stack")
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
    return dispatch(_stack, *tensors, axis=dim % nd)


def hstack(tensors):
    """Join along dimension 1 (dimension 0 for 1-D tensors)."""
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dimension 0, 1-D tensors as rows."""
    return cat([t if t.ndim >= 2 else reshape(t, (1, -1)) for t in tensors], 0)


def _join_args(tensors, dim, axis, what):
    """(dim, tensors) of cat/stack: dim= or axis=, a non-empty list, non-tensors converted to
    the first tensor's dtype."""
    dim = pick(dim if dim != 0 or axis is None else None, axis)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{what}: expected a non-empty list of tensors")
    first = _first_tensor(tensors, what)
    return dim, [_as(t, first) for t in tensors]


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


def split(tensor, split_size_or_sections, dim=0, *, axis=None):
    """PyTorch's split: chunks of size `split_size_or_sections` (the last may be smaller), or
    pieces of the listed sizes (which must add up to the dimension). Returns a tuple of views.
    """
    d = _axis(pick(dim if dim != 0 or axis is None else None, axis), tensor.ndim)
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


def chunk(input, chunks, dim=0, *, axis=None):
    """Split into `chunks` pieces of size ceil(n / chunks) (fewer when they run out)."""
    dim = pick(dim if dim != 0 or axis is None else None, axis)
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)):
        raise TypeError(f"chunk(): `chunks` must be an int, got {chunks!r}")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _axis(dim, input.ndim)
    n = input.shape[d]
    if n == 0:  # PyTorch: `chunks` empty pieces
        from .index import getitem

        return tuple(getitem(input, (_slice(None),) * d + (_slice(0, 0),)) for _ in range(chunks))
    return split(input, -(-n // chunks), dim)


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
        raise ValueError(
            f"pad: unknown mode {mode!r}; use 'constant', 'reflect', 'replicate' or 'circular'"
        )
    k = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - k) + [
        (pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))
    ]
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        if mode != "constant":
            raise ValueError(f"pad: negative padding {pad} is only allowed in 'constant' mode")
        from .index import getitem

        input = getitem(
            input,
            tuple(
                _slice(max(-lo, 0), n - max(-hi, 0))
                for (lo, hi), n in zip(widths, input.shape, strict=False)
            ),
        )
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "reflect":
        for (lo, hi), n in zip(widths, input.shape, strict=False):
            if lo >= n or hi >= n:
                raise ValueError(
                    f"pad: reflect padding ({lo}, {hi}) must be smaller than the dimension it "
                    f"pads (size {n}, input shape {tuple(input.shape)})"
                )
    return dispatch(
        _pad,
        input,
        pad_width=tuple(widths),
        mode=mode,
        value=0.0 if value is None else value,
        in_shape=input.shape,
    )


__all__ = [
    "cat",
    "concatenate",
    "concat",
    "stack",
    "hstack",
    "vstack",
    "split",
    "tensor_split",
    "chunk",
    "unbind",
    "pad",
]
