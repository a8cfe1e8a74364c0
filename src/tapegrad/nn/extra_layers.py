"""Layers PyTorch has that pair with nn/functional_misc.py: Bilinear, ChannelShuffle; and
Softmax2d, NLLLoss2d (PyTorch's deprecated alias of NLLLoss).

    >>> tg.nn.Bilinear(3, 4, 5)(tg.ones(2, 3), tg.ones(2, 4)).shape
    (2, 5)
"""

from __future__ import annotations

import math
import warnings

from ..creation import empty
from . import functional_core as _core
from . import functional_misc as _misc
from . import init
from .losses import NLLLoss
from .module import Module, Parameter

__all__ = ["Bilinear", "ChannelShuffle", "Softmax2d", "NLLLoss2d"]


class Bilinear(Module):
    """y = x1^T A x2 + b, as torch.nn.Bilinear: weight (out, in1, in2), bias (out,), both
    initialised U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch's.

    >>> tg.nn.Bilinear(3, 4, 5, bias=False)
    Bilinear(in1_features=3, in2_features=4, out_features=5, bias=False)
    """

    def __init__(
        self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None
    ) -> None:
        super().__init__()
        for name, v in (
            ("in1_features", in1_features),
            ("in2_features", in2_features),
            ("out_features", out_features),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Bilinear: {name} must be a non-negative int, got {v!r}")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        kw = {"dtype": dtype, "device": device or "cpu"}
        self.weight = Parameter(empty(out_features, in1_features, in2_features, **kw))
        self.bias = Parameter(empty(out_features, **kw)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias again from U(-1/sqrt(in1), 1/sqrt(in1)), as PyTorch's."""
        bound = 1.0 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return _misc.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class ChannelShuffle(Module):
    """Interleave the channels of (N, C, *) in `groups` groups (`F.channel_shuffle`).

    >>> tg.nn.ChannelShuffle(2)(tg.arange(4.0).reshape(1, 4, 1)).numpy().ravel()
    array([0., 2., 1., 3.], dtype=float32)
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return _misc.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) at each location (dim -3).

    >>> tg.nn.Softmax2d()(tg.zeros(2, 4, 3, 3)).numpy()[0, :, 0, 0]
    array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return _core.softmax(input, -3)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated alias of NLLLoss (which takes (N, C, H, W) input already); warns
    as PyTorch does.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tg.nn.NLLLoss2d()
    NLLLoss2d()
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction="mean",
    ) -> None:
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
            "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for "
            "more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
