"""tg.nn.init: fill parameters in place, with PyTorch's formulas and fan computation.

Every function writes into the tensor's storage without recording (as under `no_grad`),
draws from tapegrad's generator (`tg.manual_seed`) or `generator=` (a `tg.Generator`)
and returns the tensor.

    >>> w = tg.nn.Parameter(tg.empty(3, 5))
    >>> tg.nn.init.xavier_uniform_(w).shape
    (3, 5)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend
from ..engine.versions import bump_version
from ..random import resolve
from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "zeros_",
    "ones_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "trunc_normal_",
    "orthogonal_",
    "eye_",
    "dirac_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]


def _fill(tensor: Tensor, values) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init: expected a Tensor, got {type(tensor).__name__}")
    data = tensor._data
    arr = np.asarray(values, dtype=data.dtype)
    data[...] = arr if type(data) is np.ndarray else backend.to_device(arr, "cuda")
    bump_version(tensor)
    return tensor


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    >>> tg.nn.init.calculate_gain("relu")
    1.4142135623730951
    """
    linear = (
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "sigmoid",
    )
    if nonlinearity in linear:
        return 1.0
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
            raise ValueError(f"negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(
        f"Unsupported nonlinearity {nonlinearity!r}; use one of linear, conv*d, "
        "sigmoid, tanh, relu, leaky_relu, selu"
    )


def _calculate_fan_in_and_fan_out(tensor: Tensor):
    if tensor.ndim < 2:
        raise ValueError(
            f"Fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
            f"(shape {tuple(tensor.shape)})"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples from U(a, b)."""
    return _fill(tensor, resolve("uniform_", generator).uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples from N(mean, std^2)."""
    return _fill(tensor, resolve("normal_", generator).normal(mean, std, size=tensor.shape))


def trunc_normal_(
    tensor: Tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator: Any = None
) -> Tensor:
    """N(mean, std^2) samples redrawn until they fall in [a, b]."""
    rng = resolve("trunc_normal_", generator)
    out = rng.normal(mean, std, size=tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, size=int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill `tensor` with `val`, in place (not recorded); returns it."""
    return _fill(tensor, np.full(tensor.shape, val))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with zeros, in place (not recorded); returns it."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with ones, in place (not recorded); returns it."""
    return constant_(tensor, 1.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d `tensor` with the identity matrix, in place (not recorded); returns it."""
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    rows, cols = tensor.shape
    return _fill(tensor, np.eye(rows, cols))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He). Linear's default uses a=sqrt(5)."""
    if 0 in tensor.shape:
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He)."""
    if 0 in tensor.shape:
        return tensor
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(_fan(tensor, mode)), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample, times gain."""
    if tensor.ndim < 2:
        raise ValueError("orthogonal_: only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = resolve("orthogonal_", generator).normal(0.0, 1.0, size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta, in place: the
    convolution keeps the first min(C_out / groups, C_in) input channels of each group as
    they are. Returns the tensor.

    >>> tg.nn.init.dirac_(tg.empty(2, 2, 3)).numpy()[:, :, 1]
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"dirac_: expected a Tensor, got {type(tensor).__name__}")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(
            "Only tensors with 3, 4, or 5 dimensions are supported (dirac_: got shape "
            f"{tuple(tensor.shape)})"
        )
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"dirac_: groups must be a positive int, got {groups!r}")
    if tensor.shape[0] % groups:
        raise ValueError(
            f"dim 0 must be divisible by groups (dirac_: {tensor.shape[0]} output channels, "
            f"groups={groups})"
        )
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-d tensor with N(0, std^2) values, then zero ceil(sparsity * rows) randomly
    chosen entries of every column (Martens 2010), in place. Returns the tensor.

    >>> w = tg.nn.init.sparse_(tg.empty(4, 6), sparsity=0.5)
    >>> (w.numpy() == 0).sum(0).tolist()
    [2, 2, 2, 2, 2, 2]
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"sparse_: expected a Tensor, got {type(tensor).__name__}")
    if tensor.ndim != 2:
        raise ValueError(
            f"Only tensors with 2 dimensions are supported (sparse_: got shape "
            f"{tuple(tensor.shape)})"
        )
    if not 0.0 <= sparsity <= 1.0:
        raise ValueError(f"sparse_: sparsity must be in [0, 1], got {sparsity}")
    rows, cols = tensor.shape
    rng = resolve("sparse_", generator)
    values = rng.normal(0.0, std, size=(rows, cols))
    zeros = math.ceil(sparsity * rows)
    for c in range(cols):
        values[rng.permutation(rows)[:zeros], c] = 0.0
    return _fill(tensor, values)


# ---------------------------------------------------------------- PyTorch's deprecated names
def _deprecated(new: Callable[..., Tensor], example: str) -> Callable[..., Tensor]:
    old = new.__name__[:-1]

    def alias(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"""Deprecated PyTorch name of `{new.__name__}`: warns (a FutureWarning, as
    PyTorch's), then calls it.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = {old}({example})
    >>> caught[0].category.__name__, str(caught[0].message)
    ('FutureWarning', '`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.')
    """
    return alias


uniform = _deprecated(uniform_, "tg.empty(2, 3)")
normal = _deprecated(normal_, "tg.empty(2, 3)")
constant = _deprecated(constant_, "tg.empty(2, 3), 0.5")
eye = _deprecated(eye_, "tg.empty(2, 3)")
dirac = _deprecated(dirac_, "tg.empty(2, 2, 3)")
xavier_uniform = _deprecated(xavier_uniform_, "tg.empty(2, 3)")
xavier_normal = _deprecated(xavier_normal_, "tg.empty(2, 3)")
kaiming_uniform = _deprecated(kaiming_uniform_, "tg.empty(2, 3)")
kaiming_normal = _deprecated(kaiming_normal_, "tg.empty(2, 3)")
orthogonal = _deprecated(orthogonal_, "tg.empty(2, 3)")
sparse = _deprecated(sparse_, "tg.empty(2, 3), 0.5")
