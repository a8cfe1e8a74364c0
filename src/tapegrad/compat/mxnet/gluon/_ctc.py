"""The CTC negative log likelihood behind `gluon.loss.CTCLoss`, built from differentiable
tapegrad ops (the forward algorithm in log space), so backward gives its gradient.

For a label l of length L the extended sequence is blank, l1, blank, l2, ..., blank
(S = 2L + 1 states); alpha[s] is the log probability of all alignments of the first frames
that end in state s. A state is reached from itself, the state before it, and, when it
holds a label that differs from the label two states back, from that state (the skip over
a blank). The loss is -log(alpha[S-1] + alpha[S-2]) after the sequence's last frame.
"""

from __future__ import annotations

import numpy as np

# "log 0": finite, so that logsumexp over impossible states never takes -inf - -inf (nan);
# sums of a few thousand of them stay far from float32's limit
_NEG = -1e30


def _lengths(labels: np.ndarray, label_lengths: np.ndarray | None) -> np.ndarray:
    """Each label's length: given, or the entries before the first -1 (MXNet's padding)."""
    n, width = labels.shape
    if label_lengths is not None:
        lengths = np.asarray(label_lengths, dtype=np.int64).reshape(-1)
        if lengths.shape != (n,) or (lengths < 0).any() or (lengths > width).any():
            raise ValueError(
                f"CTCLoss: label_lengths must hold one length in [0, {width}] per sample "
                f"({n}), got {lengths.tolist()}"
            )
        return lengths
    padded = labels == -1
    return np.where(padded.any(axis=1), padded.argmax(axis=1), width)


def ctc_nll(log_scores, labels: np.ndarray, pred_lengths, label_lengths):
    """Per-sample CTC loss of scores `log_scores` (T, N, C) (softmax applied here; the
    blank is class C-1) against `labels` (N, L) of class indices; lengths optional."""
    import tapegrad as tg

    t_max, n, c = log_scores.shape
    blank = c - 1
    if labels.ndim != 2 or labels.shape[0] != n:
        raise ValueError(
            f"CTCLoss: label must be (batch, length) = ({n}, L) in the label layout, got shape "
            f"{labels.shape}"
        )
    lengths = _lengths(labels, label_lengths)
    frames = (
        np.full(n, t_max, dtype=np.int64)
        if pred_lengths is None
        else np.asarray(pred_lengths, dtype=np.int64).reshape(-1)
    )
    if frames.shape != (n,) or (frames < 1).any() or (frames > t_max).any():
        raise ValueError(
            f"CTCLoss: pred_lengths must hold one frame count in [1, {t_max}] per sample ({n}), "
            f"got {frames.tolist()}"
        )
    width = int(lengths.max()) if n else 0
    used = [labels[i, : lengths[i]] for i in range(n)]
    for i, seq in enumerate(used):
        if seq.size and (seq.min() < 0 or seq.max() >= c):
            raise IndexError(
                f"CTCLoss: sample {i} has label values {seq.tolist()} outside [0, {c - 1}] "
                f"(the scores have {c} classes, the last one the blank)"
            )
    s_max = 2 * width + 1
    ext = np.full((n, s_max), blank, dtype=np.int64)
    for i, seq in enumerate(used):
        ext[i, 1 : 2 * len(seq) : 2] = seq
    states = np.arange(s_max)
    live = states[None, :] < (2 * lengths + 1)[:, None]  # states past a label's end are unused
    skip = np.zeros((n, s_max), dtype=bool)  # may a state be entered from two states back?
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    skip &= live

    log_p = tg.nn.functional.log_softmax(log_scores, dim=2)
    ext_t = tg.tensor(ext)
    neg = tg.full((n, s_max), _NEG, dtype=log_p.dtype)
    live_t, skip_t = tg.tensor(live), tg.tensor(skip)

    def emissions(t: int):
        return tg.take_along_axis(log_p[t], ext_t, axis=1)

    start = np.zeros((n, s_max), dtype=bool)
    start[:, 0] = True
    start[:, 1] = lengths > 0
    alpha = tg.where(tg.tensor(start), emissions(0), neg)
    pad1 = tg.full((n, 1), _NEG, dtype=log_p.dtype)
    pad2 = tg.full((n, 2), _NEG, dtype=log_p.dtype)
    for t in range(1, int(frames.max())):
        from_prev = tg.cat([pad1, alpha[:, :-1]], dim=1)
        from_skip = tg.where(skip_t, tg.cat([pad2, alpha[:, :-2]], dim=1), neg)
        step = tg.logsumexp(tg.stack([alpha, from_prev, from_skip]), dim=0) + emissions(t)
        step = tg.where(live_t, step, neg)
        # a sequence that has ended keeps its last alpha
        going = tg.tensor((t < frames)[:, None])
        alpha = tg.where(going, step, alpha)
    last = 2 * lengths  # the final blank; the final label is one before it
    ends = tg.take_along_axis(alpha, tg.tensor(np.stack([last, np.maximum(last - 1, 0)], 1)), 1)
    ends = tg.where(tg.tensor(np.stack([np.ones(n, bool), lengths > 0], 1)), ends, pad2)
    log_lik = tg.logsumexp(ends, dim=1)
    # fewer frames than the label needs: no alignment, an infinite loss (as MXNet's)
    possible = tg.tensor(log_lik.numpy() > _NEG / 2)
    return tg.where(possible, -log_lik, tg.full((n,), np.inf, dtype=log_p.dtype))
