"""Sampling from distributions given by tensors (PyTorch's semantics): `tg.multinomial`
(category indices), `tg.bernoulli` (0/1 with given probabilities), `tg.poisson` (counts
with given rates). None is differentiable; each draws from this thread's generator
(`tg.manual_seed`) or `generator=` (a `tg.Generator`).

>>> _ = tg.manual_seed(0)
>>> tg.multinomial(tg.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
tensor([1, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend, dtypes
from .random import resolve
from .tensor import Tensor, _wrap

__all__ = ["bernoulli", "multinomial", "poisson"]


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """Draw `num_samples` category indices per row of the (unnormalized) weights `input`.

    Args:
        input: non-negative, finite weights, 1-D (k,) or 2-D (rows, k); each row needs a
            positive sum. They need not sum to one.
        num_samples: how many indices to draw per row (at least 1).
        replacement: draw with replacement; without it every index appears at most once per
            row (`num_samples` <= k), and once the nonzero weights are used up the
            zero-weight categories follow in index order, as in PyTorch.
        generator: a `tg.Generator` to draw from (default: this thread's generator).

    Returns:
        An int64 tensor of shape (num_samples,) or (rows, num_samples). Not differentiable.

    >>> tg.multinomial(tg.tensor([[1.0, 0.0], [0.0, 1.0]]), 1).tolist()
    [[0], [1]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial: input must be a Tensor, got {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError(
            f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}"
        )
    if not dtypes.is_floating(input.dtype):
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got "
            f"{input.dtype}; convert it first, e.g. weights.float()"
        )
    n = int(num_samples)
    if n <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got {n})")
    probs = np.asarray(backend.to_device(input._data, "cpu"), dtype=np.float64)
    rows = probs.reshape(1, -1) if probs.ndim == 1 else probs
    k = rows.shape[1]
    if not replacement and n > k:
        raise RuntimeError(
            f"multinomial: cannot sample n_sample ({n}) > prob_dist.size(-1) "
            f"({k}) samples without replacement"
        )
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError(
            "multinomial: probability tensor contains either `inf`, `nan` or element < 0"
        )
    totals = rows.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError(
            "multinomial: invalid multinomial distribution (sum of probabilities <= 0) in a row"
        )
    rng = resolve("multinomial", generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1) / totals[:, None]
        u = rng.random((rows.shape[0], n))
        picks = np.stack([np.searchsorted(c, ui, side="right") for c, ui in zip(cdf, u)])
        picks = np.minimum(picks, k - 1)  # u close to 1 against a rounded-down last cdf
    else:
        # Efraimidis-Spirakis: the n largest log(u) / w are a weighted draw without
        # replacement; a zero weight gets -inf, so it comes only after every nonzero one
        # (zero-weight categories in index order, as PyTorch gives them)
        u = rng.random(rows.shape)
        with np.errstate(divide="ignore"):
            keys = np.log(u) / rows
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :n]
    picks = picks.astype(np.int64)
    if probs.ndim == 1:
        picks = picks[0]
    return _wrap(backend.to_device(np.ascontiguousarray(picks), input.device))


def _host_values(what: str, input: Any) -> np.ndarray:
    """`input`'s values as a float64 host array, for a floating tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}: input must be a Tensor, got {type(input).__name__}")
    if not dtypes.is_floating(input.dtype):
        raise NotImplementedError(
            f"{what}: not implemented for {input.dtype} tensors (as in PyTorch); pass "
            "floating values, e.g. t.float()"
        )
    return np.asarray(backend.to_device(input._data, "cpu"), dtype=np.float64)


def _like_input(values: np.ndarray, input: Tensor) -> Tensor:
    arr = np.ascontiguousarray(values.astype(input._data.dtype, copy=False))
    return _wrap(backend.to_device(arr, input.device))


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """1 with probability `input` (elementwise, each in [0, 1]) and 0 otherwise, in
    `input`'s shape and dtype; with `p`, every element's probability is `p` instead.
    Not differentiable (PyTorch records a zero gradient; here the result is a constant).

    >>> tg.bernoulli(tg.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    probs = _host_values("bernoulli", input)
    if p is not None:
        if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
            raise TypeError(f"bernoulli: p must be a Python number, got {p!r}")
        probs = np.full(probs.shape, float(p))
    with np.errstate(invalid="ignore"):
        valid = (probs >= 0) & (probs <= 1)
    if not valid.all():
        bad = probs[~valid].flat[0]
        raise RuntimeError(
            f"bernoulli: expected every probability to be in [0, 1] (NaN is not), got {bad}"
        )
    draws = resolve("bernoulli", generator).random(probs.shape) < probs
    return _like_input(draws, input)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson counts with the rates `input` (elementwise, each >= 0), in `input`'s shape
    and dtype. Not differentiable (PyTorch records a zero gradient; here the result is a
    constant).

    >>> tg.poisson(tg.zeros(2)).tolist()
    [0.0, 0.0]
    """
    rates = _host_values("poisson", input)
    with np.errstate(invalid="ignore"):
        valid = rates >= 0
    if not valid.all():
        raise RuntimeError(
            "poisson: invalid Poisson rate, expected every rate to be non-negative (and not NaN)"
        )
    return _like_input(resolve("poisson", generator).poisson(rates), input)
