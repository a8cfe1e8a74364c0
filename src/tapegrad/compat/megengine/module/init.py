"""`megengine.module.init` (`M.init`): in-place initialisers with MegEngine's names.

Each writes new values into the tensor in place (never recorded) and returns None, as in
MegEngine. Fans follow MegEngine: a 2-D weight is (out, in); a 4-D conv weight
(out, in, kh, kw); a 5-D group conv weight (groups, out/groups, in/groups, kh, kw) has
`fan_out = out/groups * kh * kw`.

    >>> import tapegrad.compat.megengine.module as M
    >>> w = mge.Parameter(np.zeros((3, 4, 2, 2)))
    >>> M.init.calculate_fan_in_and_fan_out(w)
    (16, 12)
    >>> M.init.fill_(w, 0.5); float(w.numpy().mean())
    0.5
"""

from __future__ import annotations

import math

import numpy as np

from ....tensor import write_data

__all__ = [
    "fill_",
    "zeros_",
    "ones_",
    "uniform_",
    "normal_",
    "calculate_gain",
    "calculate_fan_in_and_fan_out",
    "calculate_correct_fan",
    "xavier_uniform_",
    "xavier_normal_",
    "msra_uniform_",
    "msra_normal_",
]

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def _rng():
    from ....random import generator

    return generator()


def _write(tensor, values) -> None:
    write_data(tensor, np.asarray(values, dtype=tensor.dtype).reshape(tensor.shape))


def fill_(tensor, val) -> None:
    """Set every element to `val`."""
    _write(tensor, np.full(tensor.shape, val))


def zeros_(tensor) -> None:
    """Set every element to 0."""
    fill_(tensor, 0)


def ones_(tensor) -> None:
    """Set every element to 1."""
    fill_(tensor, 1)


def uniform_(tensor, a: float = 0.0, b: float = 1.0) -> None:
    """Draw every element from U[a, b)."""
    _write(tensor, _rng().uniform(a, b, tensor.shape))


def normal_(tensor, mean: float = 0.0, std: float = 1.0) -> None:
    """Draw every element from N(mean, std^2)."""
    _write(tensor, _rng().normal(mean, std, tensor.shape))


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for `nonlinearity` (1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu with slope `param`)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def calculate_fan_in_and_fan_out(tensor) -> tuple:
    """(fan_in, fan_out) of a weight (see the module docstring for the layouts)."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            f"calculate_fan_in_and_fan_out: a tensor of shape {shape} has fewer "
            "than 2 dimensions; fans are defined for weights only"
        )
    if len(shape) == 2:
        return shape[1], shape[0]
    if len(shape) >= 5:  # group conv: the groups axis comes first
        shape = shape[1:]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_correct_fan(tensor, mode: str) -> float:
    """fan_in or fan_out of `tensor`, by `mode`."""
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(
            f"calculate_correct_fan: mode {mode!r} is not supported; use 'fan_in' or 'fan_out'"
        )
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain: float = 1.0) -> None:
    """Glorot uniform: U[-a, a], a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain: float = 1.0) -> None:
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def msra_uniform_(
    tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> None:
    """He uniform: U[-b, b], b = gain * sqrt(3 / fan) (gain of `nonlinearity`, slope `a`)."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / calculate_correct_fan(tensor, mode))
    uniform_(tensor, -bound, bound)


def msra_normal_(
    tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> None:
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(calculate_correct_fan(tensor, mode))
    normal_(tensor, 0.0, std)
