"""tg.nn.functional: convolution and pooling, with PyTorch's signatures.

Each function checks its arguments (rank, channels, sizes) and calls one op of the table
(ops/conv.py). Unbatched inputs ((C, H, W) for the 2-D functions) work as in PyTorch.

    >>> import tapegrad as tg
    >>> import tapegrad.nn.functional as F
    >>> x = tg.randn(8, 3, 32, 32)
    >>> F.max_pool2d(F.conv2d(x, tg.randn(16, 3, 3, 3), padding=1), 2).shape
    (8, 16, 16, 16)
"""

from __future__ import annotations

from .. import backend
from ..ops.conv import _conv, _conv_transpose, _out_size
from ..ops.pool import _adaptive_avg_pool, _avg_pool, _max_pool, max_pool_indices
from ..tensor import Tensor, _wrap

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
]

_LAYOUT = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


# ---------------------------------------------------------------- argument checks
def _tuple(v, nd, name, fn):
    if isinstance(v, int):
        return (v,) * nd
    try:
        t = tuple(int(a) for a in v)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an int or a tuple of {nd} ints, got {v!r}") from None
    if len(t) == 1:
        return t * nd
    if len(t) != nd:
        raise ValueError(f"{fn}: {name} must be an int or a tuple of {nd} ints, got {v!r}")
    return t


def _batched(input, nd, fn):
    """(input with a batch dim, whether one was added). Checks the rank."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim == nd + 2:
        return input, False
    if input.ndim == nd + 1:
        return input.reshape((1,) + tuple(input.shape)), True
    raise ValueError(
        f"{fn}: expected input with {nd + 2} dims {_LAYOUT[nd]} (or {nd + 1} without the batch), "
        f"got shape {tuple(input.shape)}"
    )


def _unbatch(out, squeezed):
    return out.reshape(tuple(out.shape[1:])) if squeezed else out


def _check_positive(values, name, fn):
    if any(v <= 0 for v in values):
        raise ValueError(f"{fn}: {name} must be positive, got {values}")


def _conv_padding(padding, nd, kernel, stride, dilation, fn):
    """(low, high) pairs from an int, a tuple, 'valid' or 'same' (extra on the high side)."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(
                    f"{fn}: padding='same' is not supported for strided convolutions "
                    f"(stride={stride}); pass explicit padding"
                )
            total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=False)]
            return tuple((t // 2, t - t // 2) for t in total)
        raise ValueError(
            f"{fn}: padding must be an int, a tuple, 'valid' or 'same', got {padding!r}"
        )
    pad = _tuple(padding, nd, "padding", fn)
    if any(p < 0 for p in pad):
        raise ValueError(f"{fn}: padding must be non-negative, got {pad}")
    return tuple((p, p) for p in pad)


def _check_conv(input, weight, bias, groups, nd, fn, transposed=False):
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fn}: weight must be a Tensor, got {type(weight).__name__}")
    if weight.ndim != nd + 2:
        raise ValueError(
            f"{fn}: expected weight with {nd + 2} dims, got shape {tuple(weight.shape)}"
        )
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
    c = input.shape[1]
    if transposed:
        if weight.shape[0] != c:
            raise ValueError(
                f"{fn}: weight of shape {tuple(weight.shape)} expects in_channels "
                f"{weight.shape[0]} but input has {c} channels (input shape {tuple(input.shape)})"
            )
        if c % groups:
            raise ValueError(f"{fn}: in_channels {c} is not divisible by groups={groups}")
        out_c = weight.shape[1] * groups
    else:
        if c != weight.shape[1] * groups:
            raise ValueError(
                f"{fn}: weight of shape {tuple(weight.shape)} with groups={groups} expects "
                f"in_channels {weight.shape[1] * groups} but input has {c} channels "
                f"(input shape {tuple(input.shape)})"
            )
        if weight.shape[0] % groups:
            raise ValueError(
                f"{fn}: out_channels {weight.shape[0]} is not divisible by groups={groups}"
            )
        out_c = weight.shape[0]
    if bias is not None:
        if not isinstance(bias, Tensor):
            raise TypeError(f"{fn}: bias must be a Tensor or None, got {type(bias).__name__}")
        if tuple(bias.shape) != (out_c,):
            raise ValueError(
                f"{fn}: bias must have shape ({out_c},) (one per output channel), "
                f"got {tuple(bias.shape)}"
            )
    if input.dtype != weight.dtype:
        raise TypeError(
            f"{fn}: input dtype {input.dtype} and weight dtype {weight.dtype} differ; "
            "convert one (x.to(dtype) / module.to(dtype))"
        )


# ---------------------------------------------------------------- convolution
def _convnd(nd, fn, input, weight, bias, stride, padding, dilation, groups):
    x, squeezed = _batched(input, nd, fn)
    _check_conv(x, weight, bias, groups, nd, fn)
    stride = _tuple(stride, nd, "stride", fn)
    dilation = _tuple(dilation, nd, "dilation", fn)
    _check_positive(stride, "stride", fn)
    _check_positive(dilation, "dilation", fn)
    kernel = tuple(weight.shape[2:])
    pad = _conv_padding(padding, nd, kernel, stride, dilation, fn)
    for i in range(nd):
        size = x.shape[2 + i] + pad[i][0] + pad[i][1]
        if size < dilation[i] * (kernel[i] - 1) + 1:
            raise ValueError(
                f"{fn}: input of shape {tuple(input.shape)} (padded size {size} in spatial dim "
                f"{i}) is smaller than the kernel {kernel} with dilation {dilation}"
            )
    out = _conv(x, weight, bias, stride=stride, padding=pad, dilation=dilation, groups=groups)
    return _unbatch(out, squeezed)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D cross-correlation. input (N, C_in, L), weight (C_out, C_in/groups, k), bias (C_out,).

    `padding`: int, tuple, 'valid' or 'same'. `F.conv1d(x, w, padding='same')`."""
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D cross-correlation, as torch.nn.functional.conv2d (one GEMM forward and backward).

    input (N, C_in, H, W), weight (C_out, C_in/groups, kH, kW), bias (C_out,) or None;
    stride/padding/dilation an int or a pair; padding also 'valid' or 'same'.
    `F.conv2d(x, w, b, stride=2, padding=1)`."""
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D cross-correlation. input (N, C_in, D, H, W), weight (C_out, C_in/groups, kD, kH, kW)."""
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(
    nd, fn, input, weight, bias, stride, padding, output_padding, groups, dilation, output_size=None
):
    x, squeezed = _batched(input, nd, fn)
    _check_conv(x, weight, bias, groups, nd, fn, transposed=True)
    stride = _tuple(stride, nd, "stride", fn)
    dilation = _tuple(dilation, nd, "dilation", fn)
    _check_positive(stride, "stride", fn)
    _check_positive(dilation, "dilation", fn)
    if isinstance(padding, str):
        raise ValueError(
            f"{fn}: padding must be an int or a tuple (strings are only for conv), got {padding!r}"
        )
    pad = _tuple(padding, nd, "padding", fn)
    out_pad = _tuple(output_padding, nd, "output_padding", fn)
    kernel = tuple(weight.shape[2:])
    base = tuple(
        (x.shape[2 + i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (kernel[i] - 1) + 1
        for i in range(nd)
    )
    if output_size is not None:
        size = tuple(output_size)[-nd:]
        out_pad = tuple(s - b for s, b in zip(size, base, strict=False))
    for i in range(nd):
        if not 0 <= out_pad[i] < max(stride[i], dilation[i]):
            raise ValueError(
                f"{fn}: output_padding {out_pad} must be smaller than stride {stride} or dilation "
                f"{dilation} (and non-negative)"
            )
        if base[i] + out_pad[i] <= 0:
            raise ValueError(
                f"{fn}: the output would be empty (size {base[i] + out_pad[i]} in spatial "
                f"dim {i}); reduce padding"
            )
    out = _conv_transpose(
        x,
        weight,
        bias,
        stride=stride,
        padding=tuple((p, p) for p in pad),
        dilation=dilation,
        groups=groups,
        out_shape=tuple(b + o for b, o in zip(base, out_pad, strict=False)),
    )
    return _unbatch(out, squeezed)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """1-D transposed convolution. weight (C_in, C_out/groups, k)."""
    return _conv_transposend(
        1,
        "conv_transpose1d",
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """2-D transposed convolution (the gradient of conv2d wrt its input), as PyTorch's.

    input (N, C_in, H, W), weight (C_in, C_out/groups, kH, kW). Output size
    (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.
    `F.conv_transpose2d(x, w, stride=2, output_padding=1)`."""
    return _conv_transposend(
        2,
        "conv_transpose2d",
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1
):
    """3-D transposed convolution, as PyTorch's. input (N, C_in, D, H, W), weight
    (C_in, C_out/groups, kD, kH, kW); each output size as conv_transpose2d's.

    >>> conv_transpose3d(tg.ones(1, 2, 2, 2, 2), tg.ones(2, 3, 2, 2, 2), stride=2).shape
    (1, 3, 4, 4, 4)
    """
    return _conv_transposend(
        3,
        "conv_transpose3d",
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


# ---------------------------------------------------------------- pooling
def _pool_args(nd, fn, input, kernel_size, stride, padding, dilation, ceil_mode):
    x, squeezed = _batched(input, nd, fn)
    kernel = _tuple(kernel_size, nd, "kernel_size", fn)
    stride = (
        kernel
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else _tuple(stride, nd, "stride", fn)
    )
    pad = _tuple(padding, nd, "padding", fn)
    dilation = _tuple(dilation, nd, "dilation", fn)
    _check_positive(kernel, "kernel_size", fn)
    _check_positive(stride, "stride", fn)
    _check_positive(dilation, "dilation", fn)
    for p, k in zip(pad, kernel, strict=False):
        if p < 0 or p > k // 2:
            raise ValueError(
                f"{fn}: padding {pad} must be non-negative and at most half the kernel size "
                f"{kernel}"
            )
    pairs, extra = [], []
    for i in range(nd):
        size = x.shape[2 + i]
        span = dilation[i] * (kernel[i] - 1) + 1
        if size + 2 * pad[i] < span:
            raise ValueError(
                f"{fn}: input of shape {tuple(input.shape)} is too small for kernel {kernel} "
                f"(dilation {dilation}, padding {pad})"
            )
        n_out = _out_size(size, kernel[i], stride[i], pad[i], pad[i], dilation[i])
        e = 0
        if ceil_mode:
            n_ceil = -(-(size + 2 * pad[i] - span) // stride[i]) + 1
            if (n_ceil - 1) * stride[i] >= size + pad[i]:  # the last window must start inside
                n_ceil -= 1
            e = (
                max(0, (n_ceil - 1) * stride[i] + span - (size + 2 * pad[i]))
                if n_ceil > n_out
                else 0
            )
        pairs.append((pad[i], pad[i] + e))
        extra.append(e)
    return x, squeezed, kernel, stride, tuple(pairs), dilation, tuple(extra)


def _max_poolnd(nd, fn, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, squeezed, kernel, stride, pad, dilation, _ = _pool_args(
        nd, fn, input, kernel_size, stride, padding, dilation, ceil_mode
    )
    out = _unbatch(
        _max_pool(x, kernel=kernel, stride=stride, padding=pad, dilation=dilation), squeezed
    )
    if not return_indices:
        return out
    xp = backend.array_module(x._data)
    idx = max_pool_indices(xp, x._data, kernel, stride, pad, dilation)
    return out, _unbatch(_wrap(idx), squeezed)


def max_pool1d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """1-D max pooling over (N, C, L); the gradient goes to the first maximum of each window."""
    return _max_poolnd(
        1, "max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """2-D max pooling, as PyTorch's (stride defaults to kernel_size; padding counts as -inf).

    The gradient goes to the first maximum of each window (ties as PyTorch).
    return_indices=True also returns, per output, the flat index (h * W + w) of that maximum.
    `F.max_pool2d(x, 2)` halves H and W."""
    return _max_poolnd(
        2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool3d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), as PyTorch's.

    return_indices=True also returns the flat index (d * H * W + h * W + w) of each maximum.

    >>> max_pool3d(tg.randn(1, 2, 4, 4, 4), 2).shape
    (1, 2, 2, 2, 2)
    """
    return _max_poolnd(
        3, "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """`max_pool1d` that always returns (output, indices), as PyTorch's.

    >>> max_pool1d_with_indices(tg.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)[1].numpy()
    array([[1, 2]])
    """
    return _max_poolnd(
        1, "max_pool1d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode, True
    )


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """`max_pool2d` that always returns (output, flat indices h * W + w), as PyTorch's.

    >>> max_pool2d_with_indices(tg.arange(16.0).reshape(1, 4, 4), 2)[1].numpy()
    array([[[ 5,  7],
            [13, 15]]])
    """
    return _max_poolnd(
        2, "max_pool2d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode, True
    )


def max_pool3d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """`max_pool3d` that always returns (output, flat indices d * H * W + h * W + w).

    >>> max_pool3d_with_indices(tg.arange(8.0).reshape(1, 2, 2, 2), 2)[1].numpy()
    array([[[[7]]]])
    """
    return _max_poolnd(
        3, "max_pool3d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode, True
    )


def _avg_poolnd(
    nd, fn, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    x, squeezed, kernel, stride, pad, _, extra = _pool_args(
        nd, fn, input, kernel_size, stride, padding, 1, ceil_mode
    )
    if divisor_override is not None and (
        not isinstance(divisor_override, int) or divisor_override <= 0
    ):
        raise ValueError(f"{fn}: divisor_override must be a positive int, got {divisor_override!r}")
    params = {"kernel": kernel, "stride": stride, "padding": pad}
    if not count_include_pad:
        params["count_include_pad"] = False
    if any(extra):
        params["ceil_extra"] = extra
    if divisor_override:
        params["divisor_override"] = divisor_override
    return _unbatch(_avg_pool(x, **params), squeezed)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling over (N, C, L)."""
    return _avg_poolnd(
        1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode, count_include_pad, None
    )


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """2-D average pooling, as PyTorch's. `count_include_pad=False` divides by the number of
    real (unpadded) elements in each window. `F.avg_pool2d(x, 3, stride=2, padding=1)`."""
    return _avg_poolnd(
        2,
        "avg_pool2d",
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """3-D average pooling over (N, C, D, H, W), as PyTorch's (options as avg_pool2d's).

    >>> avg_pool3d(tg.ones(1, 1, 4, 4, 4), 2).shape
    (1, 1, 2, 2, 2)
    """
    return _avg_poolnd(
        3,
        "avg_pool3d",
        input,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def _adaptive(nd, fn, input, output_size):
    x, squeezed = _batched(input, nd, fn)
    size = (
        (output_size,) * nd
        if isinstance(output_size, int) or output_size is None
        else tuple(output_size)
    )
    if len(size) != nd:
        raise ValueError(
            f"{fn}: output_size must be an int or a tuple of {nd} ints, got {output_size!r}"
        )
    size = tuple(x.shape[2 + i] if s is None else int(s) for i, s in enumerate(size))
    _check_positive(size, "output_size", fn)
    return _unbatch(_adaptive_avg_pool(x, out_size=size), squeezed)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length (windows as PyTorch: floor/ceil bounds)."""
    return _adaptive(1, "adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (H_out, W_out) whatever the input size; None keeps that size.

    `F.adaptive_avg_pool2d(x, 1)` is global average pooling."""
    return _adaptive(2, "adaptive_avg_pool2d", input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) to a fixed (D_out, H_out, W_out); None keeps a size.

    >>> adaptive_avg_pool3d(tg.ones(1, 2, 5, 6, 7), (2, None, 3)).shape
    (1, 2, 2, 6, 3)
    """
    return _adaptive(3, "adaptive_avg_pool3d", input, output_size)
