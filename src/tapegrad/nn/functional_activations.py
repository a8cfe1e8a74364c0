"""More of PyTorch's activations and channel dropout, composed of tapegrad's ops.

Each is written with `where` wherever PyTorch's derivative has a boundary, so the gradient
at the boundary itself is PyTorch's too (hardtanh's is 0 at `min_val` and `max_val`, where
a `clamp` passes it; hardswish's is 0 at -3 and 1 at 3). Everything else follows
from the ops' own rules: second order, forward mode, vmap and every tape work as for any
op. Re-exported by `tg.nn.functional`.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from ..ops import elementwise as _ew
from ..tensor import _wrap
from .functional_core import _dim, _dropout_mask, _tensor, in_place, softmax, softplus

__all__ = [
    "hardtanh",
    "hardtanh_",
    "relu6",
    "hardsigmoid",
    "hardswish",
    "mish",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "softsign",
    "logsigmoid",
    "softmin",
    "glu",
    "tanhshrink",
    "softshrink",
    "hardshrink",
    "threshold",
    "threshold_",
    "prelu",
    "dropout1d",
    "dropout2d",
    "dropout3d",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val]; the gradient is 0 at the bounds (PyTorch's)."""
    _tensor(input, "input", "hardtanh")
    if min_val > max_val:
        raise ValueError(
            f"hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})"
        )
    if inplace:
        return in_place(input, lambda x: hardtanh(x, min_val, max_val))
    return _ew.where(input <= min_val, min_val, _ew.where(input >= max_val, max_val, input))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh written into x."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6) (`hardtanh(x, 0, 6)`)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    """0 below -3, 1 above 3, x / 6 + 1/2 between."""
    _tensor(input, "input", "hardsigmoid")
    if inplace:
        return in_place(input, hardsigmoid)
    return _ew.where(input <= -3.0, 0.0, _ew.where(input >= 3.0, 1.0, input / 6.0 + 0.5))


def hardswish(input, inplace=False):
    """x * hardsigmoid(x): 0 below -3, x above 3, x (x + 3) / 6 between."""
    _tensor(input, "input", "hardswish")
    if inplace:
        return in_place(input, hardswish)
    return _ew.where(
        input <= -3.0, 0.0, _ew.where(input >= 3.0, input, input * (input + 3.0) / 6.0)
    )


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    _tensor(input, "input", "mish")
    if inplace:
        return in_place(input, mish)
    return input * _ew.tanh(softplus(input))


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants."""
    from .functional_core import elu

    if inplace:
        return in_place(input, selu)
    return elu(_tensor(input, "input", "selu"), _SELU_ALPHA) * _SELU_SCALE


def selu_(input):
    """selu written into x."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    from .functional_core import elu

    _tensor(input, "input", "celu")
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides x)")
    if inplace:
        return in_place(input, lambda x: celu(x, alpha))
    return elu(input / alpha, 1.0) * alpha


def celu_(input, alpha=1.0):
    """celu written into x."""
    return celu(input, alpha, inplace=True)


def softsign(input):
    """x / (1 + |x|)."""
    _tensor(input, "input", "softsign")
    return input / (_ew.abs(input) + 1.0)


def logsigmoid(input):
    """log(sigmoid(x)), as -softplus(-x) (no overflow for large |x|)."""
    _tensor(input, "input", "logsigmoid")
    return -softplus(-input)


def softmin(input, dim=None, dtype=None):
    """softmax(-x) along `dim`."""
    return softmax(-_tensor(input, "input", "softmin"), dim=dim, dtype=dtype)


def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of `input` along `dim`."""
    _tensor(input, "input", "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _dim(dim, None, "glu", input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(
            f"glu: halving dimension must be even, but dimension {d} is size {input.shape[d]}"
        )
    a, b = input.chunk(2, d)
    return a * _ew.sigmoid(b)


def tanhshrink(input):
    """x - tanh(x)."""
    return _tensor(input, "input", "tanhshrink") - _ew.tanh(input)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    _tensor(input, "input", "softshrink")
    if lambd < 0:
        raise ValueError(
            f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}"
        )
    return _ew.where(input > lambd, input - lambd, _ew.where(input < -lambd, input + lambd, 0.0))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    _tensor(input, "input", "hardshrink")
    return _ew.where((input > lambd) | (input < -lambd), input, 0.0)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    _tensor(input, "input", "threshold")
    if inplace:
        return in_place(input, lambda x: _ew.where(x > threshold, x, value))
    return _ew.where(input > threshold, input, value)


def threshold_(input, threshold, value):
    """threshold written into x."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def prelu(input, weight):
    """x where x > 0, else weight * x; `weight` has one value, or one per channel (dim 1)."""
    _tensor(input, "input", "prelu")
    _tensor(weight, "weight", "prelu")
    if weight.ndim != 1:
        raise RuntimeError(f"prelu: weight must be 1-D, got shape {tuple(weight.shape)}")
    n = weight.shape[0]
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else (input.shape[0] if input.ndim else 1)
        if n != channels:
            raise RuntimeError(
                f"prelu: weight has {n} values but the input has {channels} channels (dim 1); "
                "give one value, or one per channel"
            )
        if input.ndim >= 2:
            weight = weight.reshape((1, n) + (1,) * (input.ndim - 2))
    return _ew.where(input > 0, input, weight * input)


def _channel_dropout(what: str, input, p: float, training: bool, spatial: int):
    """Zero whole channels (the same mask over the `spatial` trailing dims) with
    probability p, and scale the rest by 1 / (1 - p)."""
    _tensor(input, "input", what)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{what}: dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"{what}: expected a {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, "
            f"got shape {tuple(input.shape)}"
        )
    if not training or p == 0.0:
        return input
    kept = input.shape[: input.ndim - spatial]
    dtype = input.dtype if input.dtype.kind == "f" else np.dtype("float32")
    mask = _dropout_mask(np.empty(kept + (1,) * spatial, dtype=dtype), p)
    if input.device != "cpu":
        mask = backend.to_device(mask, input.device)
    return input * _wrap(mask, 0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input while training."""
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout1d", x, p, training, 1))
    return _channel_dropout("dropout1d", input, p, training, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) or (C, H, W) input while training."""
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout2d", x, p, training, 2))
    return _channel_dropout("dropout2d", input, p, training, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input while training."""
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout3d", x, p, training, 3))
    return _channel_dropout("dropout3d", input, p, training, 3)
