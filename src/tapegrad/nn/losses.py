"""Loss modules: thin wrappers over tg.nn.functional, `reduction` none / mean / sum.

>>> loss_fn = tg.nn.CrossEntropyLoss(label_smoothing=0.1)
>>> loss = loss_fn(tg.randn(4, 3), tg.tensor([0, 1, 2, 1]))
"""

from __future__ import annotations

from ..creation import tensor
from ..tensor import Tensor
from . import functional_core as F
from .module import Module

__all__ = [
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
]


def _as_tensor(value):
    """Class weights given as a list or an array become a tensor buffer."""
    return value if value is None or isinstance(value, Tensor) else tensor(value)


class _Loss(Module):
    _reductions: tuple[str, ...] = ("none", "mean", "sum")

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:  # PyTorch's deprecated pair
            reduction = "none" if reduce is False else ("sum" if size_average is False else "mean")
        if reduction not in self._reductions:
            raise ValueError(
                f"{type(self).__name__}: reduction must be one of "
                f"{self._reductions}, got {reduction!r}"
            )
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction='{self.reduction}'"


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _as_tensor(weight))


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below `beta`, absolute error above it."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Half the squared error below `delta`, `delta` * (|error| - delta / 2) above it."""

    def __init__(self, reduction="mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy of logits against class indices or probabilities (fused)."""

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction="mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities at class indices."""

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction="mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Sigmoid + binary cross-entropy, stable for any logit; pos_weight weighs positives."""

    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", _as_tensor(pos_weight))

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, weight=self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class KLDivLoss(_Loss):
    """KL divergence with `input` as log-probabilities; prefer reduction='batchmean'."""

    _reductions = ("none", "mean", "sum", "batchmean")

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
