"""Gluon's convolution and pooling layers (NCHW / NCW) on tapegrad's functional ops."""
from __future__ import annotations

from ..block import HybridBlock, block_args
from .activations import activation_fn

__all__ = ["Conv1D", "Conv2D", "MaxPool1D", "MaxPool2D", "AvgPool1D", "AvgPool2D",
           "GlobalAvgPool2D", "GlobalMaxPool2D"]


def _F():  # noqa: N802
    import tapegrad as tg

    return tg.nn.functional


def _tuple(v, n):
    return (int(v),) * n if isinstance(v, int) else tuple(int(x) for x in v)


def _check_layout(layout, expected, name):
    if layout != expected:
        raise ValueError(
            f"{name}: layout {layout!r} is not supported by the MXNet facade; use {expected!r} "
            "(transpose the input first)"
        )


class _Conv(HybridBlock):
    _dims = 2
    _layout = "NCHW"

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout=None, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        n = self._dims
        _check_layout(layout or self._layout, self._layout, type(self).__name__)
        self._channels, self._in_channels, self._groups = channels, in_channels, groups
        self._kernel = _tuple(kernel_size, n)
        self._strides, self._padding = _tuple(strides, n), _tuple(padding, n)
        self._dilation = _tuple(dilation, n)
        self.weight = self.params.get("weight", shape=(channels, in_channels // groups) + self._kernel,
                                init=weight_initializer, allow_deferred_init=True)
        self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                              allow_deferred_init=True) if use_bias else None
        self.act = activation_fn(activation) if activation is not None else None

    def forward(self, x):
        if self.weight._var is None:
            self.weight.shape = (self._channels, x.shape[1] // self._groups) + self._kernel
            self.weight._finish_deferred_init()
        bias = None
        if self.bias is not None:
            self.bias._finish_deferred_init()
            bias = self.bias.data()
        conv = _F().conv2d if self._dims == 2 else _F().conv1d
        out = conv(x, self.weight.data(), bias, stride=self._strides, padding=self._padding,
                   dilation=self._dilation, groups=self._groups)
        return self.act(out) if self.act is not None else out

    def _repr_body(self) -> str:
        return (f"{self.weight.shape[1] * self._groups or None} -> {self._channels}, "
                f"kernel_size={self._kernel}, stride={self._strides}")


class Conv2D(_Conv):
    """2-D convolution over NCHW input; weight shape (channels, in_channels/groups, kh, kw)."""


class Conv1D(_Conv):
    """1-D convolution over NCW input."""

    _dims = 1
    _layout = "NCW"


class _Pool(HybridBlock):
    _dims = 2
    _layout = "NCHW"
    _kind = "max"

    def __init__(self, pool_size=2, strides=None, padding=0, layout=None, ceil_mode=False,
                 count_include_pad=True, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        n = self._dims
        _check_layout(layout or self._layout, self._layout, type(self).__name__)
        self._size = _tuple(pool_size, n)
        self._strides = self._size if strides is None else _tuple(strides, n)
        self._padding = _tuple(padding, n)
        self._ceil, self._include_pad = ceil_mode, count_include_pad

    def forward(self, x):
        F = _F()  # noqa: N806
        if self._kind == "max":
            fn = F.max_pool2d if self._dims == 2 else F.max_pool1d
            return fn(x, self._size, self._strides, self._padding, ceil_mode=self._ceil)
        fn = F.avg_pool2d if self._dims == 2 else F.avg_pool1d
        return fn(x, self._size, self._strides, self._padding, ceil_mode=self._ceil,
                  count_include_pad=self._include_pad)

    def _repr_body(self) -> str:
        return f"size={self._size}, stride={self._strides}, padding={self._padding}"


class MaxPool2D(_Pool):
    """Max pooling over NCHW input (stride defaults to pool_size, as MXNet)."""


class AvgPool2D(_Pool):
    """Average pooling over NCHW input (padding counted, as MXNet's default)."""

    _kind = "avg"


class MaxPool1D(_Pool):
    _dims, _layout = 1, "NCW"


class AvgPool1D(_Pool):
    _dims, _layout, _kind = 1, "NCW", "avg"


class GlobalAvgPool2D(HybridBlock):
    """The mean over H and W, keeping them as size-1 axes: (N, C, 1, 1)."""

    def forward(self, x):
        return x.mean(axis=(2, 3), keepdims=True)


class GlobalMaxPool2D(HybridBlock):
    """The maximum over H and W, keeping them as size-1 axes: (N, C, 1, 1)."""

    def forward(self, x):
        import tapegrad as tg

        return tg.amax(x, dim=(2, 3), keepdim=True)
