"""`mx.gluon.loss`: Gluon's losses. Each returns one value per sample: the loss averaged
over every axis but `batch_axis` (not a scalar; `backward()` sums it, as MXNet does).

    >>> net, x, y = mx.gluon.nn.Dense(1), mx.np.ones((4, 3)), mx.np.zeros((4, 1))
    >>> net.initialize()
    >>> loss_fn = mx.gluon.loss.L2Loss()      # 0.5 * (pred - label) ** 2
    >>> loss = loss_fn(net(x), y)             # shape (batch,)
"""

from __future__ import annotations

import math

import numpy as np

from ..._facade import facade_getattr
from .block import HybridBlock, block_args

__all__ = [
    "Loss",
    "L2Loss",
    "L1Loss",
    "SoftmaxCrossEntropyLoss",
    "SoftmaxCELoss",
    "SigmoidBinaryCrossEntropyLoss",
    "SigmoidBCELoss",
    "HuberLoss",
    "HingeLoss",
    "SquaredHingeLoss",
    "LogisticLoss",
    "KLDivLoss",
    "TripletLoss",
    "PoissonNLLLoss",
    "CosineEmbeddingLoss",
    "SDMLLoss",
    "CTCLoss",
]


def _tg():
    import tapegrad

    return tapegrad


class Loss(HybridBlock):
    """Base class: `weight` scales the loss, `batch_axis` is the axis kept."""

    def __init__(self, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._weight, self._batch_axis = weight, batch_axis

    def _finish(self, loss, sample_weight, weight=None):
        """Weighting, then the mean over every axis but the batch axis."""
        if sample_weight is not None:
            loss = loss * sample_weight
        weight = self._weight if weight is None else weight
        if weight is not None:
            loss = loss * weight
        axes = tuple(a for a in range(loss.ndim) if a != self._batch_axis % max(loss.ndim, 1))
        return loss.mean(axis=axes) if axes else loss

    @staticmethod
    def _like(label, pred):
        return _tg().reshape(label, pred.shape) if label.shape != pred.shape else label

    def _repr_body(self) -> str:
        return f"batch_axis={self._batch_axis}, w={self._weight}"


class L2Loss(Loss):
    """0.5 * (label - pred)**2, averaged over non-batch axes."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)

    def forward(self, pred, label, sample_weight=None):
        label = self._like(label, pred)
        loss = _tg().square(label - pred)
        return self._finish(loss, sample_weight, weight=self._weight / 2.0)


class L1Loss(Loss):
    """|label - pred|, averaged over non-batch axes."""

    def forward(self, pred, label, sample_weight=None):
        label = self._like(label, pred)
        return self._finish(abs(label - pred), sample_weight)


class SoftmaxCrossEntropyLoss(Loss):
    """Cross entropy of softmax(pred) against class indices (or distributions with
    `sparse_label=False`); `from_logits=True` means `pred` is already log-probabilities."""

    def __init__(
        self, axis=-1, sparse_label=True, from_logits=False, weight=None, batch_axis=0, **kwargs
    ) -> None:
        super().__init__(weight, batch_axis)
        self._axis, self._sparse, self._from_logits = axis, sparse_label, from_logits

    def forward(self, pred, label, sample_weight=None):
        tg = _tg()
        logp = pred if self._from_logits else tg.nn.functional.log_softmax(pred, dim=self._axis)
        if self._sparse:
            idx = label if label.dtype.kind in "iu" else label.astype("int64")
            idx = tg.unsqueeze(
                tg.reshape(
                    idx,
                    logp.shape[: self._axis % logp.ndim] + logp.shape[self._axis % logp.ndim + 1 :],
                ),
                self._axis % logp.ndim,
            )
            loss = -tg.take_along_axis(logp, idx, self._axis)
        else:
            label = self._like(label, logp)
            loss = -(logp * label).sum(axis=self._axis, keepdims=True)
        return self._finish(loss, sample_weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of sigmoid(pred) (or of pred with `from_sigmoid=True`)."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._from_sigmoid = from_sigmoid

    def forward(self, pred, label, sample_weight=None, pos_weight=None):
        tg = _tg()
        label = self._like(label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                # the stable form MXNet uses: max(x, 0) - x*z + log(1 + exp(-|x|))
                loss = tg.relu(pred) - pred * label + tg.softplus(-abs(pred))
            else:
                log_weight = 1 + (pos_weight - 1) * label
                loss = pred - pred * label + log_weight * (tg.softplus(-abs(pred)) + tg.relu(-pred))
        else:
            eps = 1e-12
            loss = -(tg.log(pred + eps) * label + tg.log(1.0 - pred + eps) * (1.0 - label))
            if pos_weight is not None:
                loss = -(
                    tg.log(pred + eps) * label * pos_weight
                    + tg.log(1.0 - pred + eps) * (1.0 - label)
                )
        return self._finish(loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class HuberLoss(Loss):
    """0.5 * d**2 / rho where |d| < rho, else |d| - 0.5 * rho (d = label - pred)."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._rho = rho

    def forward(self, pred, label, sample_weight=None):
        tg = _tg()
        d = abs(self._like(label, pred) - pred)
        loss = tg.where(d > self._rho, d - 0.5 * self._rho, (0.5 / self._rho) * tg.square(d))
        return self._finish(loss, sample_weight)


class HingeLoss(Loss):
    """max(0, margin - pred * label), labels -1 or 1; averaged over non-batch axes."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._margin = margin

    def forward(self, pred, label, sample_weight=None):
        loss = _tg().relu(self._margin - pred * self._like(label, pred))
        return self._finish(loss, sample_weight)


class SquaredHingeLoss(HingeLoss):
    """max(0, margin - pred * label) ** 2, labels -1 or 1."""

    def forward(self, pred, label, sample_weight=None):
        tg = _tg()
        loss = tg.square(tg.relu(self._margin - pred * self._like(label, pred)))
        return self._finish(loss, sample_weight)


class LogisticLoss(Loss):
    """log(1 + exp(-pred * label)) for labels -1/1 (`label_format="signed"`), or the same
    with 0/1 labels (`"binary"`: sigmoid binary cross entropy on logits)."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs) -> None:
        super().__init__(weight, batch_axis)
        if label_format not in ("signed", "binary"):
            raise ValueError(
                f"LogisticLoss: label_format must be 'signed' or 'binary', got {label_format!r}"
            )
        self._label_format = label_format

    def forward(self, pred, label, sample_weight=None):
        tg = _tg()
        label = self._like(label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0  # -1/1 -> 0/1
        # the stable form: max(x, 0) - x*z + log(1 + exp(-|x|))
        loss = tg.relu(pred) - pred * label + tg.softplus(-abs(pred))
        return self._finish(loss, sample_weight)


class KLDivLoss(Loss):
    """label * (log(label) - pred), `pred` log-probabilities (`from_logits=True`, the
    default) or logits (then log_softmax over `axis` is applied first); averaged over
    non-batch axes (so a sum over classes is the mean times the class count)."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._from_logits, self._axis = from_logits, axis

    def forward(self, pred, label, sample_weight=None):
        tg = _tg()
        if not self._from_logits:
            pred = tg.nn.functional.log_softmax(pred, dim=self._axis)
        # the 1e-12 keeps log finite where a label probability is 0 (MXNet's constant)
        loss = label * (tg.log(label + 1e-12) - pred)
        return self._finish(loss, sample_weight)


class TripletLoss(Loss):
    """max(0, |pred - positive|^2 - |pred - negative|^2 + margin), the squared distances
    summed over the non-batch axes: one value per sample."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._margin = margin

    def forward(self, pred, positive, negative, sample_weight=None):
        tg = _tg()
        positive, negative = self._like(positive, pred), self._like(negative, pred)
        diff = tg.square(positive - pred) - tg.square(negative - pred)
        axes = tuple(a for a in range(diff.ndim) if a != self._batch_axis % diff.ndim)
        loss = tg.relu((diff.sum(axis=axes) if axes else diff) + self._margin)
        return self._weighted(loss, sample_weight)

    def _weighted(self, loss, sample_weight):
        if sample_weight is not None:
            loss = loss * sample_weight
        return loss * self._weight if self._weight is not None else loss


class PoissonNLLLoss(Loss):
    """Negative log likelihood of `target` under a Poisson of rate exp(pred)
    (`from_logits=True`: exp(pred) - target * pred) or of rate pred (`from_logits=False`:
    pred - target * log(pred + epsilon)); `compute_full=True` adds Stirling's approximation
    of log(target!) where target > 1. Returns the mean over every element (a scalar), as
    MXNet does."""

    def __init__(
        self, weight=None, from_logits=True, batch_axis=0, compute_full=False, **kwargs
    ) -> None:
        super().__init__(weight, batch_axis)
        self._from_logits, self._compute_full = from_logits, compute_full

    def forward(self, pred, target, sample_weight=None, epsilon=1e-08):
        tg = _tg()
        target = self._like(target, pred)
        if self._from_logits:
            loss = tg.exp(pred) - target * pred
        else:
            loss = pred - target * tg.log(pred + epsilon)
        if self._compute_full:
            # where target <= 1 the term is 0; target is clamped there so log stays finite
            # (a 0 * -inf would be nan)
            big = target > 1
            t = tg.where(big, target, tg.ones_like(target) * 2)
            stirling = t * tg.log(t) - t + 0.5 * tg.log(2 * math.pi * t)
            loss = loss + tg.where(big, stirling, tg.zeros_like(stirling))
        if sample_weight is not None:
            loss = loss * sample_weight
        if self._weight is not None:
            loss = loss * self._weight
        return loss.mean()


class CosineEmbeddingLoss(Loss):
    """1 - cos(input1, input2) where label is 1, max(0, cos - margin) where label is -1
    (cosines over the last axis); one value per sample, shape (batch, 1) as in MXNet."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self._margin = margin

    def forward(self, input1, input2, label, sample_weight=None):
        tg = _tg()
        input1 = self._like(input1, input2)
        label = tg.reshape(label, (-1, 1))
        dot = tg.reshape((input1 * input2).sum(axis=-1), (-1, 1))
        norms = tg.reshape(
            tg.sqrt(tg.square(input1).sum(axis=-1)) * tg.sqrt(tg.square(input2).sum(axis=-1)),
            (-1, 1),
        )
        cos = dot / tg.maximum(norms, tg.full_like(norms, 1e-12))
        pos = (1 - cos) * (label == 1)
        neg = tg.relu((cos - self._margin) * (label == -1))
        loss = pos + neg
        if sample_weight is not None:
            loss = loss * sample_weight
        return loss * self._weight if self._weight is not None else loss


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss for a batch of aligned pairs (x1[i], x2[i]):
    the KL divergence between a smoothed identity (1 - smoothing_parameter on the diagonal,
    the rest spread over the other pairs) and softmax(-squared distances) over each row
    of the batch-by-batch distance matrix. One value per sample."""

    def __init__(self, smoothing_parameter=0.3, weight=1.0, batch_axis=0, **kwargs) -> None:
        super().__init__(weight, batch_axis)
        self.smoothing_parameter = smoothing_parameter
        self.kl_loss = KLDivLoss(from_logits=True)

    def forward(self, x1, x2):
        tg = _tg()
        n = x1.shape[0]
        if n < 2:
            raise ValueError(
                f"SDMLLoss: needs a batch of at least 2 pairs (it contrasts each pair with the "
                f"others), got {n}"
            )
        distances = tg.square(tg.unsqueeze(x1, 1) - tg.unsqueeze(x2, 0)).sum(axis=2)
        log_p = tg.nn.functional.log_softmax(-distances, dim=1)
        eye = np.eye(n, dtype=np.float64)
        s = self.smoothing_parameter
        labels = tg.tensor((eye * (1 - s) + (1 - eye) * s / (n - 1)).astype(log_p.dtype))
        # KLDivLoss averages over the n columns: times n gives the per-row sum
        return self.kl_loss(log_p, labels) * n


class CTCLoss(Loss):
    """Connectionist temporal classification: the negative log likelihood of each label
    sequence summed over every alignment of it with the `pred` frames.

    `pred` holds unnormalized scores (a softmax over the last axis is applied), laid out
    "NTC" (default) or "TNC"; `label` ("NT" or "TN") holds class indices 0..C-2 (the blank is
    the last class, C-1), padded with -1 unless `label_lengths` gives each length;
    `pred_lengths` gives each sequence's number of frames (default: all T). Returns one
    value per sample.
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs) -> None:
        if layout not in ("NTC", "TNC"):
            raise ValueError(f"CTCLoss: layout must be 'NTC' or 'TNC', got {layout!r}")
        if label_layout not in ("NT", "TN"):
            raise ValueError(f"CTCLoss: label_layout must be 'NT' or 'TN', got {label_layout!r}")
        self._layout, self._label_layout = layout, label_layout
        super().__init__(weight, label_layout.find("N"))

    def forward(self, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        from ._ctc import ctc_nll

        tg = _tg()
        if self._layout == "NTC":
            pred = tg.swapaxes(pred, 0, 1)  # -> (T, N, C)
        labels = np.asarray(_numpy(label))
        if self._label_layout == "TN":
            labels = labels.T
        loss = ctc_nll(
            pred,
            labels.astype(np.int64),
            None if pred_lengths is None else np.asarray(_numpy(pred_lengths)).astype(np.int64),
            None if label_lengths is None else np.asarray(_numpy(label_lengths)).astype(np.int64),
        )
        if sample_weight is not None:
            loss = loss * tg.reshape(sample_weight, loss.shape)
        return loss * self._weight if self._weight is not None else loss


def _numpy(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


__getattr__ = facade_getattr(__name__, "the MXNet facade (mx.gluon.loss)", {}, {})
