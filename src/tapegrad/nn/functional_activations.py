"""More of PyTorch's activations and channel dropout, composed of tapegrad's ops.

Each is written with `where` wherever PyTorch's derivative has a boundary, so the gradient
at the boundary itself is PyTorch's too (hardtanh's is 0 at `min_val` and `max_val`, where
a `clamp` passes it; hardswish's is 0 at -3 and 1 at 3). Everything else follows
from the ops' own rules: second order, forward mode, vmap and every tape work as for any
op. Re-exported by `tg.nn.functional`.
"""

from __future__ import annotations

import warnings

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


def _channel_dropout(what: str, input, p: float, training: bool, channel_dims: int):
    """Zero whole channels with probability p (one draw per index of the first
    `channel_dims` dimensions, the same over the rest) and scale the rest by 1 / (1 - p)."""
    if not training or p == 0.0:
        return input
    if input.ndim < channel_dims:
        raise RuntimeError(
            f"{what}: channel dropout needs at least {channel_dims} dimensions (N, C, ...), "
            f"got shape {tuple(input.shape)}; use dropout for a 1-D input"
        )
    kept = input.shape[:channel_dims]
    dtype = input.dtype if input.dtype.kind == "f" else np.dtype("float32")
    mask = _dropout_mask(np.empty(kept + (1,) * (input.ndim - len(kept)), dtype=dtype), p)
    if input.device != "cpu":
        mask = backend.to_device(mask, input.device)
    return input * _wrap(mask, 0)


def _check_p(what: str, input, p: float) -> None:
    _tensor(input, "input", what)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{what}: dropout probability has to be between 0 and 1, but got {p}")


def _deprecated_rank(what: str, input, spatial: int) -> None:
    # PyTorch 2.13 still runs these, warning that they will become errors
    warnings.warn(
        f"{what}: received a {input.ndim}-D input, which is deprecated and will be an error "
        f"in a future PyTorch release; use dropout for it (to keep this behaviour without "
        f"the warning). {what} drops channels of inputs with {spatial} spatial dimensions, a "
        f"channel dimension and an optional batch dimension ({spatial + 1}-D or "
        f"{spatial + 2}-D inputs).",
        UserWarning,
        stacklevel=3,
    )


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input while training; any other rank
    is an error, as in PyTorch.

    >>> y = tg.nn.functional.dropout1d(tg.ones(2, 3, 4), 0.5)
    >>> bool(((y == 0) | (y == 2)).all()), bool((y == y[..., :1]).all())  # whole channels
    (True, True)
    """
    _check_p("dropout1d", input, p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got a {input.ndim}-D "
            f"input of shape {tuple(input.shape)}"
        )
    dims = input.ndim - 1  # (C, L): one draw per channel; (N, C, L): per sample and channel
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout1d", x, p, training, dims))
    return _channel_dropout("dropout1d", input, p, training, dims)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) input while training, as PyTorch 2.13:

    - a 3-D input is taken as (N, C, L), not as an unbatched (C, H, W), with PyTorch's
      warning (use dropout1d for that; PyTorch says this will change);
    - any other rank warns that it is deprecated and still drops over the first two
      dimensions (a 1-D input is then an error).

    >>> y = tg.nn.functional.dropout2d(tg.ones(2, 3, 4, 4), 0.5)
    >>> bool((y == y[..., :1, :1]).all())  # whole channels
    True
    """
    _check_p("dropout2d", input, p)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: received a 3-D input; as PyTorch does, it is taken as (N, C, L) and "
            "its channels of length L are dropped (1-D channel dropout), not as one "
            "unbatched (C, H, W) sample. PyTorch will read it as (C, H, W) in a future "
            "release; use dropout1d to keep this behaviour.",
            UserWarning,
            stacklevel=2,
        )
    elif input.ndim != 4:
        _deprecated_rank("dropout2d", input, 2)
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout2d", x, p, training, 2))
    return _channel_dropout("dropout2d", input, p, training, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or unbatched (C, D, H, W) input while
    training; another rank warns that it is deprecated (PyTorch 2.13) and is taken as
    unbatched, one draw per index of its first dimension.

    >>> y = tg.nn.functional.dropout3d(tg.ones(2, 3, 2, 2, 2), 0.5)
    >>> bool((y == y[:, :, :1, :1, :1]).all())
    True
    """
    _check_p("dropout3d", input, p)
    if input.ndim not in (4, 5):
        _deprecated_rank("dropout3d", input, 3)
    dims = 2 if input.ndim == 5 else 1
    if inplace and training and p:
        return in_place(input, lambda x: _channel_dropout("dropout3d", x, p, training, dims))
    return _channel_dropout("dropout3d", input, p, training, dims)
