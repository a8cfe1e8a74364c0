"""Gluon's convolution, transposed convolution, pooling and padding layers on tapegrad's
functional ops.

Channels-first layouts (NCW, NCHW, NCDHW) run directly; channels-last ones (NWC, NHWC,
NDHWC) move the channel axis first, compute, and move it back (the same numbers, in
MXNet's layout). 3-D pooling is separable (a box is a product of intervals): it pools
the depth axis, then height and width.
"""

from __future__ import annotations

from ..block import HybridBlock, block_args
from .activations import activation_fn

__all__ = [
    "Conv1D",
    "Conv2D",
    "Conv3D",
    "Conv1DTranspose",
    "Conv2DTranspose",
    "Conv3DTranspose",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "ReflectionPad2D",
]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tg():
    import tapegrad as tg

    return tg


def _F():  # noqa: N802
    return _tg().nn.functional


def _tuple(v, n):
    return (int(v),) * n if isinstance(v, int) else tuple(int(x) for x in v)


def _channels_last(layout, dims, name) -> bool:
    """False for the channels-first layout of `dims` spatial axes, True for channels-last."""
    first, last = _LAYOUTS[dims]
    layout = layout or first
    if layout not in (first, last):
        raise ValueError(f"{name}: layout {layout!r} is not one of {first!r}, {last!r}")
    return layout == last


def _to_first(x, last: bool):
    return _tg().movedim(x, -1, 1) if last else x


def _to_last(x, last: bool):
    return _tg().movedim(x, 1, -1) if last else x


class _Conv(HybridBlock):
    _dims = 2
    _transpose = False

    def __init__(
        self,
        channels,
        kernel_size,
        strides=1,
        padding=0,
        dilation=1,
        groups=1,
        layout=None,
        activation=None,
        use_bias=True,
        weight_initializer=None,
        bias_initializer="zeros",
        in_channels=0,
        output_padding=0,
        adj=None,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        n = self._dims
        self._last = _channels_last(layout, n, type(self).__name__)
        self._channels, self._in_channels, self._groups = channels, in_channels, groups
        self._kernel = _tuple(kernel_size, n)
        self._strides, self._padding = _tuple(strides, n), _tuple(padding, n)
        self._dilation = _tuple(dilation, n)
        self._out_pad = _tuple(adj if adj is not None else output_padding, n)
        self.weight = self.params.get(
            "weight",
            shape=self._weight_shape(in_channels),
            init=weight_initializer,
            allow_deferred_init=True,
        )
        self.bias = (
            self.params.get(
                "bias", shape=(channels,), init=bias_initializer, allow_deferred_init=True
            )
            if use_bias
            else None
        )
        self.act = activation_fn(activation) if activation is not None else None

    @classmethod
    def _alias(cls) -> str:
        return "conv"

    def _weight_shape(self, in_channels):
        if self._transpose:  # (in, out / groups, *kernel), as MXNet's Deconvolution
            return (in_channels, self._channels // self._groups) + self._kernel
        return (self._channels, in_channels // self._groups) + self._kernel

    def _conv_fn(self):
        F = _F()  # noqa: N806
        if self._transpose:
            return {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: _conv_transpose3d}[self._dims]
        return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[self._dims]

    def forward(self, x):
        x = _to_first(x, self._last)
        if self.weight._var is None:
            self.weight.shape = self._weight_shape(x.shape[1])
            self.weight._finish_deferred_init()
        bias = None
        if self.bias is not None:
            self.bias._finish_deferred_init()
            bias = self.bias.data()
        extra = {"output_padding": self._out_pad} if self._transpose else {}
        out = self._conv_fn()(
            x,
            self.weight.data(),
            bias,
            stride=self._strides,
            padding=self._padding,
            dilation=self._dilation,
            groups=self._groups,
            **extra,
        )
        out = self.act(out) if self.act is not None else out
        return _to_last(out, self._last)

    def _repr_body(self) -> str:
        return (
            f"{self._in_channels or None} -> {self._channels}, "
            f"kernel_size={self._kernel}, stride={self._strides}"
        )


class Conv1D(_Conv):
    """1-D convolution (NCW, or NWC); weight (channels, in_channels/groups, k)."""

    _dims = 1


class Conv2D(_Conv):
    """2-D convolution (NCHW, or NHWC); weight (channels, in_channels/groups, kh, kw)."""


class Conv3D(_Conv):
    """3-D convolution (NCDHW, or NDHWC)."""

    _dims = 3


class Conv1DTranspose(_Conv):
    """1-D transposed convolution; weight (in_channels, channels/groups, k)."""

    _dims, _transpose = 1, True


class Conv2DTranspose(_Conv):
    """2-D transposed convolution (`output_padding` adds to one side of the output)."""

    _transpose = True


class Conv3DTranspose(_Conv):
    """3-D transposed convolution (NCDHW, or NDHWC); weight (in_channels, channels/groups,
    kd, kh, kw)."""

    _dims, _transpose = 3, True


def _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """The 3-D case of tg.nn.functional's transposed convolution (which names no public
    conv_transpose3d); the conv_transpose op handles any number of spatial dims."""
    from .....nn.functional_conv import _conv_transposend

    return _conv_transposend(
        3, "Conv3DTranspose", x, weight, bias, stride, padding, output_padding, groups, dilation
    )


# ------------------------------------------------------------------ pooling
def _pool_nd(x, kind, size, strides, padding, ceil, include_pad):
    """Pool the trailing len(size) axes of channels-first `x` (1, 2 or 3 of them)."""
    tg, F = _tg(), _F()  # noqa: N806
    dims = len(size)
    if dims == 3:  # depth first (as a 1-D pool), then height and width
        n, c, d, h, w = x.shape
        t = tg.reshape(tg.movedim(x, 2, -1), (n * c, h * w, d))
        t = _pool_nd(t, kind, size[:1], strides[:1], padding[:1], ceil, include_pad)
        d2 = t.shape[-1]
        t = tg.movedim(tg.reshape(t, (n, c, h, w, d2)), -1, 2)
        t = _pool_nd(
            tg.reshape(t, (n, c * d2, h, w)),
            kind,
            size[1:],
            strides[1:],
            padding[1:],
            ceil,
            include_pad,
        )
        return tg.reshape(t, (n, c, d2) + tuple(t.shape[-2:]))
    if kind == "max":
        fn = F.max_pool2d if dims == 2 else F.max_pool1d
        return fn(x, size, strides, padding, ceil_mode=ceil)
    fn = F.avg_pool2d if dims == 2 else F.avg_pool1d
    return fn(x, size, strides, padding, ceil_mode=ceil, count_include_pad=include_pad)


class _Pool(HybridBlock):
    _dims = 2
    _kind = "max"

    def __init__(
        self,
        pool_size=2,
        strides=None,
        padding=0,
        layout=None,
        ceil_mode=False,
        count_include_pad=True,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        n = self._dims
        self._last = _channels_last(layout, n, type(self).__name__)
        self._size = _tuple(pool_size, n)
        self._strides = self._size if strides is None else _tuple(strides, n)
        self._padding = _tuple(padding, n)
        self._ceil, self._include_pad = ceil_mode, count_include_pad

    @classmethod
    def _alias(cls) -> str:
        return "pool"

    def forward(self, x):
        out = _pool_nd(
            _to_first(x, self._last),
            self._kind,
            self._size,
            self._strides,
            self._padding,
            self._ceil,
            self._include_pad,
        )
        return _to_last(out, self._last)

    def _repr_body(self) -> str:
        return f"size={self._size}, stride={self._strides}, padding={self._padding}"


class MaxPool1D(_Pool):
    """Max pooling over NCW (or NWC) input (stride defaults to pool_size, as MXNet)."""

    _dims = 1


class MaxPool2D(_Pool):
    """Max pooling over NCHW (or NHWC) input (stride defaults to pool_size, as MXNet)."""


class MaxPool3D(_Pool):
    """Max pooling over NCDHW (or NDHWC) input."""

    _dims = 3


class AvgPool1D(_Pool):
    _dims, _kind = 1, "avg"


class AvgPool2D(_Pool):
    """Average pooling (padding counted unless count_include_pad=False, as MXNet)."""

    _kind = "avg"


class AvgPool3D(_Pool):
    _dims, _kind = 3, "avg"


class _GlobalPool(HybridBlock):
    """The mean (or maximum) over every spatial axis, kept as size-1 axes."""

    _dims = 2
    _kind = "avg"

    def __init__(self, layout=None, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._last = _channels_last(layout, self._dims, type(self).__name__)

    @classmethod
    def _alias(cls) -> str:
        return "pool"

    def forward(self, x):
        axes = tuple(range(1, 1 + self._dims)) if self._last else tuple(range(2, 2 + self._dims))
        if self._kind == "avg":
            return _tg().mean(x, dim=axes, keepdim=True)
        return _tg().amax(x, dim=axes, keepdim=True)


class GlobalAvgPool1D(_GlobalPool):
    _dims = 1


class GlobalAvgPool2D(_GlobalPool):
    """The mean over H and W, keeping them as size-1 axes: (N, C, 1, 1)."""


class GlobalAvgPool3D(_GlobalPool):
    _dims = 3


class GlobalMaxPool1D(_GlobalPool):
    _dims, _kind = 1, "max"


class GlobalMaxPool2D(_GlobalPool):
    """The maximum over H and W, keeping them as size-1 axes: (N, C, 1, 1)."""

    _kind = "max"


class GlobalMaxPool3D(_GlobalPool):
    _dims, _kind = 3, "max"


class ReflectionPad2D(HybridBlock):
    """Pad H and W of NCHW input by reflection (the edge is not repeated), `padding` on
    every side (an int) or as (top, bottom, left, right)."""

    def __init__(self, padding=0, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        if isinstance(padding, int):
            padding = (padding,) * 4
        elif len(padding) == 8:  # MXNet's pad_width: (0, 0, 0, 0, top, bottom, left, right)
            padding = tuple(padding[4:])
        self._pad = tuple(int(p) for p in padding)

    def forward(self, x):
        import numpy as np

        tg = _tg()
        top, bottom, left, right = self._pad
        for axis, (a, b) in ((2, (top, bottom)), (3, (left, right))):
            n = x.shape[axis]
            if a >= n or b >= n:
                raise ValueError(
                    f"ReflectionPad2D: padding {self._pad} must be smaller than "
                    f"the input's height and width {tuple(x.shape[2:])}"
                )
            idx = np.pad(np.arange(n), (a, b), mode="reflect")
            x = tg.index_select(x, axis, tg.tensor(idx))
        return x
