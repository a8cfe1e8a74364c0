"""tg.nn.functional `affine_grid` and `grid_sample` (spatial transformers), as PyTorch's.

`affine_grid` is one matmul of the base grid (normalized [-1, 1] coordinates, x along W) with
each theta. `grid_sample` maps the grid to pixel coordinates (PyTorch's align_corners rule),
applies the padding mode (border clips, reflection folds; their derivatives as PyTorch's: 0
where clipped, -1 where folded), then gathers the 2 ** d corners (bilinear), the nearest
point (nearest, ties to even) or 4 x 4 taps (bicubic, cubic convolution with A = -0.75, the
padding mode moving each tap as PyTorch's) from the flattened input. Every step is a
differentiable op, so gradients flow to the input (the gathers' scatter-add) and to the grid
(the corner weights), and of any order.

    >>> theta = tg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> grid = affine_grid(theta, (1, 1, 2, 3), align_corners=True)
    >>> x = tg.arange(6.0).reshape(1, 1, 2, 3)
    >>> grid_sample(x, grid, align_corners=True).numpy()
    array([[[[0., 1., 2.],
             [3., 4., 5.]]]], dtype=float32)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend
from ..creation import linspace, ones, zeros_like
from ..ops.elementwise import where
from ..ops.gather_scatter import take_along_dim
from ..ops.shape import stack
from ..tensor import Tensor, _wrap

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


def _align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# ---------------------------------------------------------------- affine_grid
def _base_coords(n, align_corners, dtype, device):
    """The n normalized centres along one dim: [-1, 1] at the corner pixels' centres
    (align_corners) or scaled by (n - 1) / n (the pixels' edges at +-1); 0 for n = 1."""
    if n <= 1:
        return linspace(0.0, 0.0, 1, dtype=dtype, device=device)
    steps = linspace(-1.0, 1.0, n, dtype=dtype, device=device)
    return steps if align_corners else steps * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps, as torch.nn.functional.affine_grid.

    theta (N, 2, 3) with size (N, C, H, W) gives (N, H, W, 2) of (x, y); theta (N, 3, 4) with
    size (N, C, D, H, W) gives (N, D, H, W, 3) of (x, y, z). align_corners=None warns (as
    PyTorch) and means False.

    >>> affine_grid(tg.tensor([[[1.0, 0, 0], [0, 1.0, 0]]]), (1, 1, 1, 2), False).numpy()
    array([[[[-0.5,  0. ],
             [ 0.5,  0. ]]]], dtype=float32)
    """
    align = _align(align_corners)
    if not isinstance(theta, Tensor):
        raise TypeError(f"affine_grid: theta must be a Tensor, got {type(theta).__name__}")
    if theta.dtype.kind != "f":
        raise ValueError(
            f"Expected theta to have floating point type, but got {theta.dtype} (affine_grid)"
        )
    try:
        size = [int(s) for s in size]
    except TypeError:
        raise TypeError(f"affine_grid: size must be a sequence of ints, got {size!r}") from None
    if len(size) not in (4, 5):
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(
            f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size "
            f"{size}. Got {list(theta.shape)}. (affine_grid)"
        )
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size} (affine_grid)")
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    dtype, device = theta.dtype, theta.device
    # base grid (*spatial, nd + 1): coordinate k (x first) varies along spatial dim nd - 1 - k
    axes = [_base_coords(s, align, dtype, device) for s in spatial]
    cols = []
    for k in range(nd):
        dim = nd - 1 - k
        shape = [1] * nd
        shape[dim] = spatial[dim]
        cols.append(axes[dim].reshape(shape).expand(*spatial))
    cols.append(ones(*spatial, dtype=dtype, device=device))
    base = stack(cols, -1).reshape(1, -1, nd + 1)  # (1, P, nd + 1)
    grid = base @ theta.transpose(1, 2)  # (N, P, nd)
    return grid.reshape(size[0], *spatial, nd)


# ---------------------------------------------------------------- grid_sample
def _unnormalize(coord, size, align):
    if align:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _clip(ic, limit):
    """Clamp to [0, limit] with PyTorch's derivative: 1 strictly inside, 0 on and beyond."""
    inside = (ic > 0) & (ic < limit)
    return where(inside, ic, zeros_like(ic) + ic.detach().clamp(0, limit))


def _reflect(ic, twice_low, twice_high):
    """Fold coordinates into [low, high] by reflection (derivative +-1, as PyTorch)."""
    if twice_low == twice_high:
        return ic * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = ic - low
    xp = backend.array_module(d._data)
    sign = xp.where(d._data < 0, -1.0, 1.0).astype(d._data.dtype)
    a = d * _wrap(sign)
    flips = xp.floor(a._data / span)
    extra = a - _wrap((flips * span).astype(a._data.dtype))
    even = _wrap(flips % 2 == 0)
    return where(even, extra + low, (extra * -1) + (span + low))


def _source_index(coord, size, padding_mode, align):
    return _pad_coordinate(_unnormalize(coord, size, align), size, padding_mode, align)


def _pad_coordinate(ic, size, padding_mode, align):
    if padding_mode == "border":
        ic = _clip(ic, size - 1)
    elif padding_mode == "reflection":
        ic = _reflect(ic, 0, 2 * (size - 1)) if align else _reflect(ic, -1, 2 * size - 1)
        ic = _clip(ic, size - 1)
    return ic


def _check_sample(input, grid, mode, padding_mode):
    fn = "grid_sample"
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: {name} must be a Tensor, got {type(t).__name__}")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(
            f"{fn}: expected 4D or 5D input and grid with same number of dimensions, but got "
            f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    nd = input.ndim - 2
    if mode == "bicubic" and nd != 2:
        raise RuntimeError(
            f"{fn}: bicubic interpolation only supports 4D input (got input with sizes "
            f"{list(input.shape)}); use 'bilinear' (trilinear) or 'nearest' for 5-D"
        )
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(
            f"{fn}: expected grid and input to have same batch size, but got input with sizes "
            f"{list(input.shape)} and grid with sizes {list(grid.shape)}"
        )
    if grid.shape[-1] != nd:
        raise RuntimeError(
            f"{fn}: expected grid to have size {nd} in last dimension, but got grid with "
            f"sizes {list(grid.shape)}"
        )
    if any(s == 0 for s in input.shape[2:]):
        raise RuntimeError(
            f"{fn}: expected input to have non-empty spatial dimensions, but input has sizes "
            f"{list(input.shape)} with dimension {2 + list(input.shape[2:]).index(0)} being "
            "empty"
        )
    if input.dtype.kind != "f" or input.dtype != grid.dtype:
        raise RuntimeError(
            f"{fn}: expected input and grid to be floating point of one dtype, got "
            f"{input.dtype} and {grid.dtype}; convert one (t.to(dtype))"
        )


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample `input` at the normalized locations of `grid`, as torch.nn.functional.grid_sample.

    input (N, C, H, W) with grid (N, H_out, W_out, 2) of (x, y) in [-1, 1], or input
    (N, C, D, H, W) with grid (N, D_out, H_out, W_out, 3) of (x, y, z); the result is
    (N, C, *grid.shape[1:-1]). mode 'bilinear' (trilinear for 5-D), 'nearest' or 'bicubic'
    (4-D only, as PyTorch's);
    padding_mode 'zeros' (outside points read 0), 'border' (clamped) or 'reflection'.
    align_corners=None warns (as PyTorch) and means False. Gradients flow to input and grid
    (the grid's is 0 for 'nearest', as PyTorch's).

    >>> x = tg.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> grid_sample(x, tg.tensor([[[[0.0, 0.0]]]]), align_corners=False).numpy()
    array([[[[1.5]]]], dtype=float32)
    """
    _check_sample(input, grid, mode, padding_mode)
    align = _align(align_corners)
    nd = input.ndim - 2
    n, c, in_sizes = input.shape[0], input.shape[1], tuple(input.shape[2:])
    out_sizes = tuple(grid.shape[1:-1])
    q = math.prod(out_sizes)
    g = grid.reshape(n, q, nd)
    flat = input.reshape(n, c, math.prod(in_sizes))
    strides = [math.prod(in_sizes[d + 1 :]) for d in range(nd)]
    # ic[d]: the (N, Q) source coordinate along spatial dim d (grid component nd - 1 - d)
    ic = [
        _source_index(g[..., nd - 1 - d], in_sizes[d], padding_mode, align)
        if mode != "bicubic"
        else None
        for d in range(nd)
    ]
    xp = backend.array_module(flat._data)

    def gather(points):
        """Values at integer points (one (N, Q) array per dim), 0 outside, as (N, C, Q)."""
        valid = np.bool_(True)
        pos = 0
        for d, p in enumerate(points):
            valid = valid & (p >= 0) & (p < in_sizes[d])
            pos = pos + xp.clip(p, 0, in_sizes[d] - 1) * strides[d]
        vals = take_along_dim(flat, _wrap(pos.astype(np.int64)[:, None, :]), dim=2)
        return vals, valid

    if mode == "nearest":
        points = [xp.rint(t._data).astype(np.int64) for t in ic]  # half to even, as nearbyint
        vals, valid = gather(points)
        out = vals * _wrap(valid[:, None, :].astype(flat._data.dtype))
        out = out + (g.sum(-1) * 0)[:, None, :]  # the grid's gradient: zeros, as PyTorch's
        return out.reshape(n, c, *out_sizes)
    if mode == "bicubic":
        return _bicubic(g, in_sizes, padding_mode, align, gather, xp).reshape(n, c, *out_sizes)
    lows = [xp.floor(t._data) for t in ic]
    fracs = [t - _wrap(lo) for t, lo in zip(ic, lows, strict=True)]
    out = None
    for corner in range(2**nd):
        bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
        points = [lo.astype(np.int64) + b for lo, b in zip(lows, bits, strict=True)]
        weight = None
        for f, b in zip(fracs, bits, strict=True):
            w = f if b else (f * -1) + 1
            weight = w if weight is None else weight * w
        vals, valid = gather(points)
        mask = _wrap(valid.astype(flat._data.dtype))
        term = vals * (weight * mask)[:, None, :]
        out = term if out is None else out + term
    return out.reshape(n, c, *out_sizes)


_A = -0.75  # the cubic convolution's parameter, PyTorch's (and OpenCV's)


def _cubic_weights(t):
    """The 4 tap weights of cubic convolution at fraction t (taps at -1, 0, 1, 2)."""

    def near(x):  # |x| <= 1
        return ((x * (_A + 2) - (_A + 3)) * x) * x + 1

    def far(x):  # 1 < |x| < 2
        return ((x * _A - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near((t * -1) + 1), far((t * -1) + 2)]


def _bicubic(g, in_sizes, padding_mode, align, gather, xp):
    """PyTorch's bicubic sampling: 4 x 4 taps around the unpadded source point, each tap's
    integer position moved by the padding mode (zeros: outside taps read 0); the weights'
    derivative is the grid's gradient."""
    ic = [_unnormalize(g[..., 1 - d], in_sizes[d], align) for d in range(2)]
    lows = [xp.floor(t._data) for t in ic]
    weights = [_cubic_weights(t - _wrap(lo)) for t, lo in zip(ic, lows, strict=True)]
    taps = []
    for d in range(2):
        per_dim = []
        for k in range(4):
            pos = _wrap(lows[d] + (k - 1))
            if padding_mode != "zeros":
                pos = _pad_coordinate(pos, in_sizes[d], padding_mode, align)
            per_dim.append(pos._data.astype(np.int64))  # truncation, as PyTorch's cast
        taps.append(per_dim)
    out = None
    for ky in range(4):
        for kx in range(4):
            vals, valid = gather([taps[0][ky], taps[1][kx]])
            weight = weights[0][ky] * weights[1][kx] * _wrap(valid.astype(vals._data.dtype))
            term = vals * weight[:, None, :]
            out = term if out is None else out + term
    return out
