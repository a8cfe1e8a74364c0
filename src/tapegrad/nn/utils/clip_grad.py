"""Gradient clipping: by the joint norm of all gradients, or element by element.

>>> total = tg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # doctest: +SKIP
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ...engine.versions import bump_version
from ...tensor import Tensor, _wrap

__all__ = [
    "clip_grad_norm_",
    "clip_grad_norm",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]


def _with_grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(
    parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None
) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most `max_norm`.

    The norm is taken over all gradients together, as if concatenated into one vector.
    Returns the total norm before clipping (a 0-d tensor).
    """
    params = _with_grads(parameters)
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if not params:
        return _wrap(np.array(0.0, dtype=np.float32))
    grads = [p.grad._data for p in params]
    dtype = np.result_type(*[g.dtype for g in grads])
    total = _joint_norm(grads, norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for p in params:
            g = p.grad
            g._data *= g.dtype.type(coef)
            bump_version(g)  # a graph that saved this gradient must see it changed
    return _wrap(np.array(total, dtype=dtype))


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    for p in _with_grads(parameters):
        g = p.grad
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        bump_version(g)


def clip_grad_norm(
    parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None
) -> Tensor:
    """Deprecated spelling of `clip_grad_norm_` (PyTorch's warning included)."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The joint `norm_type`-norm of `tensors` (as if concatenated into one vector), a 0-d
    tensor: the first half of `clip_grad_norm_`, for gradients gathered by hand."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return _wrap(np.array(0.0, dtype=np.float32))
    arrays = [t.detach().numpy() for t in tensors]
    dtype = np.result_type(*[a.dtype for a in arrays])
    total = _joint_norm(arrays, norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"get_total_norm: the total norm of order {norm_type} is non-finite; pass "
            "error_if_nonfinite=False to get it anyway"
        )
    return _wrap(np.array(total, dtype=dtype))


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scale the gradients in place by max_norm / (total_norm + 1e-6) where that is below 1:
    the second half of `clip_grad_norm_`, with a norm from `get_total_norm`."""
    total = float(total_norm.item() if isinstance(total_norm, Tensor) else total_norm)
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1.0:
        for p in _with_grads(parameters):
            g = p.grad
            g._data *= g.dtype.type(coef)
            bump_version(g)


def _joint_norm(arrays, norm_type: float) -> float:
    """The norm of the arrays' concatenation, accumulated in float64."""
    if norm_type == math.inf:
        return max(float(np.abs(a).max()) if a.size else 0.0 for a in arrays)
    acc = 0.0
    for a in arrays:
        m = np.abs(a.astype(np.float64, copy=False))
        acc += float(np.sum(m * m)) if norm_type == 2.0 else float(np.sum(m**norm_type))
    return acc ** (1.0 / norm_type)
