"""MegEngine's layers as tapegrad.nn layers with MegEngine's arguments and defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .... import nn as _nn
from ..functional import nn as _Fnn
from .module import Module

__all__ = [
    "Linear",
    "Conv2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Dropout",
    "Sequential",
    "Embedding",
    "MaxPool2d",
    "AvgPool2d",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "LeakyReLU",
    "GELU",
    "SiLU",
    "Softmax",
    "Identity",
    "LayerNorm",
    "Elemwise",
]


class Linear(Module, _nn.Linear):
    """`y = x @ weight.T + bias`; weight (out_features, in_features)."""

    def __init__(
        self, in_features, out_features, bias=True, compute_mode="default", name=None, **kwargs
    ) -> None:
        super().__init__(in_features, out_features, bias, name=name)


class Conv2d(Module, _nn.Conv2d):
    """2-D convolution over NCHW input (bias kept as (out_channels,), not (1, C, 1, 1))."""

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
        conv_mode="cross_correlation",
        compute_mode="default",
        padding_mode="zeros",
        name=None,
        **kwargs,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode=padding_mode,
            name=name,
        )


class _BatchNorm(Module):
    """MegEngine's BatchNorm arguments on the core BatchNorm that follows this class in the
    MRO: one place for the momentum convention and the state dict keys of BatchNorm1d and
    BatchNorm2d."""

    def __init__(self, num_features, eps, momentum, affine, track_running_stats, name) -> None:
        super().__init__(
            num_features,
            eps=eps,
            momentum=1.0 - momentum,
            affine=affine,
            track_running_stats=track_running_stats,
            name=name,
        )
        _no_batch_count(self)


class BatchNorm2d(_BatchNorm, _nn.BatchNorm2d):
    """Batch normalization of NCHW input; `momentum=0.9` keeps 90% of the running statistics
    (PyTorch's momentum is the share of the new batch: 1 - 0.9)."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.9,
        affine=True,
        track_running_stats=True,
        freeze=False,
        name=None,
        **kwargs,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, name)
        self._freeze = freeze

    def forward(self, x):
        if self._freeze:
            was = self.training
            self.training = False
            try:
                return super().forward(x)
            finally:
                self.training = was
        return super().forward(x)


class BatchNorm1d(_BatchNorm, _nn.BatchNorm1d):
    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.9,
        affine=True,
        track_running_stats=True,
        name=None,
        **kwargs,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, name)


def _no_batch_count(bn) -> None:
    # MegEngine's BatchNorm has no batch counter (its momentum is always given): keep the
    # core's counter out of state_dict, so state dicts match MegEngine's keys
    if "num_batches_tracked" in bn._buffers:
        bn._non_persistent.add("num_batches_tracked")


class Dropout(Module):
    """Zero each element with probability `drop_prob` in training mode (`model.train()`)."""

    def __init__(self, drop_prob=0.0, name=None, **kwargs) -> None:
        super().__init__(name=name)
        self.drop_prob = drop_prob

    def forward(self, x):
        return _Fnn.dropout(x, self.drop_prob, training=self.training)


class Sequential(Module, _nn.Sequential):
    """Modules applied in order: `M.Sequential(M.Linear(2, 8), M.ReLU(), M.Linear(8, 1))`."""

    def __init__(self, *args, name=None) -> None:
        super().__init__(*args, name=name)


class Embedding(Module, _nn.Embedding):
    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=None,
        initial_weight=None,
        freeze=False,
        name=None,
        **kwargs,
    ) -> None:
        super().__init__(num_embeddings, embedding_dim, name=name)
        if initial_weight is not None:
            self.weight.data = initial_weight


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, name=None, **kwargs) -> None:
        super().__init__(name=name)
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return _Fnn.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(Module):
    """Average pooling; padding is left out of the average by default (MegEngine)."""

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        mode="average_count_exclude_padding",
        name=None,
        **kwargs,
    ) -> None:
        super().__init__(name=name)
        self.kernel_size, self.stride, self.padding, self.mode = kernel_size, stride, padding, mode

    def forward(self, x):
        return _Fnn.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.mode)


class _Act(Module):
    if TYPE_CHECKING:  # each subclass's function, a staticmethod (this class has none)

        @staticmethod
        def _fn(x: Any) -> Any: ...

    else:
        _fn = None

    def forward(self, x):
        return type(self)._fn(x)


class ReLU(_Act):
    _fn = staticmethod(_Fnn.relu)


class Sigmoid(_Act):
    _fn = staticmethod(_Fnn.sigmoid)


class Tanh(_Act):
    @staticmethod
    def _fn(x):
        import tapegrad as tg

        return tg.tanh(x)


class GELU(_Act):
    _fn = staticmethod(_Fnn.gelu)


class SiLU(_Act):
    _fn = staticmethod(_Fnn.silu)


class Identity(_Act):
    @staticmethod
    def _fn(x):
        return x


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, name=None) -> None:
        super().__init__(name=name)
        self.negative_slope = negative_slope

    def forward(self, x):
        return _Fnn.leaky_relu(x, self.negative_slope)


class Softmax(Module):
    def __init__(self, axis=None, name=None) -> None:
        super().__init__(name=name)
        self.axis = axis

    def forward(self, x):
        return _Fnn.softmax(x, self.axis)


class LayerNorm(Module, _nn.LayerNorm):
    def __init__(self, normalized_shape, eps=1e-5, affine=True, name=None, **kwargs) -> None:
        super().__init__(normalized_shape, eps=eps, elementwise_affine=affine, name=name)


def _elemwise_modes() -> dict:
    """MegEngine's Elemwise mode names (upper case) -> the facade function they compute."""
    from .. import functional as F

    def relu(x):
        return _Fnn.relu(x)

    return {
        "ADD": F.add,
        "SUB": F.sub,
        "MUL": F.mul,
        "TRUE_DIV": F.div,
        "FLOOR_DIV": F.floor_div,
        "MOD": F.mod,
        "POW": F.pow,
        "MAX": F.maximum,
        "MIN": F.minimum,
        "NEGATE": F.neg,
        "ABS": F.abs,
        "EXP": F.exp,
        "LOG": F.log,
        "SIN": F.sin,
        "COS": F.cos,
        "TANH": F.tanh,
        "SIGMOID": _Fnn.sigmoid,
        "RELU": relu,
        "H_SWISH": _Fnn.hswish,
        "LT": F.less,
        "LEQ": F.less_equal,
        "EQ": F.equal,
        "FUSE_ADD_RELU": lambda x, y: relu(x + y),
        "FUSE_ADD_SIGMOID": lambda x, y: _Fnn.sigmoid(x + y),
        "FUSE_ADD_TANH": lambda x, y: F.tanh(x + y),
        "FUSE_MUL_ADD3": lambda x, y, z: x * y + z,
    }


class Elemwise(Module):
    """One elementwise op named by MegEngine's mode (`"add"`, `"h_swish"`,
    `"fuse_add_relu"`..., any case) as a module: `Elemwise("add")(x, y)`.

        >>> import tapegrad.compat.megengine.module as M
        >>> M.Elemwise("fuse_add_relu")(mge.tensor([1.0, -3.0]), mge.tensor([1.0, 1.0]))
        Tensor([2. 0.], device=cpu)
    """

    def __init__(self, method: str, name=None) -> None:
        super().__init__(name=name)
        modes = _elemwise_modes()
        mode = str(method).upper()
        if mode not in modes:
            raise ValueError(
                f"Elemwise: mode {method!r} is not supported; use one of "
                f"{', '.join(m.lower() for m in sorted(modes))}"
            )
        self.method = mode
        self._op = modes[mode]

    def forward(self, *inps):
        return self._op(*inps)
