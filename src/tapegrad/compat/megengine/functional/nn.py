"""`mge.functional.nn` (`F.nn`): layer functions and losses with MegEngine's signatures.

Differences from PyTorch kept here: `dropout(inp, drop_prob, training=True)`,
`batch_norm(..., momentum=0.9)` keeps 90% of the running statistics, `avg_pool2d` leaves
padding out of the average by default, `cross_entropy(pred, label, axis=1,
with_logits=True, label_smooth=0)`, `binary_cross_entropy(..., with_logits=True)`,
`square_loss` is the mean squared error.
"""

from __future__ import annotations

from ..._facade import facade_getattr

__all__ = [
    "linear",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "dropout",
    "batch_norm",
    "embedding",
    "one_hot",
    "softmax",
    "logsoftmax",
    "relu",
    "sigmoid",
    "leaky_relu",
    "gelu",
    "silu",
    "softplus",
    "cross_entropy",
    "binary_cross_entropy",
    "square_loss",
    "l1_loss",
    "layer_norm",
    "pad",
    "adaptive_avg_pool2d",
    "conv1d",
    "conv_transpose2d",
    "relu6",
    "hsigmoid",
    "hswish",
    "logsigmoid",
    "elu",
    "prelu",
]


def _tg():
    import tapegrad

    return tapegrad


def _F():  # noqa: N802
    return _tg().nn.functional


def linear(inp, weight, bias=None, compute_mode="default"):
    return _F().linear(inp, weight, bias)


def conv2d(
    inp,
    weight,
    bias=None,
    stride=1,
    padding=0,
    dilation=1,
    groups=1,
    conv_mode="cross_correlation",
    compute_mode="default",
):
    if conv_mode != "cross_correlation":
        raise ValueError(
            f"conv2d: conv_mode {conv_mode!r} is not supported; use 'cross_correlation'"
        )
    if bias is not None and bias.ndim == 4:  # MegEngine keeps conv biases as (1, C, 1, 1)
        bias = _tg().reshape(bias, (-1,))
    return _F().conv2d(
        inp, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups
    )


def max_pool2d(inp, kernel_size, stride=None, padding=0):
    return _F().max_pool2d(inp, kernel_size, stride if stride is not None else kernel_size, padding)


def avg_pool2d(inp, kernel_size, stride=None, padding=0, mode="average_count_exclude_padding"):
    include = mode == "average"
    return _F().avg_pool2d(
        inp,
        kernel_size,
        stride if stride is not None else kernel_size,
        padding,
        count_include_pad=include,
    )


def dropout(inp, drop_prob, training=True):
    """Zero each element with probability `drop_prob` (when `training`), scale the rest."""
    return _F().dropout(inp, p=drop_prob, training=training)


def batch_norm(
    inp,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    *,
    training=False,
    momentum=0.9,
    eps=1e-5,
    inplace=True,
    compute_mode="default",
    param_dim="dim_1c11",
):
    """Batch normalization over axis 1; `momentum` is the share of the running statistics
    kept (MegEngine's convention)."""

    def flat(t):
        return None if t is None else _tg().reshape(t, (-1,))

    return _F().batch_norm(
        inp,
        flat(running_mean),
        flat(running_var),
        weight=flat(weight),
        bias=flat(bias),
        training=training,
        momentum=1.0 - momentum,
        eps=eps,
    )


def embedding(inp, weight, padding_idx=None, max_norm=None, norm_type=None):
    return _F().embedding(inp, weight)


def one_hot(inp, num_classes):
    return _F().one_hot(inp.astype("int64"), num_classes).astype("int32")


def softmax(inp, axis=None):
    from . import softmax as _softmax

    return _softmax(inp, axis)


def logsoftmax(inp, axis):
    return _F().log_softmax(inp, dim=axis)


def relu(x):
    return _tg().relu(x)


def sigmoid(x):
    return _tg().sigmoid(x)


def leaky_relu(inp, negative_slope=0.01):
    return _tg().leaky_relu(inp, negative_slope)


def gelu(x):
    return _tg().gelu(x)


def silu(x):
    return _tg().silu(x)


def softplus(inp):
    return _tg().softplus(inp)


def layer_norm(inp, normalized_shape, affine=True, weight=None, bias=None, eps=1e-5):
    """Normalize over the last axes `normalized_shape` (scaled by weight, shifted by bias)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    return _F().layer_norm(inp, shape, weight if affine else None, bias if affine else None, eps)


def pad(src, pad_width, mode="constant", constant_value=0.0):
    """NumPy-style padding: `pad_width` is one (before, after) pair per axis; `mode`
    "constant", "reflect" or "replicate" (any case, as MegEngine's)."""
    mode = mode.lower() if isinstance(mode, str) else mode
    pairs = [tuple(int(v) for v in p) for p in pad_width]
    if len(pairs) < src.ndim:
        pairs = [(0, 0)] * (src.ndim - len(pairs)) + pairs
    flat = []
    for before, after in reversed(pairs):  # the core takes the last axis first (PyTorch)
        flat += [before, after]
    if mode != "constant":
        return _tg().pad(src, tuple(flat), mode=mode)
    return _tg().pad(src, tuple(flat), mode="constant", value=constant_value)


def adaptive_avg_pool2d(inp, oshp):
    return _F().adaptive_avg_pool2d(inp, oshp)


def conv1d(
    inp,
    weight,
    bias=None,
    stride=1,
    padding=0,
    dilation=1,
    groups=1,
    conv_mode="cross_correlation",
    compute_mode="default",
):
    if bias is not None and bias.ndim == 3:  # MegEngine keeps conv1d biases as (1, C, 1)
        bias = _tg().reshape(bias, (-1,))
    return _F().conv1d(inp, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(
    inp,
    weight,
    bias=None,
    stride=1,
    padding=0,
    output_padding=0,
    dilation=1,
    groups=1,
    conv_mode="cross_correlation",
    compute_mode="default",
):
    if bias is not None and bias.ndim == 4:
        bias = _tg().reshape(bias, (-1,))
    return _F().conv_transpose2d(
        inp, weight, bias, stride, padding, output_padding, groups, dilation
    )


def relu6(x):
    """min(max(x, 0), 6)."""
    return _tg().clamp(x, 0.0, 6.0)


def hsigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


def hswish(x):
    """x * relu6(x + 3) / 6."""
    return x * hsigmoid(x)


def logsigmoid(inp):
    """log(sigmoid(x)) = -softplus(-x), computed stably."""
    return -_tg().softplus(-inp)


def elu(inp, alpha=1.0):
    return _F().elu(inp, alpha)


def prelu(inp, weight):
    """max(x, 0) + weight * min(x, 0) (weight broadcasts over axis 1)."""
    tg = _tg()
    if weight.ndim == 1 and inp.ndim > 1 and weight.shape[0] > 1:
        weight = tg.reshape(weight, (1, -1) + (1,) * (inp.ndim - 2))
    return tg.relu(inp) - weight * tg.relu(-inp)


def _to_axis1(pred, axis):
    return pred if axis % pred.ndim == 1 else _tg().moveaxis(pred, axis, 1)


def cross_entropy(pred, label, axis=1, with_logits=True, label_smooth=0.0, reduction="mean"):
    """Cross entropy of class scores `pred` (logits, or probabilities with
    `with_logits=False`) against integer `label`s."""
    tg = _tg()
    pred = _to_axis1(pred, axis)
    label = (
        label if label.dtype.kind in "iu" and label.dtype.itemsize == 8 else label.astype("int64")
    )
    if with_logits:
        return _F().cross_entropy(pred, label, reduction=reduction, label_smoothing=label_smooth)
    logp = tg.log(pred)
    if label_smooth:
        nll = _F().nll_loss(logp, label, reduction="none")
        loss = (1 - label_smooth) * nll - label_smooth * logp.mean(axis=1)
        return _reduce(loss, reduction)
    return _F().nll_loss(logp, label, reduction=reduction)


def binary_cross_entropy(pred, label, with_logits=True, reduction="mean"):
    if with_logits:
        return _F().binary_cross_entropy_with_logits(pred, label, reduction=reduction)
    return _F().binary_cross_entropy(pred, label, reduction=reduction)


def square_loss(pred, label, reduction="mean"):
    """Mean squared error (MegEngine's name for it)."""
    return _F().mse_loss(pred, label, reduction=reduction)


def l1_loss(pred, label, reduction="mean"):
    return _F().l1_loss(pred, label, reduction=reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


__getattr__ = facade_getattr(
    __name__,
    "the MegEngine facade (mge.functional.nn)",
    {},
    {
        "hinge_loss": "not provided; write it with F.relu(1 - pred * label)",
        "conv_transpose2d": "not provided; use tapegrad.nn.functional.conv_transpose2d",
        "nms": "not provided",
        "roi_align": "not provided",
        "roi_pooling": "not provided",
        "ctc_loss": "not provided",
        "sliding_window": "not provided",
    },
)
