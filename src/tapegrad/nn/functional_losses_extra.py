"""Margin and embedding losses: PyTorch's names, arguments and formulas.

Each is a composite of differentiable ops (no rule of its own), so its gradient is what
autograd makes of the formula, and a second derivative works too. Masks built from integer
targets are constants.

    >>> import tapegrad.nn.functional as F
    >>> x = tg.randn(4, 3, requires_grad=True)
    >>> F.multi_margin_loss(x, tg.tensor([0, 2, 1, 0])).backward()
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ops import elementwise as _ew
from ..tensor import Tensor, _wrap
from .functional_activations import logsigmoid, softplus
from .functional_distance import pairwise_distance

__all__ = [
    "margin_ranking_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multilabel_margin_loss",
    "multi_margin_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(reduction: str, fn: str, size_average=None, reduce=None) -> str:
    """The reduction to use; PyTorch's deprecated size_average / reduce pair wins when set."""
    if size_average is not None or reduce is not None:
        if reduce is False:
            return "none"
        return "sum" if size_average is False else "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _tensor(x, name: str, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _broadcast(fn: str, **tensors: Tensor) -> None:
    """Shapes that broadcast, else a RuntimeError naming both (no NumPy message leaks)."""
    shapes = {k: tuple(v.shape) for k, v in tensors.items()}
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise RuntimeError(
            f"{fn}: the shapes don't broadcast together ({listed}); give the target the "
            "input's shape"
        ) from None


def _class_indices(target, fn: str) -> np.ndarray:
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.dtype.kind not in "iu":
        raise RuntimeError(
            f"{fn}: target must hold class indices (an int64 tensor), got dtype {t.dtype}; "
            "convert it with target.long()"
        )
    return t.astype(np.int64, copy=False)


# ================================================================= margin losses
def margin_ranking_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """max(0, -target * (input1 - input2) + margin), target 1 or -1 (which should rank higher).

    >>> margin_ranking_loss(tg.tensor([1.0]), tg.tensor([0.0]), tg.tensor([1.0]), margin=2.0)
    tensor(1.)
    """
    fn = "margin_ranking_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        _tensor(t, name, fn)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            f"{fn}: all input tensors should have the same number of dimensions, got sizes "
            f"input1 {tuple(input1.shape)}, input2 {tuple(input2.shape)}, target "
            f"{tuple(target.shape)}"
        )
    _broadcast(fn, input1=input1, input2=input2, target=target)
    loss = _ew.clamp_min(-target * (input1 - input2) + margin, 0)
    return _reduce(loss, reduction)


def _triplet_dims(fn: str, anchor, positive, negative) -> None:
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _tensor(t, name, fn)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            f"{fn}: the anchor, positive, and negative tensors are expected to have the same "
            f"number of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, "
            f"and negative {negative.ndim}D inputs"
        )


def _check_margin(fn: str, margin) -> None:
    if not margin > 0:
        raise ValueError(f"{fn}: margin must be greater than 0, got {margin}")


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin=1.0,
    p=2,
    eps=1e-6,
    swap=False,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """max(d(a, p) - d(a, n) + margin, 0) with d the p-norm distance of `pairwise_distance`.

    swap: use min(d(a, n), d(p, n)) as the negative distance (Balntas et al.).

    >>> a, p, n = tg.randn(4, 8), tg.randn(4, 8), tg.randn(4, 8)
    >>> triplet_margin_loss(a, p, n, margin=0.5).shape
    ()
    """
    fn = "triplet_margin_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _triplet_dims(fn, anchor, positive, negative)
    _check_margin(fn, margin)

    def dist(x1, x2):
        return pairwise_distance(x1, x2, p, eps)

    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


def _triplet(anchor, positive, negative, dist, margin, swap, reduction):
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _ew.minimum(d_neg, dist(positive, negative))
    return _reduce(_ew.clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(
    anchor,
    positive,
    negative,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin=1.0,
    swap=False,
    reduction="mean",
):
    """max(d(a, p) - d(a, n) + margin, 0) for any distance function `d` (default:
    `pairwise_distance`); swap as in `triplet_margin_loss`.

    >>> a, p, n = tg.randn(4, 8), tg.randn(4, 8), tg.randn(4, 8)
    >>> cos = lambda x, y: 1 - tg.cosine_similarity(x, y)
    >>> triplet_margin_with_distance_loss(a, p, n, distance_function=cos).shape
    ()
    """
    fn = "triplet_margin_with_distance_loss"
    reduction = _reduction(reduction, fn)
    _check_margin(fn, margin)
    _triplet_dims(fn, anchor, positive, negative)
    if distance_function is not None and not callable(distance_function):
        raise TypeError(
            f"{fn}: distance_function must be a callable of two tensors, got "
            f"{type(distance_function).__name__}"
        )
    dist = pairwise_distance if distance_function is None else distance_function
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


def cosine_embedding_loss(
    input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"
):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.

    Inputs are (N, D) with a target of (N,), or (D,) with a 0-d target.

    >>> x1, x2 = tg.randn(3, 5), tg.randn(3, 5)
    >>> cosine_embedding_loss(x1, x2, tg.tensor([1.0, -1.0, 1.0])).shape
    ()
    """
    fn = "cosine_embedding_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        _tensor(t, name, fn)
    if target.ndim > 1:
        raise RuntimeError(
            f"{fn}: expected a 0-D or 1-D target tensor (multi-target not supported), got "
            f"shape {tuple(target.shape)}"
        )
    if input1.ndim != target.ndim + 1 or input2.ndim != target.ndim + 1:
        raise RuntimeError(
            f"{fn}: a {target.ndim}-D target tensor expects {target.ndim + 1}-D input "
            f"tensors, but found inputs with sizes {tuple(input1.shape)} and "
            f"{tuple(input2.shape)}"
        )
    _broadcast(fn, input1=input1, input2=input2)
    dim = target.ndim
    eps = 1e-12  # PyTorch's: keeps a zero vector's cosine finite
    dot = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = dot / _ew.sqrt(mag)
    _broadcast(fn, cosine=cos, target=target)
    t = target._data
    pos = _wrap(np.asarray(t == 1, dtype=cos.dtype))
    neg = _wrap(np.asarray(t == -1, dtype=cos.dtype))
    loss = (1 - cos) * pos + _ew.clamp_min(cos - margin, 0) * neg
    return _reduce(loss, reduction)


def hinge_embedding_loss(
    input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"
):
    """x where target is 1, max(0, margin - x) where it is -1 (x is usually a distance).

    >>> hinge_embedding_loss(tg.tensor([0.3, 2.0]), tg.tensor([1.0, -1.0]))
    tensor(0.15)
    """
    fn = "hinge_embedding_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    _broadcast(fn, input=input, target=target)
    t = target._data
    not_pos = _wrap(np.asarray(t != 1, dtype=input.dtype))
    not_neg = _wrap(np.asarray(t != -1, dtype=input.dtype))
    loss = _ew.clamp_min(margin - input, 0) * not_pos + input * not_neg
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), the two-class logistic loss with targets 1 or -1.

    >>> soft_margin_loss(tg.tensor([0.0]), tg.tensor([1.0]))
    tensor(0.6931)
    """
    fn = "soft_margin_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    _broadcast(fn, input=input, target=target)
    return _reduce(softplus(-target * input), reduction)


def multilabel_soft_margin_loss(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """Per-class logistic loss of logits (N, C) against 0/1 targets, averaged over C.

    weight: a per-class rescaling that broadcasts to the input.

    >>> multilabel_soft_margin_loss(tg.zeros(2, 3), tg.ones(2, 3))
    tensor(0.6931)
    """
    fn = "multilabel_soft_margin_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _tensor(input, "input", fn)
    _tensor(target, "target", fn)
    _broadcast(fn, input=input, target=target)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        w = weight if isinstance(weight, Tensor) else _wrap(np.asarray(weight, input.dtype))
        _broadcast(fn, input=input, weight=w)
        loss = loss * w
    class_dim = max(input.ndim - 1, 0)
    n_classes = input.shape[class_dim] if input.ndim else 1
    loss = (loss.sum(class_dim) if input.ndim else loss) / n_classes
    return _reduce(loss, reduction)


def _margin_input(input, fn: str):
    """(input as (N, C), whether it was a single (C,) sample)."""
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise RuntimeError(
            f"{fn}: expected a non-empty (C,) vector or (N, C) matrix, got shape "
            f"{tuple(input.shape)}"
        )
    if input.ndim < 2:
        return input.reshape(1, -1), True
    return input, False


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: sum over target classes j and other classes i of
    max(0, 1 - (x[j] - x[i])), divided by C.

    `target` has the input's shape and lists the target class indices of each sample,
    ended by the first -1 (the rest is ignored).

    >>> multilabel_margin_loss(tg.tensor([0.1, 0.2, 0.4, 0.8]), tg.tensor([3, 0, -1, 1]))
    tensor(0.85)
    """
    fn = "multilabel_margin_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    _tensor(input, "input", fn)
    t = _class_indices(_tensor(target, "target", fn), fn)
    if tuple(t.shape) != tuple(input.shape):
        raise RuntimeError(
            f"{fn}: inconsistent target size {tuple(t.shape)} for input of size "
            f"{tuple(input.shape)}; the target lists class indices per sample, padded with -1"
        )
    x, single = _margin_input(input, fn)
    t = t.reshape(x.shape)
    n, c = x.shape
    if t.size and (int(t.min()) < -1 or int(t.max()) >= c):
        raise RuntimeError(
            f"{fn}: target values must be class indices in [0, {c}) or -1 (end of the list), "
            f"got values in [{int(t.min())}, {int(t.max())}]"
        )
    # listed[n, j]: position j comes before the sample's first -1
    listed = np.cumprod(t >= 0, axis=1).astype(bool)
    is_target = np.zeros((n, c), dtype=bool)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, c))
    is_target[rows[listed], t[listed]] = True
    safe = np.where(listed, t, 0)
    x_target = x.gather(1, _wrap(safe))  # (N, C): x at each listed target
    hinge = _ew.clamp_min(1 - x_target.unsqueeze(2) + x.unsqueeze(1), 0)  # (N, j, i)
    mask = (listed[:, :, None] & ~is_target[:, None, :]).astype(x.dtype)
    loss = (hinge * _wrap(mask)).sum((1, 2)) / c
    if single:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(
    input,
    target,
    p=1,
    margin=1.0,
    weight=None,
    size_average=None,
    reduce=None,
    reduction="mean",
):
    """Multi-class hinge loss: sum over classes i != y of max(0, margin - x[y] + x[i]) ** p,
    times weight[y], divided by C.

    >>> multi_margin_loss(tg.tensor([[0.1, 0.2, 0.4, 0.8]]), tg.tensor([3]))
    tensor(0.325)
    """
    fn = "multi_margin_loss"
    reduction = _reduction(reduction, fn, size_average, reduce)
    if p not in (1, 2):
        raise ValueError(f"{fn}: only p == 1 and p == 2 are supported, got p={p}")
    _tensor(input, "input", fn)
    t = _class_indices(_tensor(target, "target", fn), fn)
    x, single = _margin_input(input, fn)
    n, c = x.shape
    if t.shape != (n,) and not (single and t.ndim == 0):
        raise RuntimeError(
            f"{fn}: target should be 1-D with one class index per sample, expected size "
            f"({n},) but got {tuple(t.shape)} (input of shape {tuple(input.shape)})"
        )
    scalar_target = t.ndim == 0
    t = t.reshape(n)
    if t.size and (int(t.min()) < 0 or int(t.max()) >= c):
        raise RuntimeError(
            f"{fn}: target values must be class indices in [0, {c}), got values in "
            f"[{int(t.min())}, {int(t.max())}]"
        )
    x_target = x.gather(1, _wrap(t[:, None]))  # (N, 1)
    z = _ew.clamp_min(margin - x_target + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        w = weight._data if isinstance(weight, Tensor) else np.asarray(weight)
        if w.ndim != 1:
            raise ValueError(f"{fn}: weight must be one-dimensional, got shape {w.shape}")
        if w.shape[0] != c:
            raise RuntimeError(
                f"{fn}: inconsistent weight size, expected {c} (one per class) but got {w.shape}"
            )
        wt = weight[_wrap(t)] if isinstance(weight, Tensor) else _wrap(w[t].astype(x.dtype))
        z = z * wt.reshape(n, 1)
    others = np.ones((n, c), dtype=x.dtype)
    others[np.arange(n), t] = 0
    loss = (z * _wrap(others)).sum(1) / c
    if scalar_target:
        loss = loss.reshape(())
    return _reduce(loss, reduction)
