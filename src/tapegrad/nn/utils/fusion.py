"""Folding an eval-mode BatchNorm into the convolution or linear layer before it: the layer
with weight * gamma / sqrt(var + eps) and bias (b - mean) * gamma / sqrt(var + eps) + beta
computes what the pair did, in one op (inference only: the statistics are frozen in).

    >>> conv, bn = tg.nn.Conv2d(3, 8, 3).eval(), tg.nn.BatchNorm2d(8).eval()
    >>> fused = tg.nn.utils.fuse_conv_bn_eval(conv, bn)
"""

from __future__ import annotations

import copy

from ... import creation
from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _check_eval(layer: Module, bn: Module, fn: str) -> None:
    if layer.training or bn.training:
        raise RuntimeError(f"{fn}: fusion is for eval mode only; call .eval() on both modules")
    if bn.running_mean is None or bn.running_var is None:
        raise RuntimeError(
            f"{fn}: the BatchNorm keeps no running statistics (track_running_stats=False)"
        )


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of `conv` that computes bn(conv(x)) (both in eval mode); `transpose`: a
    transposed convolution (its output channels are the weight's dimension 1)."""
    _check_eval(conv, bn, "fuse_conv_bn_eval")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor,
    conv_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
    transpose: bool = False,
) -> tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of a convolution followed by a frozen batch norm."""
    scale = _scale(bn_rm, bn_rv, bn_eps, bn_w)
    per_channel = [1, -1] if transpose else [-1, 1]
    shape = per_channel + [1] * (conv_w.ndim - 2)
    weight = (conv_w.detach() * scale.reshape(*shape)).to(conv_w.dtype)
    bias = _fused_bias(conv_b, bn_rm, scale, bn_b, conv_w.dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, _requires(conv_b, conv_w))


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of `linear` that computes bn(linear(x)) (both in eval mode); the BatchNorm has
    the linear layer's output features, or one."""
    _check_eval(linear, bn, "fuse_linear_bn_eval")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise ValueError(
            f"fuse_linear_bn_eval: the BatchNorm's {bn.num_features} features must be the "
            f"linear layer's {linear.out_features} output features (or 1)"
        )
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor,
    linear_b: Tensor | None,
    bn_rm: Tensor,
    bn_rv: Tensor,
    bn_eps: float,
    bn_w: Tensor | None,
    bn_b: Tensor | None,
) -> tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of a linear layer followed by a frozen batch norm."""
    scale = _scale(bn_rm, bn_rv, bn_eps, bn_w)
    weight = (linear_w.detach() * scale.unsqueeze(-1)).to(linear_w.dtype)
    bias = _fused_bias(linear_b, bn_rm, scale, bn_b, linear_w.dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, _requires(linear_b, linear_w))


def _scale(bn_rm: Tensor, bn_rv: Tensor, bn_eps: float, bn_w: Tensor | None) -> Tensor:
    gamma = creation.ones_like(bn_rm) if bn_w is None else bn_w.detach()
    return gamma * (bn_rv.detach() + bn_eps).rsqrt()


def _fused_bias(
    b: Tensor | None, bn_rm: Tensor, scale: Tensor, bn_b: Tensor | None, weight_dtype
) -> Tensor:
    base = creation.zeros_like(bn_rm) if b is None else b.detach()
    beta = creation.zeros_like(bn_rm) if bn_b is None else bn_b.detach()
    return ((base - bn_rm.detach()) * scale + beta).to(weight_dtype if b is None else b.dtype)


def _requires(b: Tensor | None, w: Tensor) -> bool:
    return w.requires_grad if b is None else b.requires_grad
