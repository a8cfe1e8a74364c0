"""tg.nn.functional resampling: `interpolate` and `pixel_shuffle` / `pixel_unshuffle`.

Every interpolation mode is separable, so `interpolate` resizes one spatial axis at a time:
nearest modes gather rows (`index_select`); linear, cubic and area modes multiply by a small
(out, in) weight matrix built here in NumPy. Gradients (of any order) come from those ops, so
no rule of its own is needed. Source positions follow PyTorch's kernels: half-pixel centres
(or corner alignment), the scale taken from `scale_factor` unless `recompute_scale_factor`,
nearest indices computed in float32.

    >>> interpolate(tg.ones(1, 1, 2, 2), scale_factor=2, mode="bilinear").shape
    (1, 1, 4, 4)
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..ops.index import index_select
from ..ops.linalg import matmul
from ..ops.tiling import repeat_interleave
from ..tensor import Tensor, _wrap

__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "pixel_shuffle",
    "pixel_unshuffle",
]

# mode -> the number of spatial dims it needs (None: any of 1, 2, 3)
_MODES = {
    "nearest": None,
    "nearest-exact": None,
    "area": None,
    "linear": 1,
    "bilinear": 2,
    "bicubic": 2,
    "trilinear": 3,
}
_CUBIC_A = -0.75  # the cubic convolution constant PyTorch (and OpenCV) use


def _mode_error(ndim: int, mode: str) -> NotImplementedError:
    return NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: "
        f"nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {mode})"
    )


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _output_plan(input, size, scale_factor, mode, recompute_scale_factor):
    """(output sizes, the per-axis scale factors the kernels see, or None per axis)."""
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format."
                )
            out = list(size)
        else:
            out = [size] * dim
        if not all(_is_int(s) for s in out):
            raise TypeError(
                "interpolate: expected size to be one of int or Tuple[int] or Tuple[int, int] "
                f"or Tuple[int, int, int], but got size with types {[type(s) for s in out]}"
            )
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return [int(s) for s in out], [None] * dim
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format."
            )
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    out = [math.floor(n * s) for n, s in zip(spatial, scales)]
    if recompute_scale_factor or mode == "area":
        return out, [None] * dim
    return out, scales


def _kernel_scale(in_n, out_n, scale, dtype):
    """The source step per output step, PyTorch's `compute_scales_value` in `dtype`."""
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(in_n) / dtype.type(out_n)


def _nearest_index(in_n, out_n, scale, exact, legacy):
    f32 = np.dtype(np.float32)
    if legacy and out_n == in_n:  # PyTorch's 2-D nearest kernel keeps two old shortcuts
        return np.arange(out_n)
    if legacy and out_n == 2 * in_n:
        return np.arange(out_n) >> 1
    step = _kernel_scale(in_n, out_n, scale, f32)
    dst = np.arange(out_n, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0.0))
    return np.minimum(np.floor(dst * step).astype(np.int64), in_n - 1)


def _source(in_n, out_n, scale, align_corners, cubic, dtype):
    """Real-valued source coordinates of each output position (PyTorch's area_pixel rules)."""
    dst = np.arange(out_n, dtype=dtype)
    if align_corners:
        step = dtype.type(in_n - 1) / dtype.type(out_n - 1) if out_n > 1 else dtype.type(0)
        return step * dst
    step = _kernel_scale(in_n, out_n, scale, dtype)
    src = step * (dst + dtype.type(0.5)) - dtype.type(0.5)
    return src if cubic else np.maximum(src, dtype.type(0))


def _cubic_weights(t):
    a = _CUBIC_A

    def near(u):  # |u| <= 1
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u):  # 1 < |u| < 2
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    return (far(t + 1), near(t), near(1 - t), far(2 - t))


def _taps(mode, in_n, out_n, scale, align_corners, dtype):
    """(out_n, K) source indices and weights of each output along one axis, exactly the taps
    PyTorch's linear (K=2) and cubic (K=4) kernels read, zero weights included."""
    cubic = mode == "bicubic"
    src = _source(in_n, out_n, scale, align_corners, cubic, dtype)
    lo = np.minimum(np.floor(src).astype(np.int64), in_n - 1)
    t = np.clip(src - lo.astype(dtype), 0, 1)
    if cubic:
        idx = np.stack([np.clip(lo - 1 + k, 0, in_n - 1) for k in range(4)], 1)
        return idx, np.stack(_cubic_weights(t), 1).astype(dtype)
    hi = np.where(lo < in_n - 1, lo + 1, lo)
    return np.stack([lo, hi], 1), np.stack([1 - t, t], 1).astype(dtype)


def _weight_matrix(mode, in_n, out_n, scale, align_corners, dtype):
    """The (out_n, in_n) matrix that resizes one axis in a linear, cubic or area mode."""
    m = np.zeros((out_n, in_n), dtype=dtype)
    if mode == "area":  # adaptive average pooling: windows [floor(i*in/out), ceil((i+1)*in/out))
        for i in range(out_n):
            lo, hi = (i * in_n) // out_n, -((-(i + 1) * in_n) // out_n)
            m[i, lo:hi] = 1.0 / (hi - lo)
        return m
    idx, w = _taps(mode, in_n, out_n, scale, align_corners, dtype)
    np.add.at(m, (np.arange(out_n)[:, None], idx), w)
    return m


def _along(x, axis, fn):
    """Apply `fn` to the last axis of `x` moved from `axis`, and move it back."""
    if axis == x.ndim - 1:
        return fn(x)
    return fn(x.movedim(axis, -1)).movedim(-1, axis)


def interpolate(
    input,
    size=None,
    scale_factor=None,
    mode="nearest",
    align_corners=None,
    recompute_scale_factor=None,
    antialias=False,
):
    """Resize the spatial dims of an (N, C, *spatial) tensor to `size` or by `scale_factor`.

    Args:
        input: a 3-D (linear), 4-D (bilinear, bicubic) or 5-D (trilinear) tensor; nearest,
            nearest-exact and area take any of them.
        size: output spatial size, an int or one int per spatial dim.
        scale_factor: multiplier per spatial dim (output size floor(in * scale)).
        mode: "nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear" or
            "area".
        align_corners: for the interpolating modes, map corner pixel centres onto each other
            (default False).
        recompute_scale_factor: if True, the kernels use in/out instead of `scale_factor`.
        antialias: not supported (only False).

    Returns:
        The resized tensor, differentiable in `input`.

    >>> x = tg.tensor([[[0.0, 1.0, 2.0]]])
    >>> interpolate(x, size=5, mode="linear", align_corners=True).numpy()
    array([[[0. , 0.5, 1. , 1.5, 2. ]]], dtype=float32)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    if input.ndim not in (3, 4, 5) or mode not in _MODES:
        raise _mode_error(input.ndim, mode)
    out_sizes, scales = _output_plan(input, size, scale_factor, mode, recompute_scale_factor)
    if antialias:
        if mode not in ("bilinear", "bicubic") or input.ndim != 4:
            raise ValueError(
                "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
                "requires a 4-D tensor as input"
            )
        raise NotImplementedError(
            "interpolate: antialias=True is not supported; resize without it (or blur first)"
        )
    needs = _MODES[mode]
    if needs is not None and needs != input.ndim - 2:
        if mode == "bicubic":  # PyTorch words this one as an unsupported mode
            raise _mode_error(input.ndim, mode)
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {needs + 2}D input"
        )
    spatial = tuple(input.shape[2:])
    if min(spatial) <= 0 or (min(out_sizes) <= 0 and mode != "area"):
        names = ("D", "H", "W")[3 - len(spatial) :]
        given = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        want = ", ".join(f"{n}: {s}" for n, s in zip(names, out_sizes))
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({given}) output ({want})"
        )
    if mode not in ("nearest", "nearest-exact") and input.dtype.kind != "f":
        raise RuntimeError(
            f"interpolate: mode {mode!r} needs a floating-point input, got dtype {input.dtype}; "
            "cast with .float() first"
        )
    # a weight matrix mixes every input of a row into each output, and 0 * inf is NaN: with
    # non-finite values, sum only the taps PyTorch's kernels read (as they do)
    finite = mode in ("nearest", "nearest-exact") or bool(np.isfinite(input._data).all())
    out = input
    for axis, (in_n, out_n, scale) in enumerate(zip(spatial, out_sizes, scales), start=2):
        if in_n == out_n and mode not in ("nearest", "nearest-exact", "bicubic"):
            continue  # PyTorch copies an axis that keeps its size, whatever the scale
        if mode in ("nearest", "nearest-exact"):
            exact, legacy = mode == "nearest-exact", mode == "nearest" and input.ndim == 4
            out = _nearest_along(out, axis, _nearest_index(in_n, out_n, scale, exact, legacy))
            continue
        dtype = np.dtype(input.dtype)
        if finite or mode == "area":
            m = _weight_matrix(mode, in_n, out_n, scale, align_corners, dtype)
            mt = _wrap(np.ascontiguousarray(m.T))
            out = _along(out, axis, lambda t, mt=mt: matmul(t, mt))
        else:
            out = _taps_along(out, axis, *_taps(mode, in_n, out_n, scale, align_corners, dtype))
    return out


def _nearest_along(x, axis, idx):
    """Pick rows `idx` along `axis`; a whole-number upscale repeats each row (faster both ways)."""
    in_n = x.shape[axis]
    r = len(idx) // in_n
    if r > 1 and len(idx) == r * in_n and np.array_equal(idx, np.arange(len(idx)) // r):
        return repeat_interleave(x, r, axis)
    return index_select(x, axis, _wrap(idx))


def _taps_along(x, axis, idx, weights):
    """`x` resized along `axis` as a weighted sum of gathered rows, tap by tap."""
    shape = [1] * x.ndim
    shape[axis] = idx.shape[0]
    out = None
    for j in range(idx.shape[1]):
        term = index_select(x, axis, _wrap(idx[:, j])) * _wrap(weights[:, j].reshape(shape))
        out = term if out is None else out + term
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated PyTorch alias of `interpolate` (same arguments, no recompute flag)."""
    warnings.warn(
        "nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated PyTorch alias of `interpolate(input, size, scale_factor, mode="nearest")`;
    warns as PyTorch does.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_nearest(tg.ones(1, 1, 2, 2), scale_factor=2).shape
    (1, 1, 4, 4)
    """
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated PyTorch alias of `interpolate(..., mode="bilinear", align_corners=True)`
    for (N, C, H, W) input; warns as PyTorch does.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_bilinear(tg.tensor([[[[0.0, 1.0]]]]), size=(1, 3)).numpy()
    array([[[[0. , 0.5, 1. ]]]], dtype=float32)
    """
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _check_factor(fn, name, factor):
    if not _is_int(factor) or factor <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {factor}")


def _check_rank(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < 3:
        raise RuntimeError(
            f"{fn} expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )


def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C*r*r, H, W) into (*, C, H*r, W*r): sub-pixel convolution's last step.

    >>> pixel_shuffle(tg.randn(1, 8, 3, 3), 2).shape
    (1, 2, 6, 6)
    """
    _check_rank("pixel_shuffle", input)
    _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Rearrange (*, C, H*r, W*r) into (*, C*r*r, H, W): the inverse of `pixel_shuffle`.

    >>> pixel_unshuffle(tg.randn(1, 2, 6, 6), 2).shape
    (1, 8, 3, 3)
    """
    _check_rank("pixel_unshuffle", input)
    _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    for what, axis, n_ in (("height", -2, h), ("width", -1, w)):
        if n_ % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                f"input.size({axis})={n_} is not divisible by {r}"
            )
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
