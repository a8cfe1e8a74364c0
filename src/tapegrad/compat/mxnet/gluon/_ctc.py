"""The CTC negative log likelihood behind `gluon.loss.CTCLoss`: MXNet's conventions (scores
before the softmax, the blank is the last class, labels padded with -1, lengths optional)
checked here, the recursion itself `tg.nn.functional_ctc.ctc_nll` (PyTorch's ctc_loss is
built on it too). An impossible alignment gives an infinite loss, as MXNet's.
"""

from __future__ import annotations

import numpy as np

from ....nn import functional_ctc


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
    log_p = tg.nn.functional.log_softmax(log_scores, dim=2)
    padded = np.zeros((n, width), dtype=np.int64)
    for i, seq in enumerate(used):
        padded[i, : len(seq)] = seq
    nll, _ = functional_ctc.ctc_nll(log_p, padded, frames, lengths, blank)
    return nll
