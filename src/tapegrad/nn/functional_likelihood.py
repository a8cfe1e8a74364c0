"""Likelihood losses: Poisson and Gaussian negative log-likelihood, PyTorch's formulas.

Composites of differentiable ops, as in `functional_losses_extra`.

    >>> import tapegrad.nn.functional as F
    >>> F.gaussian_nll_loss(tg.zeros(3), tg.ones(3), tg.ones(3)).item()
    0.5
"""

from __future__ import annotations

import math

import numpy as np

from ..ops import elementwise as _ew
from ..tensor import _wrap
from .functional_losses_extra import _REDUCTIONS, _broadcast, _reduce, _reduction, _tensor

__all__ = ["poisson_nll_loss", "gaussian_nll_loss"]


def poisson_nll_loss(
    input,
    target,
    log_input=True,
    full=False,
    size_average=None,
    eps=1e-8,
    reduce=None,
    reduction="mean",
):
    """Poisson negative log-likelihood: exp(x) - y x (log_input) or x - y log(x + eps).

    full: add the Stirling term y log y - y + log(2 pi y) / 2 where y > 1.

    >>> poisson_nll_loss(tg.tensor([0.0]), tg.tensor([2.0]))
    tensor(1.)
    """
    fn = "poisson_nll_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    _broadcast(fn, input=input, target=target)
    rate = _ew.exp(input) if log_input else input
    loss = rate - target * (input if log_input else _ew.log(input + eps))
    if full:
        big = target._data > 1
        y = _ew.where(_wrap(big), target, _wrap(np.ones((), dtype=target.dtype)))
        stirling = y * _ew.log(y) - y + 0.5 * _ew.log(2 * math.pi * y)
        loss = loss + stirling * _wrap(big.astype(loss.dtype))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log-likelihood: (log(var) + (input - target) ** 2 / var) / 2.

    var: the same shape as the input (one variance per element), or one dimension short of
    it, or with size 1 in one dimension where the input has more (one variance shared along
    it), or a number. It is clamped to at least `eps` for the value only: its gradient
    passes the clamp unchanged (as PyTorch's). full: add log(2 pi) / 2.

    >>> gaussian_nll_loss(tg.tensor([1.0]), tg.tensor([1.0]), tg.tensor([1.0]))
    tensor(0.)
    """
    fn = "gaussian_nll_loss"
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"{fn}: var has negative entries ({var}); variances are >= 0")
        var = _wrap(np.full(input.shape, var, dtype=input.dtype))
    _tensor(var, "var", fn)
    v = var._data
    if v.size and bool((v < 0).any()):
        raise ValueError(
            f"{fn}: var has negative entries (min {float(v.min())}); variances are >= 0"
        )
    in_shape, v_shape = tuple(input.shape), tuple(var.shape)
    if v_shape != in_shape:
        if in_shape[:-1] == v_shape:
            var = var.unsqueeze(-1)
        elif not (
            len(in_shape) == len(v_shape)
            and sum(b for a, b in zip(in_shape, v_shape, strict=True) if a != b) == 1
        ):
            raise ValueError(
                f"{fn}: var of shape {v_shape} is of incorrect size for the input of shape "
                f"{in_shape}; give it the input's shape, the input's shape without the last "
                "dimension, or size 1 in the one dimension it is shared along"
            )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    _broadcast(fn, input=input, target=target)
    with np.errstate(invalid="ignore"):  # NaN variances stay NaN, as in PyTorch
        lifted = np.maximum(var._data, eps) - var._data
    var = var + _wrap(lifted)  # the clamp, invisible to the gradient
    d = input - target
    loss = 0.5 * (_ew.log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
