"""Connectionist temporal classification (CTC) loss, PyTorch's `F.ctc_loss`.

The loss of a sample is -log p(target | input): the log of the summed probability of every
alignment (a path through the blank-extended target `_ l1 _ l2 _ ... _`, one label per
time step, repeats and blanks collapsed). It is computed by the forward recursion of Graves
et al. (2006) in log space, vectorized over the batch and the extended target, and built
from differentiable ops, so autograd makes the alpha-beta backward of it (and a second
derivative, which PyTorch does not offer).

Two choices made for that:
- an impossible alignment is a very negative finite log-probability (`_dead`), not -inf:
  the logsumexp of three -inf entries would be -inf with a NaN gradient, which would reach
  every input through the recursion; a finite floor gives exactly zero weight instead. A
  sample with no alignment at all (a too short input) reads back as +inf, as in PyTorch.
- PyTorch's gradient with respect to `log_probs` is not the derivative of its value: it
  adds exp(log_probs) (for the time steps inside each input length), the derivative of the
  normalisation a log_softmax in front of the loss takes out again. Through a log_softmax
  (the documented use) both give the same gradient for the logits; a leaf `log_probs` gets
  PyTorch's numbers here too, because the loss adds `S - S.detach()` with S the sum of
  those probabilities: zero in value, exp(log_probs) in gradient.

    >>> import tapegrad.nn.functional as F
    >>> logits = tg.randn(50, 16, 20, requires_grad=True)  # (T, N, C)
    >>> targets = tg.randint(1, 20, (16, 30))
    >>> loss = F.ctc_loss(logits.log_softmax(2), targets, [50] * 16, [30] * 16)
    >>> loss.backward()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import creation
from ..ops import elementwise, joins
from ..tensor import Tensor

__all__ = ["ctc_loss"]  # and ctc_nll, the recursion itself (the MXNet facade's CTCLoss)

_REDUCTIONS = ("none", "mean", "sum")
Lengths = Tensor | Sequence[int] | np.ndarray


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Lengths,
    target_lengths: Lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The CTC loss of `log_probs` (T, N, C) or unbatched (T, C), log-probabilities over C
    classes (blank included) per time step, e.g. from `log_softmax(2)`.

    targets: (N, S) class indices padded past each target length, or all targets
    concatenated (sum(target_lengths),); unbatched: (S,). input_lengths, target_lengths:
    per sample, a Tensor or a sequence of ints (unbatched: one int). reduction: "mean"
    divides each loss by its target length (at least 1) before the batch mean; "sum";
    "none" gives the (N,) losses. zero_infinity: a sample no alignment fits (an input
    shorter than its target needs) has loss 0 and no gradient instead of +inf.
    """
    fn = "ctc_loss"
    if not isinstance(log_probs, Tensor) or log_probs.dtype.kind != "f":
        got = log_probs.dtype if isinstance(log_probs, Tensor) else type(log_probs).__name__
        raise TypeError(f"{fn}: log_probs must be a floating-point Tensor, got {got}")
    if log_probs.ndim not in (2, 3):
        raise ValueError(
            f"{fn}: log_probs must be (T, N, C) or unbatched (T, C), got shape "
            f"{tuple(log_probs.shape)}"
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp.shape
    if not (isinstance(blank, (int, np.integer)) and 0 <= blank < C):
        raise ValueError(f"{fn}: blank must be a class index in [0, {C}), got {blank!r}")
    in_len = _lengths(input_lengths, N, "input_lengths", unbatched)
    tgt_len = _lengths(target_lengths, N, "target_lengths", unbatched)
    if in_len.size and in_len.max() > T:
        raise ValueError(
            f"{fn}: input_lengths must be at most T = {T} (log_probs' first dimension), got "
            f"{int(in_len.max())}"
        )
    labels = _padded_targets(targets, tgt_len, N, C, unbatched)

    loss, dead = ctc_nll(lp, labels, in_len, tgt_len, int(blank))
    # PyTorch's gradient: + exp(log_probs) at the steps inside each input (module docstring)
    inside = np.asarray(np.arange(T)[:, None] < in_len[None, :], dtype=lp.dtype)[..., None]
    probs = (lp.exp() * _const(inside, lp)).sum((0, 2))
    loss = loss + (probs - probs.detach())
    if dead.any():  # +inf, or 0 (and no gradient) with zero_infinity
        fill = 0.0 if zero_infinity else np.inf
        loss = elementwise.where(_const(np.asarray(dead), lp), fill, loss)
    if reduction == "mean":
        divisor = np.maximum(tgt_len, 1).astype(lp.dtype)
        loss = (loss / _const(np.asarray(divisor), lp)).mean()
    elif reduction == "sum":
        loss = loss.sum()
    elif unbatched:
        loss = loss.squeeze(0)
    return loss


def ctc_nll(
    lp: Tensor, labels: np.ndarray, in_len: np.ndarray, tgt_len: np.ndarray, blank: int
) -> tuple[Tensor, np.ndarray]:
    """(-log p(target | input) per sample, +inf where no alignment fits; which those are).

    lp: (T, N, C) log-probabilities; labels: (N, S) class indices (anything past a target's
    length is ignored); in_len, target lengths: (N,) checked by the caller."""
    T, N, _ = lp.shape
    S = labels.shape[1]
    labels = np.where(np.arange(S)[None, :] < tgt_len[:, None], labels, blank)
    L = 2 * S + 1  # the blank-extended target: blank, l1, blank, l2, ..., blank
    ext = np.full((N, L), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    # a step from s-2 to s skips a blank: allowed onto a label unlike the one before it
    skip = np.zeros((N, L), dtype=bool)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    dead = float(np.finfo(lp.dtype).min) / 8  # log 0 (module docstring); 8: sums stay finite

    lp_ext = lp.gather(2, _const(np.asarray(np.broadcast_to(ext, (T, N, L)).copy()), lp))
    skip_c = _const(np.asarray(skip), lp)
    floor1 = _const(np.full((N, 1), dead, dtype=lp.dtype), lp)
    floor2 = _const(np.full((N, 2), dead, dtype=lp.dtype), lp)
    start = np.full((N, L), dead, dtype=lp.dtype)
    start[:, :2] = 0.0  # a path starts on the first blank or the first label
    if S:
        start[tgt_len == 0, 1] = dead  # ... the first label only if there is one
    alpha = lp_ext[0] + _const(np.asarray(start), lp)
    alphas = [alpha]
    for t in range(1, T):
        one_back = joins.cat([floor1, alpha[:, :-1]], 1)
        two_back = elementwise.where(skip_c, joins.cat([floor2, alpha[:, :-2]], 1), dead)
        alpha = joins.stack([alpha, one_back, two_back]).logsumexp(0) + lp_ext[t]
        alphas.append(alpha)
    history = joins.stack(alphas)  # (T, N, L)

    # a path ends on the last label or the blank after it, at the sample's last step
    rows, n = np.maximum(in_len - 1, 0), np.arange(N)
    last = 2 * tgt_len
    end_blank = history[rows, n, last]
    end_label = history[rows, n, np.maximum(last - 1, 0)]
    end_label = elementwise.where(_const(np.asarray(tgt_len == 0), lp), dead, end_label)
    nll = -joins.stack([end_blank, end_label]).logsumexp(0)
    # no alignment: what is left of the floor (far above any real log-likelihood's size)
    dead_rows = (nll.detach().numpy() > -dead / 2) | (in_len == 0)
    if dead_rows.any():
        nll = elementwise.where(_const(np.asarray(dead_rows), lp), np.inf, nll)
    return nll, dead_rows


def _const(arr: Any, like: Tensor) -> Tensor:
    """A constant (no gradient) on `like`'s device."""
    return creation.tensor(arr, device=like.device)


def _lengths(value: Lengths, n: int, name: str, unbatched: bool) -> np.ndarray:
    fn = "ctc_loss"
    arr = value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64).reshape(-1) if unbatched or arr.ndim == 1 else arr
    if arr.shape != (n,):
        want = "one length" if unbatched else f"one length per sample ({n})"
        raise ValueError(f"{fn}: {name} must give {want}, got shape {tuple(np.shape(value))}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{fn}: {name} must not be negative, got {int(arr.min())}")
    return arr.astype(np.int64)


def _padded_targets(
    targets: Any, tgt_len: np.ndarray, n: int, classes: int, unbatched: bool
) -> np.ndarray:
    """The targets as an (N, max target length) array of class indices."""
    fn = "ctc_loss"
    arr = targets.detach().numpy() if isinstance(targets, Tensor) else np.asarray(targets)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{fn}: targets must hold class indices (integers), got {arr.dtype}")
    width = int(tgt_len.max()) if tgt_len.size else 0
    if unbatched:
        arr = arr.reshape(1, -1)
    if arr.ndim == 2:
        if arr.shape[0] != n:
            raise ValueError(f"{fn}: targets has {arr.shape[0]} rows for {n} samples")
        if arr.shape[1] < width:
            raise ValueError(
                f"{fn}: targets has {arr.shape[1]} columns but a target length is {width}"
            )
        labels = arr[:, :width].astype(np.int64)
        used = np.arange(width)[None, :] < tgt_len[:, None]
    elif arr.ndim == 1:
        if arr.size != tgt_len.sum():
            raise ValueError(
                f"{fn}: concatenated targets hold {arr.size} labels but target_lengths sum "
                f"to {int(tgt_len.sum())}"
            )
        labels = np.zeros((n, width), dtype=np.int64)
        used = np.arange(width)[None, :] < tgt_len[:, None]
        labels[used] = arr
    else:
        raise ValueError(f"{fn}: targets must be (N, S) or 1-D, got shape {arr.shape}")
    picked = labels[used]
    if picked.size and (picked.min() < 0 or picked.max() >= classes):
        bad = picked[(picked < 0) | (picked >= classes)][0]
        raise ValueError(f"{fn}: target label {int(bad)} is not a class index in [0, {classes})")
    return np.where(used, labels, 0)
