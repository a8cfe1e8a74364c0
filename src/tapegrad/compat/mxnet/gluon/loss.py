"""`mx.gluon.loss`: Gluon's losses. Each returns one value per sample: the loss averaged
over every axis but `batch_axis` (not a scalar; `backward()` sums it, as MXNet does).

    >>> net, x, y = mx.gluon.nn.Dense(1), mx.np.ones((4, 3)), mx.np.zeros((4, 1))
    >>> net.initialize()
    >>> loss_fn = mx.gluon.loss.L2Loss()      # 0.5 * (pred - label) ** 2
    >>> loss = loss_fn(net(x), y)             # shape (batch,)
"""

from __future__ import annotations

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


__getattr__ = facade_getattr(
    __name__,
    "the MXNet facade (mx.gluon.loss)",
    {},
    {
        name: "not provided; write it with mx.np operations in a Loss subclass"
        for name in (
            "KLDivLoss",
            "CTCLoss",
            "HingeLoss",
            "SquaredHingeLoss",
            "LogisticLoss",
            "TripletLoss",
            "PoissonNLLLoss",
            "CosineEmbeddingLoss",
            "SDMLLoss",
        )
    },
)
