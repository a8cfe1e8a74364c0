"""tg.nn.functional: activations, softmax, losses, normalisation, dropout, embedding, attention.

PyTorch's names and arguments (`dim=`; NumPy's `axis=` is accepted too). The fused ops live
in `ops/nn_ops.py`; this module validates arguments and calls them.

    >>> import tapegrad.nn.functional as F
    >>> logits = tg.randn(4, 3, requires_grad=True)
    >>> F.cross_entropy(logits, tg.tensor([0, 2, 1, 0])).backward()
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import backend
from ..engine.versions import bump_version
from ..ops import elementwise as _ew
from ..ops import nn_losses as _loss
from ..ops import nn_norm as _norm
from ..ops import nn_ops as _nn
from ..ops.joins import pad  # torch.nn.functional.pad (also tg.pad)
from ..ops.pairwise import cosine_similarity  # also tg.cosine_similarity
from ..random import generator
from ..tensor import Tensor, _wrap

__all__ = [
    "cosine_similarity",
    "relu",
    "relu_",
    "leaky_relu_",
    "elu_",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "softplus",
    "softmax",
    "log_softmax",
    "dropout",
    "linear",
    "layer_norm",
    "batch_norm",
    "group_norm",
    "embedding",
    "one_hot",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "cross_entropy",
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "scaled_dot_product_attention",
    "normalize",
    "pad",
]


def _tensor(x, name: str, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _array(x):
    """A parameter array (weights of losses) from a Tensor, an array or None."""
    return None if x is None else (x._data if isinstance(x, Tensor) else np.asarray(x))


def _dim(dim, axis, fn: str, ndim: int, default=None) -> int:
    d = axis if dim is None else dim
    if d is None:
        if default is None:
            raise TypeError(f"{fn}: pass dim= (the axis to normalise over)")
        d = default
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise IndexError(f"{fn}: dim {d} is out of range for a tensor with {ndim} dimensions")
    return d % max(ndim, 1)


def _check_reduction(reduction: str, fn: str, allowed=_loss._REDUCTIONS) -> None:
    if reduction not in allowed:
        raise ValueError(f"{fn}: reduction must be one of {allowed}, got {reduction!r}")


# ================================================================= activations
def relu(input, inplace=False):
    """max(x, 0)."""
    return input.relu_() if inplace else _ew.relu(input)


def relu_(input):
    """max(x, 0) written into x."""
    return input.relu_()


def in_place(input, result_of):
    """PyTorch's `inplace=True`: `result_of(x)` written into `input`, which is returned (a
    caller that ignores the return value sees the change, as in PyTorch). It is computed
    from a copy, so the op's saved input is not the tensor the write then changes; a leaf
    that requires grad is refused, as in PyTorch."""
    _tensor(input, "input", getattr(result_of, "__name__", "inplace"))
    return input.copy_(result_of(input.clone()))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x."""
    if inplace:
        return in_place(input, lambda x: _ew.leaky_relu(x, negative_slope))
    return _ew.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu written into x."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    if inplace:
        return in_place(input, lambda x: _ew.elu(x, alpha))
    return _ew.elu(input, alpha)


def elu_(input, alpha=1.0):
    """elu written into x."""
    return elu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """x * Phi(x) (exact erf form, or approximate='tanh')."""
    return _ew.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (also called swish)."""
    if inplace:
        return in_place(input, _ew.silu)
    return _ew.silu(input)


def sigmoid(input):
    """1 / (1 + exp(-x)), elementwise."""
    return _ew.sigmoid(input)


def tanh(input):
    """The hyperbolic tangent, elementwise."""
    return _ew.tanh(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta; linear where beta * x > threshold."""
    return _ew.softplus(input, beta=beta, threshold=threshold)


def _legacy_dim(input) -> int:
    """PyTorch's choice when no dim is given: 0 for 0-, 1- and 3-d inputs, else 1."""
    return 0 if input.ndim in (0, 1, 3) else 1


def _softmax_like(op, what, input, dim, dtype, axis):
    """softmax / log_softmax: `op` along the resolved dim (a 0-d input as a 1-element one)."""
    _tensor(input, "input", what)
    if dim is None and axis is None:  # PyTorch's legacy guess of the dim, with its warning
        warnings.warn(
            f"Implicit dimension choice for {what} has been deprecated. Change the "
            "call to include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
    if dtype is not None:
        input = input.to(dtype=dtype)
    if input.ndim == 0:
        return op(input.reshape(1), axis=0).reshape(())
    return op(input, axis=_dim(dim, axis, what, input.ndim, _legacy_dim(input)))


def softmax(input, dim=None, dtype=None, *, axis=None):
    """exp(x) / sum(exp(x)) along `dim`, computed stably (max subtracted) as one op."""
    return _softmax_like(_nn._softmax, "softmax", input, dim, dtype, axis)


def log_softmax(input, dim=None, dtype=None, *, axis=None):
    """log(softmax(x)) along `dim`, computed stably as one op."""
    return _softmax_like(_nn._log_softmax, "log_softmax", input, dim, dtype, axis)


# ================================================================= layers as functions
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).

    The mask comes from tapegrad's generator (`tg.manual_seed`)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if inplace:
        return in_place(input, lambda x: _nn._dropout(x, mask=_dropout_mask(x._data, p)))
    return _nn._dropout(input, mask=_dropout_mask(input._data, p))


def _dropout_mask(x, p: float):
    """Dropout's scaled keep-mask for array `x`, drawn from this thread's generator. (Its own
    function: tg.compile records each call and draws it again at every replay.)"""
    dt = x.dtype if x.dtype.kind == "f" else np.dtype("float32")
    if p == 1.0:
        mask = np.zeros(x.shape, dtype=dt)
    else:
        keep = generator().random(x.shape, dtype=np.float32 if dt != np.float64 else np.float64)
        mask = (keep >= p).astype(dt)
        mask *= dt.type(1.0 / (1.0 - p))
    if type(x) is not np.ndarray:
        mask = backend.to_device(mask, backend.device_of(x))
    return mask


def linear(input, weight, bias=None):
    """input @ weight.T + bias as one op (weight is (out_features, in_features))."""
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(
            f"linear: input has {input.shape[-1]} features (shape {tuple(input.shape)}) but the "
            f"weight expects {weight.shape[-1]} (weight shape {tuple(weight.shape)}, i.e. "
            "(out_features, in_features))"
        )
    return _nn._linear(input, weight, bias)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing `normalized_shape` dims, then scale and shift."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape) :]) != shape:
        raise RuntimeError(
            f"layer_norm: normalized_shape {shape} doesn't match the trailing dims of the input "
            f"shape {tuple(input.shape)}"
        )
    return _norm._layer_norm(input, weight, bias, ndim=len(shape), eps=eps)


def batch_norm(
    input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Batch normalisation over every dim but 1. Training: batch statistics, and the running
    statistics (when given) are updated in place; otherwise the running statistics are used."""
    if input.ndim < 2:
        raise ValueError(
            f"batch_norm: expected an input of at least 2 dims (N, C, ...), got "
            f"shape {tuple(input.shape)}"
        )
    use_batch = training or running_mean is None or running_var is None
    if use_batch and input.shape[0] * math.prod(input.shape[2:]) <= 1 and training:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size "
            f"{tuple(input.shape)}"
        )
    rm = None if running_mean is None else running_mean._data
    rv = None if running_var is None else running_var._data
    if not use_batch:
        return _norm._batch_norm(
            input, weight, bias, training=False, eps=eps, running_mean=rm, running_var=rv
        )
    update = training and rm is not None and rv is not None
    out = _norm._batch_norm(
        input,
        weight,
        bias,
        training=True,
        eps=eps,
        momentum=0.1 if momentum is None else momentum,
        running_mean=rm if update else None,
        running_var=rv if update else None,
    )
    if update:  # the running statistics were written in place
        bump_version(running_mean)
        bump_version(running_var)
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each of `num_groups` groups of channels of each sample."""
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise ValueError(
            f"group_norm: {num_groups} groups don't divide the channels of an input "
            f"of shape {tuple(input.shape)}"
        )
    return _norm._group_norm(input, weight, bias, num_groups=num_groups, eps=eps)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """Rows of `weight` picked by the integer tensor `input`; gradients of repeated indices add
    up and the padding_idx row gets none. `max_norm`, `scale_grad_by_freq` and `sparse` are
    not supported (refused, as by nn.Embedding)."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        # they were swallowed by *args/**kwargs: max_norm's renormalisation silently skipped
        raise NotImplementedError(
            "embedding: max_norm, scale_grad_by_freq and sparse are not supported; renormalise "
            "the weight yourself (under tg.no_grad()) or drop the argument"
        )
    idx = input._data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got dtype {idx.dtype}")
    n = weight.shape[0]
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError(
            f"embedding: index out of range: indices span [{int(idx.min())}, "
            f"{int(idx.max())}] but the table has {n} rows"
        )
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    return _nn._embedding(
        input if isinstance(input, Tensor) else _wrap(idx), weight, padding_idx=padding_idx
    )


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a new trailing dim of num_classes (max + 1 when -1)."""
    idx = tensor._data
    if idx.dtype.kind not in "iu":
        raise TypeError(f"one_hot: expected an integer tensor, got dtype {idx.dtype}")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= num_classes):
        raise RuntimeError(
            f"one_hot: class values must be in [0, {num_classes}), got "
            f"[{int(idx.min())}, {int(idx.max())}]"
        )
    return _nn._one_hot(tensor, num_classes=num_classes)


# ================================================================= losses
def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _check_same_shape(input, target, fn: str) -> None:
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"{fn}: using a target size ({tuple(target.shape)}) that is different to the input "
            f"size ({tuple(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(input, target, reduction="mean"):
    """Mean squared error: mean((input - target) ** 2)."""
    _check_reduction(reduction, "mse_loss")
    _check_same_shape(input, target, "mse_loss")
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error."""
    _check_reduction(reduction, "l1_loss")
    _check_same_shape(input, target, "l1_loss")
    return _reduce(_ew.abs(input - target), reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    _check_reduction(reduction, "smooth_l1_loss")
    _check_same_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = input - target
    a = _ew.abs(d)
    if beta == 0:
        return _reduce(a, reduction)
    return _reduce(_ew.where(a < beta, (0.5 / beta) * d * d, a - 0.5 * beta), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_reduction(reduction, "huber_loss")
    _check_same_shape(input, target, "huber_loss")
    if not delta > 0:  # delta = 0 would make every element the 0 of the linear branch
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    d = input - target
    a = _ew.abs(d)
    return _reduce(_ew.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta)), reduction)


def _class_input(input, target, fn: str):
    """(input, target, squeeze) with a batch dim added for an unbatched (C,) input."""
    if input.ndim == 1:
        return input.reshape(1, -1), target.reshape(1), True
    return input, target, False


def _check_targets(input, target, ignore_index, fn: str) -> None:
    t = target._data
    if tuple(t.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise ValueError(
            f"{fn}: target shape {tuple(t.shape)} doesn't match input shape "
            f"{tuple(input.shape)}; expected class indices of shape "
            f"{(input.shape[0],) + tuple(input.shape[2:])} (the input without its class dim 1)"
        )
    if t.size and (int(t.min()) < 0 or int(t.max()) >= input.shape[1]):
        valid = t[t != ignore_index]  # only now pay for the mask: ignored targets may be < 0
        if valid.size and (int(valid.min()) < 0 or int(valid.max()) >= input.shape[1]):
            raise IndexError(
                f"{fn}: target values must be class indices in [0, {input.shape[1]}) (or "
                f"ignore_index={ignore_index}); got values in [{int(valid.min())}, "
                f"{int(valid.max())}]"
            )


def cross_entropy(
    input,
    target,
    weight=None,
    size_average=None,
    ignore_index=-100,
    reduce=None,
    reduction="mean",
    label_smoothing=0.0,
):
    """Softmax cross-entropy of logits `input` (N, C, ...) against class indices (N, ...) —
    one fused log-softmax + NLL op — or against class probabilities shaped like the input.

    weight: per-class weights (C,); ignore_index: targets that count for nothing;
    label_smoothing: in [0, 1], mixes the target with the uniform distribution.
    """
    _check_reduction(reduction, "cross_entropy")
    _tensor(input, "input", "cross_entropy")
    if not isinstance(target, Tensor):
        target = _wrap(np.asarray(target))
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if target.dtype.kind == "f":
        return _soft_cross_entropy(input, target, _array(weight), reduction, label_smoothing)
    if target.dtype.kind not in "iu":
        raise TypeError(
            f"cross_entropy: target must hold class indices (integers) or "
            f"probabilities (floats), got dtype {target.dtype}"
        )
    x, t, squeeze = _class_input(input, target, "cross_entropy")
    _check_targets(x, t, ignore_index, "cross_entropy")
    loss = _loss._cross_entropy(
        x,
        t,
        weight=_array(weight),
        ignore_index=ignore_index,
        label_smoothing=float(label_smoothing),
        reduction=reduction,
    )
    return loss.reshape(()) if squeeze and reduction == "none" else loss


def _soft_cross_entropy(input, target, weight, reduction, label_smoothing):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"cross_entropy: probability targets must have the input's shape "
            f"{tuple(input.shape)}, got {tuple(target.shape)}; for class indices "
            "pass an integer tensor (e.g. target.long())"
        )
    axis = 1 if input.ndim > 1 else 0
    n_classes = input.shape[axis]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    logp = _nn._log_softmax(input, axis=axis)
    if weight is not None:
        logp = logp * weight.reshape((n_classes,) + (1,) * (input.ndim - axis - 1))
    loss = -(logp * target).sum(axis)
    return _reduce(loss, reduction)


def nll_loss(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"
):
    """Negative log-likelihood of log-probabilities `input` (N, C, ...) at class indices."""
    _check_reduction(reduction, "nll_loss")
    if target.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: target must hold class indices (integers), got {target.dtype}")
    x, t, squeeze = _class_input(input, target, "nll_loss")
    _check_targets(x, t, ignore_index, "nll_loss")
    loss = _loss._nll_loss(
        x, t, weight=_array(weight), ignore_index=ignore_index, reduction=reduction
    )
    return loss.reshape(()) if squeeze and reduction == "none" else loss


def binary_cross_entropy(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean"
):
    """-(y log p + (1 - y) log(1 - p)) for probabilities p (log clamped at -100, as PyTorch)."""
    _check_reduction(reduction, "binary_cross_entropy")
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"binary_cross_entropy: target shape {tuple(target.shape)} must match "
            f"the input shape {tuple(input.shape)}"
        )
    p = input._data
    if p.size and (float(p.min()) < 0 or float(p.max()) > 1):
        raise ValueError(
            "binary_cross_entropy: input values must be probabilities in [0, 1]; "
            "for logits use binary_cross_entropy_with_logits"
        )
    _check_weight_shape("binary_cross_entropy", "weight", weight, input.shape)
    return _loss._bce(input, target, weight=_array(weight), reduction=reduction)


def _check_weight_shape(what, name, weight, shape):
    """A weight broadcasts to the input's shape, never beyond it (as PyTorch)."""
    if weight is None:
        return
    w_shape = tuple(np.shape(weight._data if isinstance(weight, Tensor) else weight))
    try:
        ok = np.broadcast_shapes(w_shape, tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(
            f"{what}: {name} of shape {w_shape} doesn't broadcast to the input "
            f"shape {tuple(shape)}; give one weight per element (or per class)"
        )


def binary_cross_entropy_with_logits(
    input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
):
    """Sigmoid + binary cross-entropy as one stable op (no overflow for large logits)."""
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(
            f"binary_cross_entropy_with_logits: target shape "
            f"{tuple(target.shape)} must match the input shape {tuple(input.shape)}"
        )
    _check_weight_shape("binary_cross_entropy_with_logits", "weight", weight, input.shape)
    _check_weight_shape("binary_cross_entropy_with_logits", "pos_weight", pos_weight, input.shape)
    return _loss._bce_logits(
        input, target, weight=_array(weight), pos_weight=_array(pos_weight), reduction=reduction
    )


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence: sum target * (log target - input), `input` given as log-probabilities.

    reduction 'batchmean' (sum / batch size) is the mathematically correct mean."""
    _check_reduction(reduction, "kl_div", _loss._REDUCTIONS + ("batchmean",))
    return _loss._kl_div(input, target, reduction=reduction, log_target=log_target)


# ================================================================= attention, normalize
def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None
):
    """softmax(q @ k^T * scale + mask) @ v over the last two dims (..., L, E) x (..., S, E).

    attn_mask: bool (True = may attend) or float (added to the scores), broadcastable to
    (..., L, S). is_causal: position i attends to positions <= i."""
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"scaled_dot_product_attention: query and key embed dims differ: "
            f"{tuple(query.shape)} vs {tuple(key.shape)}"
        )
    n_q, n_k = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.swapaxes(-2, -1)) * scale
    bias = None
    dt = scores.dtype
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: pass attn_mask or is_causal, not both")
        bias = np.where(np.tril(np.ones((n_q, n_k), dtype=bool)), 0.0, -np.inf).astype(dt)
    elif attn_mask is not None:
        m = attn_mask._data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
        if m.dtype == bool:
            bias = np.where(m, 0.0, -np.inf).astype(dt)
        elif isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
            scores = scores + attn_mask
        else:
            bias = m.astype(dt, copy=False)
    alive = None
    if bias is not None:
        bias, alive = masked_rows(bias, scores.shape)
        scores = scores + _wrap(backend.to_device(bias, scores.device))
    attn = _nn._softmax(scores, axis=-1)
    if alive is not None:  # a query that may attend nothing gets zeros (PyTorch 2.x's SDPA)
        attn = attn * _wrap(backend.to_device(alive, scores.device))
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, training=True)
    return attn @ value


def masked_rows(bias, scores_shape):
    """(bias, alive) for an additive attention mask: where a query row is masked out
    entirely (-inf everywhere), its bias becomes 0 so the softmax stays finite, and `alive`
    (0 there, 1 elsewhere; None when no row is dead) zeroes that row's weights afterwards."""
    dead = np.all(
        np.isneginf(np.broadcast_to(bias, np.broadcast_shapes(bias.shape, scores_shape))),
        axis=-1,
        keepdims=True,
    )
    if not dead.any():
        return bias, None
    return np.where(dead, 0.0, bias).astype(bias.dtype), (~dead).astype(bias.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along `dim`."""
    d = _dim(dim, None, "normalize", input.ndim)
    if p == 2:
        norm = _ew.sqrt(_ew.clamp_min((input * input).sum(d, keepdim=True), eps * eps))
    else:
        # clamp before the root: same value as max(norm, eps), and no infinite slope at 0
        norm = _ew.clamp_min((_ew.abs(input) ** p).sum(d, keepdim=True), eps**p) ** (1.0 / p)
    return input / norm
