"""Convolution and pooling layers, with PyTorch's constructor arguments, parameter names,
shapes and default initialisation (so `load_state_dict` takes a PyTorch state dict).

    >>> import tapegrad as tg
    >>> net = tg.nn.Sequential(tg.nn.Conv2d(1, 8, 3, padding=1), tg.nn.ReLU(), tg.nn.MaxPool2d(2))
    >>> net(tg.randn(4, 1, 28, 28)).shape
    (4, 8, 14, 14)
"""

from __future__ import annotations

import math

from ..creation import uniform
from ..ops.shape import pad
from . import functional_conv as F
from . import init
from .module import Module, Parameter

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
]


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n, name, cls):
    if isinstance(v, bool):
        raise ValueError(f"{cls}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    if isinstance(v, int):
        return (v,) * n
    t = tuple(v)
    if len(t) != n or not all(isinstance(a, int) for a in t):
        raise ValueError(f"{cls}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def _uniform_param(shape, bound, dtype, device):
    return Parameter(uniform(-bound, bound, size=shape, dtype=dtype, device=device or "cpu"))


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        output_padding=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        cls, nd = type(self).__name__, self._nd
        for name, v in (
            ("in_channels", in_channels),
            ("out_channels", out_channels),
            ("groups", groups),
        ):
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"{cls}: {name} must be a positive int, got {v!r}")
        if in_channels % groups:
            raise ValueError(
                f"{cls}: in_channels ({in_channels}) must be divisible by groups ({groups})"
            )
        if out_channels % groups:
            raise ValueError(
                f"{cls}: out_channels ({out_channels}) must be divisible by groups ({groups})"
            )
        if padding_mode not in _PADDING_MODES or (self._transposed and padding_mode != "zeros"):
            allowed = (
                "'zeros'" if self._transposed else "'zeros', 'reflect', 'replicate', 'circular'"
            )
            raise ValueError(f"{cls}: padding_mode must be one of {allowed}, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ntuple(kernel_size, nd, "kernel_size", cls)
        self.stride = _ntuple(stride, nd, "stride", cls)
        self.dilation = _ntuple(dilation, nd, "dilation", cls)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd, "padding", cls)
        if isinstance(padding, str) and self._transposed:
            raise ValueError(f"{cls}: padding must be an int or a tuple, got {padding!r}")
        self.output_padding = _ntuple(output_padding, nd, "output_padding", cls)
        for name, v, low in (
            ("kernel_size", self.kernel_size, 1),
            ("stride", self.stride, 1),
            ("dilation", self.dilation, 1),
            ("output_padding", self.output_padding, 0),
            ("padding", () if isinstance(padding, str) else self.padding, 0),
        ):
            if any(a < low for a in v):
                raise ValueError(
                    f"{cls}: {name} must be {'positive' if low else 'non-negative'}, got {v}"
                )
        self.padding_mode = padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        # PyTorch's default: kaiming_uniform(a=sqrt(5)) = U(+-1/sqrt(fan_in)), fan_in from dim 1
        fan_in = shape[1] * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = _uniform_param(shape, bound, dtype, device)
        self.bias = _uniform_param((out_channels,), bound, dtype, device) if bias else None

    def reset_parameters(self) -> None:
        """Draw fresh weights and bias as the constructor does: U(+-1/sqrt(fan_in)), the
        weight first (PyTorch's kaiming_uniform(a=sqrt(5)) and its bias bound)."""
        w = self.weight
        fan_in = w.shape[1] * math.prod(w.shape[2:])
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        init.uniform_(w, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _input_and_padding(self, input):
        """padding_mode other than 'zeros': pad the input here (as PyTorch), convolve unpadded."""
        if self.padding_mode == "zeros":
            return input, self.padding
        cls, nd = type(self).__name__, self._nd
        pairs = F._conv_padding(self.padding, nd, self.kernel_size, self.stride, self.dilation, cls)
        flat = [v for pair in reversed(pairs) for v in pair]  # F.pad lists the last dim first
        return pad(input, flat, mode=self.padding_mode), 0

    def _conv(self, fn, input):
        x, padding = self._input_and_padding(input)
        return fn(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L). weight (C_out, C_in/groups, k), bias (C_out,).

    `tg.nn.Conv1d(16, 32, 3, padding='same')`."""

    _nd = 1

    def forward(self, input):
        return self._conv(F.conv1d, input)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W), as torch.nn.Conv2d.

    Args: in_channels, out_channels, kernel_size, stride=1, padding=0 (int, pair, 'same',
    'valid'), dilation=1, groups=1, bias=True. weight (C_out, C_in/groups, kH, kW).
    `tg.nn.Conv2d(3, 16, 3, padding=1)(tg.randn(8, 3, 32, 32)).shape == (8, 16, 32, 32)`."""

    _nd = 2

    def forward(self, input):
        return self._conv(F.conv2d, input)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W)."""

    _nd = 3

    def forward(self, input):
        return self._conv(F.conv3d, input)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            output_padding,
            device,
            dtype,
        )

    def forward(self, input, output_size=None):
        return F._conv_transposend(
            self._nd,
            type(self).__name__,
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self.output_padding,
            self.groups,
            self.dilation,
            output_size,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution. weight (C_in, C_out/groups, k)."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (learned upsampling), as torch.nn.ConvTranspose2d.

    weight (C_in, C_out/groups, kH, kW). `forward(x, output_size=None)` picks output_padding
    from a wanted output size. `tg.nn.ConvTranspose2d(16, 8, 2, stride=2)` doubles H and W."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W), as torch.nn.ConvTranspose3d.

    >>> tg.nn.ConvTranspose3d(4, 2, 2, stride=2)(tg.ones(1, 4, 3, 3, 3)).shape
    (1, 2, 6, 6, 6)
    """

    _nd = 3


# ---------------------------------------------------------------- pooling
class _PoolNd(Module):
    """Pooling modules: forward is `_pool(nd, name, input, *attributes named in _args)`."""

    _nd = 2
    _args: tuple = ()

    def _set_window(self, kernel_size, stride, padding):
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input):
        return type(self)._pool(
            self._nd, type(self).__name__, input, *[getattr(self, a) for a in self._args]
        )


class _MaxPoolNd(_PoolNd):
    _pool = staticmethod(F._max_poolnd)
    _args = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self._set_window(kernel_size, stride, padding)
        self.dilation, self.ceil_mode = dilation, ceil_mode
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L)."""

    _nd = 1


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling, as torch.nn.MaxPool2d (stride defaults to kernel_size).

    `tg.nn.MaxPool2d(2)` halves H and W; the gradient goes to the first maximum of a window."""

    _nd = 2


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over (N, C, D, H, W), as torch.nn.MaxPool3d.

    >>> tg.nn.MaxPool3d(2, return_indices=True)(tg.randn(1, 1, 4, 4, 4))[1].shape
    (1, 1, 2, 2, 2)
    """

    _nd = 3


class _AvgPoolNd(_PoolNd):
    _pool = staticmethod(F._avg_poolnd)
    _args = (
        "kernel_size",
        "stride",
        "padding",
        "ceil_mode",
        "count_include_pad",
        "divisor_override",
    )

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self._set_window(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over (N, C, L)."""

    _nd = 1

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling, as torch.nn.AvgPool2d. `tg.nn.AvgPool2d(3, stride=2, padding=1)`."""

    _nd = 2


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling over (N, C, D, H, W), as torch.nn.AvgPool3d.

    >>> tg.nn.AvgPool3d(2)(tg.ones(1, 1, 4, 4, 4)).shape
    (1, 1, 2, 2, 2)
    """

    _nd = 3


class _AdaptiveAvgPoolNd(_PoolNd):
    _pool = staticmethod(F._adaptive)
    _args = ("output_size",)

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed output length."""

    _nd = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed (H_out, W_out); `AdaptiveAvgPool2d(1)` is global pooling."""

    _nd = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling to a fixed (D_out, H_out, W_out); None keeps that size.

    >>> tg.nn.AdaptiveAvgPool3d((1, None, 2))(tg.ones(1, 3, 4, 5, 6)).shape
    (1, 3, 1, 5, 2)
    """

    _nd = 3
