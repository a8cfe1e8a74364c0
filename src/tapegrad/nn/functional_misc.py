"""tg.nn.functional `bilinear`, `pdist`, `channel_shuffle` / `native_channel_shuffle`, as
PyTorch's; each composed from differentiable ops (one einsum; gathers of row pairs; a
reshape and a transpose), so gradients of any order follow.

    >>> channel_shuffle(tg.arange(6.0).reshape(1, 6, 1), 3).numpy().ravel()
    array([0., 2., 4., 1., 3., 5.], dtype=float32)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..creation import ones_like, zeros_like
from ..ops.einsum import einsum
from ..ops.elementwise import where
from ..tensor import Tensor, _wrap

__all__ = ["bilinear", "pdist", "channel_shuffle", "native_channel_shuffle"]


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for each output feature, as torch.nn.functional.bilinear.

    input1 (*, in1), input2 (*, in2) with the same leading dims, weight (out, in1, in2),
    bias (out,) or None; the result is (*, out).

    >>> bilinear(tg.ones(2, 3), tg.ones(2, 4), tg.ones(5, 3, 4)).shape
    (2, 5)
    """
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"bilinear(): {name} must be a Tensor, got {type(t).__name__}")
    if weight.ndim != 3:
        raise RuntimeError(
            f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
            f"shape {list(weight.shape)}"
        )
    if input1.ndim == 0 or input2.ndim == 0:
        raise RuntimeError("bilinear(): input1 and input2 must have at least one dim")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}"
        )
    for i, t in ((1, input1), (2, input2)):
        if t.shape[-1] != weight.shape[i]:
            raise RuntimeError(
                f"bilinear(): input{i} size does not match weight size: got {t.shape[-1]} but "
                f"expected {weight.shape[i]}"
            )
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    if bias is not None:
        if not isinstance(bias, Tensor) or tuple(bias.shape) != (weight.shape[0],):
            raise RuntimeError(
                f"bilinear(): bias must be a Tensor of shape ({weight.shape[0]},) (one per "
                f"output feature), got {getattr(bias, 'shape', bias)!r}"
            )
        out = out + bias
    return out


def _pnorm(d, p):
    """||d||_p over the last dim with PyTorch pdist's gradients: 0 at a zero distance (and at
    a zero component when p < 1), the full sign(d) to every tied component for p = inf."""
    a = abs(d)
    if p == 0:  # a count: no gradient, still in the graph
        return (d != 0).to(d.dtype).sum(-1) + (d * 0).sum(-1)
    if math.isinf(p):
        top = a.detach().amax(-1, keepdim=True)
        tied = (a.detach() == top).to(d.dtype)
        return top.squeeze(-1) + (tied * (a - a.detach())).sum(-1)
    nonzero = d != 0
    powered = where(nonzero, where(nonzero, a, ones_like(a)) ** p, zeros_like(a))
    s = powered.sum(-1)
    positive = s > 0
    return where(positive, where(positive, s, ones_like(s)) ** (1.0 / p), zeros_like(s))


def pdist(input, p=2):
    """p-norm distances between every pair of rows of an (N, M) input: the N * (N - 1) / 2
    entries above the diagonal of cdist(input, input), row-major, as PyTorch's.

    p >= 0 (0 counts differing components, inf is the largest difference). The gradient at a
    zero distance is 0, as PyTorch's.

    >>> pdist(tg.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])).numpy()
    array([ 5., 10.,  5.], dtype=float32)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pdist: input must be a Tensor, got {type(input).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input.dtype.kind != "f":
        raise RuntimeError(f"pdist only supports floating-point dtypes, got {input.dtype}")
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or math.isnan(p) or p < 0:
        raise RuntimeError(f"pdist only supports non-negative p values, got {p!r}")
    i, j = np.triu_indices(input.shape[0], 1)
    d = input[_wrap(i)] - input[_wrap(j)]
    return _pnorm(d, float(p))


def _channel_shuffle(fn, input, groups):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim <= 2:
        raise RuntimeError(
            f"{fn} expects input with > 2 dims, but got input with sizes {list(input.shape)}"
        )
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{fn}: groups must be an int, got {groups!r}")
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, rest = input.shape[0], input.shape[1], tuple(input.shape[2:])
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    g = int(groups)
    x = input.reshape((n, g, c // g) + rest).transpose(1, 2)
    return x.reshape((n, c) + rest)


def channel_shuffle(input, groups):
    """Split the C channels of (N, C, *) into `groups` groups and interleave them: channel
    k * (C / g) + i goes to i * g + k (ShuffleNet's shuffle), as PyTorch's.

    >>> channel_shuffle(tg.arange(4.0).reshape(1, 4, 1, 1), 2).numpy().ravel()
    array([0., 2., 1., 3.], dtype=float32)
    """
    return _channel_shuffle("channel_shuffle", input, groups)


def native_channel_shuffle(input, groups):
    """PyTorch's kernel-level `channel_shuffle`; the same result here, and differentiable
    (PyTorch's has no derivative).

    >>> native_channel_shuffle(tg.arange(4.0).reshape(1, 4, 1), 2).numpy().ravel()
    array([0., 2., 1., 3.], dtype=float32)
    """
    return _channel_shuffle("native_channel_shuffle", input, groups)
