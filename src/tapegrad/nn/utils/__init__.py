"""tg.nn.utils: gradient clipping.

>>> total = tg.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # doctest: +SKIP
"""

from __future__ import annotations

import math

import numpy as np

from ...engine.versions import bump_version
from ...tensor import Tensor, _wrap

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


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
    if norm_type == math.inf:
        total = max(float(np.abs(g).max()) if g.size else 0.0 for g in grads)
    else:
        acc = 0.0
        for g in grads:
            a = np.abs(g.astype(np.float64, copy=False))
            acc += float(np.sum(a * a)) if norm_type == 2.0 else float(np.sum(a**norm_type))
        total = acc ** (1.0 / norm_type)
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


def parameters_to_vector(parameters) -> Tensor:
    """One flat tensor holding every parameter's values (a copy, not tracked)."""
    return _wrap(np.concatenate([np.ravel(p._data) for p in parameters]))


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Write a flat vector back into the parameters, in order."""
    data = vec._data
    offset = 0
    for p in parameters:
        n = p._data.size
        p._data[...] = data[offset : offset + n].reshape(p.shape)
        bump_version(p)
        offset += n
