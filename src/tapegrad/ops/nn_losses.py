"""Loss ops: fused softmax cross-entropy and NLL (class indices, weights, ignore_index,
label smoothing), binary cross-entropy (with logits: stable, pos_weight) and KL divergence.

The class-index losses keep their rules differentiable with helper ops of their own
(`cross_entropy_backward`, `nll_loss_backward`), as described in `nn_ops.py`.
"""

from __future__ import annotations

import math

import numpy as np

from .nn_ops import _log_softmax, _softmax, _torch_arr
from .quiet import quiet
from .registry import defop

_REDUCTIONS = ("none", "mean", "sum")


# ================================================================= class-index losses
@defop(differentiable=False, name="class_coefficients", array_twin=True)
def _class_coefficients(
    xp,
    target,
    *,
    num_classes,
    dtype,
    weight=None,
    ignore_index=-100,
    label_smoothing=0.0,
    reduction="mean",
):
    """A (N, C, d...) array A such that the loss is -sum(A * logp) (per row for 'none').

    It holds the class weights, the label-smoothing mass, the ignore mask and, for 'mean',
    the division by the total weight of the counted targets (as PyTorch normalises)."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    classes = xp.arange(num_classes).reshape((1, num_classes) + (1,) * (target.ndim - 1))
    wt = valid.astype(dtype) if weight is None else weight[safe] * valid
    if reduction == "mean" and valid.any():  # nothing counted: zero coefficients (PyTorch's
        with np.errstate(divide="ignore", invalid="ignore"):  # zero gradient; the loss is nan)
            scale = 1.0 / wt.sum()  # counted weights summing to 0: inf, so NaN as in PyTorch
    else:
        scale = 1.0
    picked = xp.expand_dims((1.0 - label_smoothing) * wt * scale, 1)
    with np.errstate(invalid="ignore"):
        coef = xp.where(classes == xp.expand_dims(safe, 1), picked, 0)
        if label_smoothing:
            wc = 1.0 if weight is None else weight.reshape(classes.shape)
            coef = coef + (label_smoothing / num_classes) * wc * xp.expand_dims(valid * scale, 1)
    return coef.astype(dtype, copy=False)


def _logit_coefficients(xp, x, target, weight, ignore_index, label_smoothing, reduction):
    """The coefficients of cross-entropy on logits `x` (N, C, d...): one call for the loss
    and its gradient, so the two weigh the classes alike."""
    return _class_coefficients.forward(
        xp,
        target,
        num_classes=x.shape[1],
        dtype=x.dtype,
        weight=weight,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
        reduction=reduction,
    )


def _nothing_counted(target, ignore_index, reduction):
    """A 'mean' over no counted target (every one ignored, or an empty batch): the loss is
    nan, as in PyTorch, while its gradient is zero."""
    return reduction == "mean" and not (target != ignore_index).any()


def _reduce_rows(xp, prod, reduction):
    return -prod.sum(axis=1) if reduction == "none" else -prod.sum()


@defop(saves=("x", "target"), name="cross_entropy")
def _cross_entropy(
    xp, x, target, *, weight=None, ignore_index=-100, label_smoothing=0.0, reduction="mean"
):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        logp = _log_softmax.forward(xp, x, axis=1)
        if not label_smoothing:  # pick the targets' log-probabilities: no coefficient array
            return _picked_loss(xp, logp, target, weight, ignore_index, reduction)
        if _nothing_counted(target, ignore_index, reduction):
            return xp.full((), np.nan, dtype=x.dtype)
        coef = _logit_coefficients(xp, x, target, weight, ignore_index, label_smoothing, reduction)
        return _reduce_rows(xp, coef * logp, reduction)


def _plain_targets(xp, target, ignore_index):
    """(target indices with a class axis, validity mask or None when all count, count)."""
    valid = target != ignore_index
    if valid.all():
        return target[:, None], None, target.size
    safe = xp.where(valid, target, 0)
    return safe[:, None], valid, int(valid.sum())


@_cross_entropy.vjp
def _(xp, g, x, target, **params):
    return xp.cross_entropy_backward(g, x, target, **params), None


@defop(saves=("g", "x", "target"), name="cross_entropy_backward", array_twin=True)
def _cross_entropy_backward(
    xp, g, x, target, *, weight=None, ignore_index=-100, label_smoothing=0.0, reduction="mean"
):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        gx = _softmax.forward(xp, x, axis=1)
        scale = g if reduction != "none" else xp.expand_dims(g, 1)
        if weight is None and not label_smoothing:  # softmax minus one-hot, rows scaled
            idx, valid, count = _plain_targets(xp, target, ignore_index)
            if gx.ndim == 2:
                gx[xp.arange(gx.shape[0]), idx[:, 0]] -= 1  # each row once: no repeated index
            else:
                classes = xp.arange(gx.shape[1]).reshape((1, -1) + (1,) * (gx.ndim - 2))
                gx -= classes == idx
            if valid is not None:
                gx *= xp.expand_dims(valid, 1)
            if reduction == "mean" and count:  # nothing counted: the gradient stays zero
                scale = scale / x.dtype.type(count)
            gx *= scale
            return gx
        coef = _logit_coefficients(xp, x, target, weight, ignore_index, label_smoothing, reduction)
        gx *= coef.sum(axis=1, keepdims=True)
        gx -= coef
        gx *= scale
        return gx


@_cross_entropy_backward.vjp
def _(xp, h, g, x, target, *, needs, reduction="mean", **params):
    coef = xp.class_coefficients(
        target, num_classes=x.shape[1], dtype=x.dtype, reduction=reduction, **params
    )
    csum = xp.sum(coef, axis=1, keepdims=True)
    p = xp.softmax(x, axis=1)
    rows = reduction == "none"
    gg = gx = None
    if needs[0]:
        t = h * (p * csum - coef)
        gg = xp.sum(t, axis=1) if rows else xp.sum(t)
    if needs[1]:
        gx = (xp.expand_dims(g, 1) if rows else g) * csum * xp.softmax_backward(h, p, axis=1)
    return gg, gx, None


@defop(saves=("x", "target"), name="nll_loss", array_twin=True)
def _nll_loss(xp, x, target, *, weight=None, ignore_index=-100, reduction="mean"):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        return _picked_loss(xp, x, target, weight, ignore_index, reduction)


def _picked_loss(xp, logp, target, weight, ignore_index, reduction):
    """-logp at each target, weighted: only the targets' entries are read, so a -inf
    log-probability of another class (a masked class) leaves the loss finite, as in PyTorch."""
    idx, valid, _ = _plain_targets(xp, target, ignore_index)
    safe = idx[:, 0]
    if logp.ndim == 2:  # one class axis: a pick per row (take_along_axis's wrapper costs more)
        loss = -logp[xp.arange(logp.shape[0]), safe]
    else:
        loss = -xp.take_along_axis(logp, idx, axis=1)[:, 0]
    wt = None if weight is None else weight[safe].astype(logp.dtype, copy=False)
    if wt is not None:
        loss = loss * wt
    if valid is not None:
        loss = xp.where(valid, loss, 0)
        wt = valid.astype(logp.dtype) if wt is None else xp.where(valid, wt, 0)
    if reduction == "none":
        return loss.astype(logp.dtype, copy=False)
    total = loss.sum(dtype=logp.dtype)
    if reduction == "sum":
        return total
    count = logp.dtype.type(target.size) if wt is None else wt.sum(dtype=logp.dtype)
    return total / count  # nothing counted: 0 / 0 = nan, as PyTorch


@_nll_loss.vjp
def _(xp, g, x, target, **params):
    # x is saved for its shape and dtype only (it is log_softmax's saved output anyway)
    return xp.nll_loss_backward(g, target, num_classes=x.shape[1], dtype=x.dtype, **params), None


@defop(saves=("target",), name="nll_loss_backward", array_twin=True)
def _nll_loss_backward(
    xp, g, target, *, num_classes, dtype, weight=None, ignore_index=-100, reduction="mean"
):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        coef = _class_coefficients.forward(
            xp,
            target,
            num_classes=num_classes,
            dtype=dtype,
            weight=weight,
            ignore_index=ignore_index,
            reduction=reduction,
        )
        return -coef * (g if reduction != "none" else xp.expand_dims(g, 1))


@_nll_loss_backward.vjp
def _(xp, h, target, *, num_classes, dtype, **params):
    # the map g -> -A g is linear; its adjoint is g -> -sum(A * h) (nll_loss itself, except
    # that a 'mean' over no counted target is 0 here, not nan)
    coef = xp.class_coefficients(target, num_classes=num_classes, dtype=dtype, **params)
    prod = coef * h
    return (-xp.sum(prod, axis=1) if params.get("reduction") == "none" else -xp.sum(prod)), None


def _class_samples(rng, n_classes=5):
    x = lambda *s: rng.standard_normal(s)
    t = lambda *s: rng.integers(0, n_classes, size=s)
    with_ignored = t(6)
    with_ignored[[1, 4]] = -100
    w = rng.uniform(0.5, 2.0, size=n_classes)
    return [
        ((x(4, 5), t(4)), {}),
        ((x(4, 5), t(4)), {"reduction": "sum"}),
        ((x(4, 5), t(4)), {"reduction": "none"}),
        ((x(6, 5), with_ignored), {"weight": w}),
        ((x(6, 5), with_ignored), {"weight": w, "reduction": "none"}),
        ((x(2, 5, 3), t(2, 3)), {}),  # spatial: (N, C, d)
        ((x(4, 5), t(4)), {"ignore_index": 2, "reduction": "sum"}),
    ]


@_cross_entropy.sample
def _(rng):
    smooth = [
        ((rng.standard_normal((4, 5)), rng.integers(0, 5, size=4)), {"label_smoothing": 0.2}),
        (
            (rng.standard_normal((4, 5)), np.array([0, -100, 3, 1])),
            {"label_smoothing": 0.1, "weight": rng.uniform(0.5, 2.0, size=5)},
        ),
        (
            (rng.standard_normal((2, 5, 3)), rng.integers(0, 5, size=(2, 3))),
            {"label_smoothing": 0.3, "reduction": "none"},
        ),
    ]
    return _class_samples(rng) + smooth


@_cross_entropy.reference
def _(torch, x, target, weight=None, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    return torch.nn.functional.cross_entropy(
        x,
        target,
        weight=_torch_arr(torch, weight, x),
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
        reduction=reduction,
    )


@_cross_entropy_backward.sample
def _(rng):
    out = []
    for (x, target), params in _cross_entropy.samples(rng):
        g_shape = target.shape if params.get("reduction") == "none" else ()
        out.append(((rng.standard_normal(g_shape), x, target), params))
    return out


@_nll_loss.sample
def _(rng):
    return [((_log_softmax.forward(np, x, axis=1), t), p) for (x, t), p in _class_samples(rng)]


@_nll_loss.reference
def _(torch, x, target, weight=None, ignore_index=-100, reduction="mean"):
    # gather-based, so PyTorch's first derivative is (like ours) a constant of x
    valid = target != ignore_index
    safe = torch.where(valid, target, 0)
    picked = -x.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = valid.to(x.dtype) if weight is None else _torch_arr(torch, weight, x)[safe] * valid
    loss = picked * w
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w.sum()


@_nll_loss_backward.sample
def _(rng):
    out = []
    for (x, target), params in _class_samples(rng):
        g_shape = target.shape if params.get("reduction") == "none" else ()
        out.append(
            (
                (rng.standard_normal(g_shape), target),
                {"num_classes": x.shape[1], "dtype": x.dtype, **params},
            )
        )
    return out


# ================================================================= binary losses
def _reduce(xp, loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if loss.size == 0:  # the mean over an empty batch is nan, as in PyTorch (NumPy would warn)
        return xp.full((), np.nan, dtype=loss.dtype)
    return loss.mean()


def _numel(x):
    return math.prod(x.shape)  # x.size is a method on tensors, an int on arrays


def _shape(a):
    return getattr(a, "shape", ())  # a Python number has none


def _check_shapes(what, x, y, **weights):
    """The target matches the input's shape, and each weight broadcasts to it without growing
    it (as PyTorch checks; the public functions check too, with the user's argument names)."""
    shape = tuple(_shape(x))
    if tuple(_shape(y)) != shape:
        raise ValueError(
            f"{what}: target shape {tuple(_shape(y))} must match the input shape {shape}"
        )
    for name, w in weights.items():
        if w is None:
            continue
        w_shape = tuple(_shape(w))
        try:
            ok = np.broadcast_shapes(w_shape, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"{what}: {name} of shape {w_shape} doesn't broadcast to the input shape "
                f"{shape}; give one weight per element (or per class)"
            )


def _scale(g, n, reduction):
    """The incoming gradient spread over the elements of a reduced loss."""
    return g / n if reduction == "mean" else g


@defop(saves=("x", "y"), name="binary_cross_entropy_with_logits")
def _bce_logits(xp, x, y, *, weight=None, pos_weight=None, reduction="mean"):
    _check_shapes("binary_cross_entropy_with_logits", x, y, weight=weight, pos_weight=pos_weight)
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        sp = xp.logaddexp(0, -x)  # softplus(-x) = -log(sigmoid(x)), stable for any x
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * y  # weight of the positive term
        loss = (1 - y) * x + lw * sp
        if weight is not None:
            loss = loss * weight
        return _reduce(xp, loss, reduction)


@_bce_logits.vjp
def _(xp, g, x, y, *, weight=None, pos_weight=None, reduction="mean", needs):
    g = _scale(g, _numel(x), reduction)
    if weight is not None:
        g = g * weight
    e = xp.exp(-xp.abs(x))
    sig_neg = xp.where(x >= 0, e, 1.0) / (1 + e)  # sigmoid(-x) without overflow
    gx = gy = None
    if needs[0]:
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * y
        gx = g * ((1 - y) - lw * sig_neg)
    if needs[1]:
        gy = -g * x
        if pos_weight is not None:
            gy = gy + g * (pos_weight - 1) * (xp.log1p(e) + xp.maximum(-x, 0))
    return gx, gy


@_bce_logits.sample
def _(rng):
    x = rng.standard_normal((3, 4)) * 3
    y = rng.uniform(0, 1, size=(3, 4))
    return [
        ((x, y), {}),
        ((x, y), {"reduction": "sum"}),
        ((x, y), {"reduction": "none", "weight": rng.uniform(0.5, 2, size=(4,))}),
        ((x, y), {"pos_weight": rng.uniform(0.5, 3, size=(4,))}),
        ((rng.standard_normal((5,)), rng.uniform(0, 1, size=(5,))), {"pos_weight": np.array(2.0)}),
    ]


@_bce_logits.reference
def _(torch, x, y, weight=None, pos_weight=None, reduction="mean"):
    return torch.nn.functional.binary_cross_entropy_with_logits(
        x,
        y,
        weight=_torch_arr(torch, weight, x),
        pos_weight=_torch_arr(torch, pos_weight, x),
        reduction=reduction,
    )


_LOG_FLOOR = -100.0  # PyTorch clamps log(p) and log(1 - p) here, so p = 0 or 1 stays finite
_BCE_EPS = 1e-12


@defop(saves=("x", "y"), name="binary_cross_entropy")
def _bce(xp, x, y, *, weight=None, reduction="mean"):
    _check_shapes("binary_cross_entropy", x, y, weight=weight)
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        with np.errstate(divide="ignore"):
            log_p = xp.maximum(xp.log(x), _LOG_FLOOR)
            log_q = xp.maximum(xp.log(1 - x), _LOG_FLOOR)
        loss = -(y * log_p + (1 - y) * log_q)
        if weight is not None:
            loss = loss * weight
        return _reduce(xp, loss, reduction)


@_bce.vjp
def _(xp, g, x, y, *, weight=None, reduction="mean", needs):
    g = _scale(g, _numel(x), reduction)
    if weight is not None:
        g = g * weight
    gx = g * (x - y) / xp.maximum(x * (1 - x), _BCE_EPS) if needs[0] else None
    gy = None
    if needs[1]:
        gy = g * (xp.maximum(xp.log(1 - x), _LOG_FLOOR) - xp.maximum(xp.log(x), _LOG_FLOOR))
    return gx, gy


@_bce.sample
def _(rng):
    p = rng.uniform(0.1, 0.9, size=(3, 4))
    y = rng.uniform(0, 1, size=(3, 4))
    return [
        ((p, y), {}),
        ((p, y), {"reduction": "sum"}),
        ((p, y), {"reduction": "none", "weight": rng.uniform(0.5, 2, size=(3, 4))}),
    ]


@_bce.reference
def _(torch, x, y, weight=None, reduction="mean"):
    return torch.nn.functional.binary_cross_entropy(
        x, y, weight=_torch_arr(torch, weight, x), reduction=reduction
    )


@defop(saves=("x", "t"), name="kl_div")
def _kl_div(xp, x, t, *, reduction="mean", log_target=False):
    with quiet():  # NaN/Inf stay in the values silently, as in PyTorch
        if log_target:
            loss = xp.exp(t) * (t - x)
        else:  # xlogy(t, t) - t * x: zero where t == 0, NaN where t < 0 (as PyTorch)
            pos = t > 0
            xlogy = xp.where(pos, t * xp.log(xp.where(pos, t, 1)), xp.where(t == 0, 0, np.nan))
            loss = xlogy - t * x
        if reduction == "batchmean":  # an empty batch: 0 / 0 = nan, as in PyTorch
            return loss.sum() / x.dtype.type(x.shape[0] if x.ndim else 1)
        return _reduce(xp, loss, reduction)


@_kl_div.vjp
def _(xp, g, x, t, *, reduction="mean", log_target=False, needs):
    if reduction == "batchmean":
        g = g / (x.shape[0] if x.ndim else 1)
    else:  # 'mean' divides by the size of the loss, which is x and t broadcast together
        g = _scale(g, math.prod(np.broadcast_shapes(x.shape, _shape(t))), reduction)
    gx = gt = None
    if log_target:
        e = xp.exp(t)
        gx = -g * e if needs[0] else None
        gt = g * e * (t - x + 1) if needs[1] else None
    else:
        gx = -g * t if needs[0] else None
        if needs[1]:  # PyTorch's xlogy rule: NaN unless 0 < t < inf (log 0 + 0/0 at t = 0)
            ok = (t > 0) & (t < math.inf)
            gt = g * xp.where(ok, xp.log(xp.where(ok, t, 1)) + 1 - x, np.nan)
    return gx, gt


@_kl_div.sample
def _(rng):
    x = np.log(rng.uniform(0.1, 1, size=(3, 4)))
    t = rng.uniform(0.1, 1, size=(3, 4))
    return [
        ((x, t), {}),
        ((x, t), {"reduction": "batchmean"}),
        ((x, t), {"reduction": "sum"}),
        ((x, t), {"reduction": "none"}),
        ((x, np.log(t)), {"log_target": True, "reduction": "batchmean"}),
    ]


@_kl_div.reference
def _(torch, x, t, reduction="mean", log_target=False):
    import warnings

    with warnings.catch_warnings():  # PyTorch warns that 'mean' is not the KL mean
        warnings.simplefilter("ignore")
        return torch.nn.functional.kl_div(x, t, reduction=reduction, log_target=log_target)
