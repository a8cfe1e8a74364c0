"""Margin, embedding and likelihood loss modules over `functional_losses_extra`.

Their repr is PyTorch's: the class name alone (`TripletMarginLoss()`), whatever the options.

>>> loss_fn = tg.nn.TripletMarginLoss(margin=0.5, swap=True)
>>> loss = loss_fn(tg.randn(4, 8), tg.randn(4, 8), tg.randn(4, 8))
"""

from __future__ import annotations

from collections.abc import Callable

from ..tensor import Tensor
from . import functional_ctc as CTC
from . import functional_likelihood as L
from . import functional_losses_extra as F
from .losses import _as_tensor, _Loss

__all__ = [
    "MarginRankingLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CosineEmbeddingLoss",
    "HingeEmbeddingLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiLabelMarginLoss",
    "MultiMarginLoss",
    "CTCLoss",
]


class _PlainLoss(_Loss):
    def extra_repr(self) -> str:
        return ""  # PyTorch's losses show no options


class MarginRankingLoss(_PlainLoss):
    """max(0, -y (x1 - x2) + margin) for y = 1 (x1 should rank higher) or -1."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class TripletMarginLoss(_PlainLoss):
    """max(d(a, p) - d(a, n) + margin, 0) with the p-norm distance; `swap` as Balntas et al."""

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction="mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        F._check_margin(type(self).__name__, margin)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_PlainLoss):
    """max(d(a, p) - d(a, n) + margin, 0) for a distance function `d` (default: pairwise)."""

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction="mean",
    ) -> None:
        super().__init__(reduction=reduction)
        F._check_margin(type(self).__name__, margin)
        self.distance_function = distance_function
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class CosineEmbeddingLoss(_PlainLoss):
    """1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin) for y = -1."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_PlainLoss):
    """x for y = 1, max(0, margin - x) for y = -1."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class PoissonNLLLoss(_PlainLoss):
    """Poisson negative log-likelihood of a rate (or its log, `log_input`)."""

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction="mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return L.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_PlainLoss):
    """Gaussian negative log-likelihood of a mean `input` with variance `var`."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction="mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return L.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class SoftMarginLoss(_PlainLoss):
    """log(1 + exp(-y x)) for targets y = 1 or -1."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_PlainLoss):
    """Per-class logistic loss against 0/1 targets, averaged over the classes."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _as_tensor(weight))

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiLabelMarginLoss(_PlainLoss):
    """Multi-label hinge loss; targets list class indices, ended by -1."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_PlainLoss):
    """Multi-class hinge loss, max(0, margin - x[y] + x[i]) ** p over the other classes."""

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight=None,
        size_average=None,
        reduce=None,
        reduction="mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got p={p}")
        weight = _as_tensor(weight)
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"MultiMarginLoss: weight must be one-dimensional, got shape {tuple(weight.shape)}"
            )
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class CTCLoss(_PlainLoss):
    """Connectionist temporal classification: -log p(target | input) summed over every
    alignment of the target to the input's time steps (`F.ctc_loss`).

    >>> ctc = tg.nn.CTCLoss(blank=0, zero_infinity=True)
    >>> logp = tg.randn(30, 4, 10, requires_grad=True).log_softmax(2)
    >>> loss = ctc(logp, tg.randint(1, 10, (4, 12)), [30] * 4, [12] * 4)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(None, None, reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(
        self,
        log_probs: Tensor,
        targets: Tensor,
        input_lengths: CTC.Lengths,
        target_lengths: CTC.Lengths,
    ) -> Tensor:
        return CTC.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            blank=self.blank,
            reduction=self.reduction,
            zero_infinity=self.zero_infinity,
        )
