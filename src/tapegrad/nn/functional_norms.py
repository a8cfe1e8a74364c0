"""tg.nn.functional normalisations beyond batch/layer/group: instance_norm, rms_norm,
local_response_norm.

`instance_norm` is batch normalisation of the input seen as one sample with N*C channels
(PyTorch's own formulation), so it reuses the fused `batch_norm` op and its gradient; the
running statistics, when given, are the average over the batch of the per-sample updates.
`rms_norm` and `local_response_norm` are composed from differentiable ops.

    >>> out = instance_norm(tg.randn(2, 3, 5))
    >>> out.shape
    (2, 3, 5)
"""

from __future__ import annotations

import math

import numpy as np

from ..engine.versions import bump_version
from ..ops import nn_norm as _norm
from ..ops.joins import pad
from ..ops.tiling import tile
from ..tensor import Tensor

__all__ = ["instance_norm", "rms_norm", "local_response_norm"]


def _check_tensor(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalise each channel of each sample of an (N, C, *spatial) input over its spatial dims.

    Args:
        input: (N, C, ...) tensor with at least one spatial dim.
        running_mean, running_var: (C,) buffers, updated in place while `use_input_stats`
            (momentum; unbiased variance) and used for normalising otherwise.
        weight, bias: optional (C,) affine parameters.
        use_input_stats: normalise with each instance's own statistics (default True).
        momentum, eps: as in `batch_norm`.

    >>> instance_norm(tg.tensor([[[1.0, 3.0]]])).numpy()
    array([[[-0.999995,  0.999995]]], dtype=float32)
    """
    _check_tensor("instance_norm", input)
    if input.ndim < 2:
        raise ValueError(
            "instance_norm: expected an input of at least 2 dims (N, C, ...), got shape "
            f"{tuple(input.shape)}"
        )
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"{tuple(input.shape)}"
        )
    n, c = input.shape[:2]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(
                f"instance_norm: {name} has shape {tuple(t.shape)} but the input has {c} "
                "channels; pass one value per channel"
            )
    stats = running_mean is not None and running_var is not None
    if not use_input_stats and not stats:
        raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
    rm = np.tile(running_mean._data, n) if stats else None
    rv = np.tile(running_var._data, n) if stats else None
    x = input.reshape(1, n * c, *input.shape[2:])
    w = None if weight is None else tile(weight, (n,))
    b = None if bias is None else tile(bias, (n,))
    out = _norm._batch_norm(
        x,
        w,
        b,
        training=bool(use_input_stats),
        eps=eps,
        momentum=0.1 if momentum is None else momentum,
        running_mean=rm,
        running_var=rv,
    )
    if stats and use_input_stats:  # fold the per-sample updates back into the buffers
        running_mean._data[...] = rm.reshape(n, c).mean(0)
        running_var._data[...] = rv.reshape(n, c).mean(0)
        bump_version(running_mean)
        bump_version(running_var)
    return out.reshape(input.shape)


def _finfo_eps(dtype) -> float:
    kind = np.dtype(dtype)
    return float(np.finfo(kind).eps) if kind.kind == "f" else float(np.finfo(np.float32).eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Divide by the root mean square over the trailing `normalized_shape` dims, then scale.

    Args:
        input: tensor whose trailing dims equal `normalized_shape`.
        normalized_shape: int or tuple of the trailing dims to normalise over.
        weight: optional scale of shape `normalized_shape`.
        eps: added to the mean square; None (default) means the dtype's machine epsilon.

    >>> rms_norm(tg.tensor([[3.0, 4.0]]), (2,)).numpy()
    array([[0.8485..., 1.1313...]], dtype=float32)
    """
    _check_tensor("rms_norm", input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k :]) != shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    eps = _finfo_eps(input.dtype) if eps is None else float(eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divide each value by (k + alpha * mean of squares over `size` neighbouring channels)^beta.

    The window over channels is centred (size // 2 before, (size - 1) // 2 after), zero-padded
    and always divided by `size`, as PyTorch.

    >>> local_response_norm(tg.ones(1, 3, 2), 2).shape
    (1, 3, 2)
    """
    _check_tensor("local_response_norm", input)
    if input.ndim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    widths = (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2)
    padded = pad(sq, widths)
    total = padded[:, 0:c]
    for j in range(1, size):
        total = total + padded[:, j : j + c]
    div = (total * (alpha / size) + k) ** beta
    return input / div
