"""tg.nn.functional's random layers beyond dropout: `rrelu` / `rrelu_`, `alpha_dropout`,
`feature_alpha_dropout`, `gumbel_softmax`, as PyTorch's.

The noise (slopes, masks, Gumbel samples) is drawn in NumPy from tapegrad's generator
(`tg.manual_seed` makes it reproducible; the streams are not PyTorch's) and enters the graph
as a constant, so the gradient is the noise itself: rrelu's is the drawn slope, alpha
dropout's the kept elements' scale. Inside `tg.compile` a call that draws makes the signature
run eagerly. In evaluation (training=False) each is deterministic: rrelu has the fixed slope
(lower + upper) / 2 and the dropouts are the identity.

    >>> rrelu(tg.tensor([-2.0, 3.0]), 0.1, 0.3).numpy()
    array([-0.4,  3. ], dtype=float32)
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import backend
from ..creation import zeros_like
from ..ops import elementwise as _ew
from ..random import generator
from ..tensor import Tensor, _wrap
from .functional_core import in_place, softmax

__all__ = [
    "rrelu",
    "rrelu_",
    "alpha_dropout",
    "feature_alpha_dropout",
    "gumbel_softmax",
]

# SELU's constants: alpha' = -scale * alpha, the value SELU saturates to for x -> -inf
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ALPHA_PRIME = -_SELU_SCALE * _SELU_ALPHA


def _tensor(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(input).__name__}")
    if input.dtype.kind != "f":
        raise TypeError(f"{fn}: input must be floating point, got {input.dtype}")


def _on_device_of(arr, like):
    return arr if type(like) is np.ndarray else backend.to_device(arr, backend.device_of(like))


def _uniform(shape, low, high, dtype):
    draw_dtype = np.float64 if dtype == np.float64 else np.float32
    u = generator().random(shape, dtype=draw_dtype)
    return (low + (high - low) * u).astype(dtype)


# ---------------------------------------------------------------- rrelu
def _rrelu(input, lower, upper, training):
    _tensor("rrelu", input)
    for name, v in (("lower", lower), ("upper", upper)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"rrelu: {name} must be a number, got {v!r}")
    if lower > upper:
        raise RuntimeError(
            f"Lower bound should be less than or equal to the upper bound (rrelu: lower="
            f"{lower}, upper={upper})"
        )
    if not training:
        return _ew.leaky_relu(input, (lower + upper) / 2)
    x = input._data
    xp = backend.array_module(x)
    # every element at or below 0 gets its own slope U(lower, upper); the rest slope 1
    drawn = _on_device_of(_uniform(x.shape, lower, upper, x.dtype), x)
    slopes = xp.where(x <= 0, drawn, xp.ones((), x.dtype)).astype(x.dtype)
    return input * _wrap(slopes)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: x where x > 0, else a * x, as torch.nn.functional.rrelu.

    Training: a ~ U(lower, upper) drawn per element (at x <= 0) from tapegrad's generator;
    the gradient there is that a. Evaluation: a = (lower + upper) / 2 for every element.

    >>> rrelu(tg.tensor([-1.0, 0.5]), training=False).numpy()
    array([-0.22916667,  0.5       ], dtype=float32)
    """
    if inplace:
        return in_place(input, lambda x: _rrelu(x, lower, upper, training))
    return _rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu written into `input` (returned), as torch.nn.functional.rrelu_.

    >>> x = tg.tensor([-1.0, 2.0])
    >>> _ = rrelu_(x, 0.2, 0.2)
    >>> x.numpy()
    array([-0.2,  2. ], dtype=float32)
    """
    return rrelu(input, lower, upper, training, inplace=True)


# ---------------------------------------------------------------- alpha dropout
def _alpha_dropout(fn, input, p, training, inplace, feature):
    _tensor(fn, input)
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if feature and input.ndim < 2:
        raise RuntimeError(
            f"Feature dropout requires at least 2 dimensions in the input ({fn}: got shape "
            f"{tuple(input.shape)}; pass (N, C, *))"
        )
    if not training or p == 0.0:
        return input

    def apply(x):
        if p == 1.0:
            return x * 0.0
        data = x._data
        shape = tuple(data.shape[:2]) + (1,) * (data.ndim - 2) if feature else tuple(data.shape)
        draw_dtype = np.float64 if data.dtype == np.float64 else np.float32
        keep = generator().random(shape, dtype=draw_dtype) >= p
        # a * (x * keep + alpha' * (1 - keep)) + b keeps SELU's mean 0 and variance 1
        a = 1.0 / math.sqrt((1.0 - p) * (1.0 + p * _ALPHA_PRIME**2))
        b = -a * _ALPHA_PRIME * p
        scale = (a * keep).astype(data.dtype)
        shift = (a * _ALPHA_PRIME * (~keep) + b).astype(data.dtype)
        return x * _wrap(_on_device_of(scale, data)) + _wrap(_on_device_of(shift, data))

    return in_place(input, apply) if inplace else apply(input)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks, as torch.nn.functional.alpha_dropout: while training each
    element is set, with probability p, to SELU's saturation value -1.7581, then all are
    scaled and shifted so that a zero-mean unit-variance input keeps its mean and variance.
    Evaluation (the default, training=False) and p = 0 are the identity.

    >>> alpha_dropout(tg.ones(3), 0.5).numpy()
    array([1., 1., 1.], dtype=float32)
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels: one draw per (sample, channel) of (N, C, *), as
    torch.nn.functional.feature_alpha_dropout.

    >>> feature_alpha_dropout(tg.ones(2, 3, 4), 0.5, training=False).shape
    (2, 3, 4)
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)


# ---------------------------------------------------------------- gumbel softmax
def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples of the Gumbel-softmax (concrete) distribution over `dim`, as PyTorch's:
    softmax((logits + g) / tau) with g = -log(E), E ~ Exp(1) from tapegrad's generator.

    hard=True returns one-hot vectors (the argmax) whose gradient is the soft sample's
    (straight-through). `eps` is deprecated and ignored (PyTorch warns when it is set).

    >>> y = gumbel_softmax(tg.zeros(4, 5), tau=0.5, hard=True)
    >>> y.sum(-1).numpy()
    array([1., 1., 1., 1.], dtype=float32)
    """
    _tensor("gumbel_softmax", logits)
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real) or not tau > 0:
        raise ValueError(f"gumbel_softmax: tau must be a positive number, got {tau!r}")
    data = logits._data
    draw_dtype = np.float64 if data.dtype == np.float64 else np.float32
    expo = generator().standard_exponential(tuple(data.shape), dtype=draw_dtype)
    with np.errstate(divide="ignore"):  # E = 0 gives g = inf, as PyTorch's -log(0)
        gumbels = (-np.log(expo)).astype(data.dtype)
    y_soft = softmax((logits + _wrap(_on_device_of(gumbels, data))) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.detach().argmax(dim, keepdim=True)
    y_hard = zeros_like(y_soft).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
