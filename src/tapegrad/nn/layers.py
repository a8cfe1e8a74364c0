"""Core layers: Linear, Identity, Flatten, Unflatten, activations, Dropout, BatchNorm,
LayerNorm, GroupNorm, Embedding — with PyTorch's default initialisations.

    >>> net = tg.nn.Sequential(tg.nn.Linear(None, 16), tg.nn.ReLU(), tg.nn.Linear(16, 3))
    >>> net(tg.randn(2, 7)).shape      # in_features inferred at the first call
    (2, 3)
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..creation import ones, zeros
from ..tensor import Tensor, _wrap
from . import functional_core as F
from . import init
from .module import Module, Parameter

__all__ = [
    "Linear",
    "Identity",
    "Flatten",
    "Unflatten",
    "ReLU",
    "LeakyReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "Dropout",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Embedding",
]


def _factory(dtype, device):
    return {"dtype": dtype or dtypes.get_default_dtype(), "device": device or "cpu"}


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features).

    in_features=None defers the weight's shape to the first call (as Gluon's Dense); the
    Parameter object exists from the start, so an optimizer can be built before that call.
    Initialisation as PyTorch: kaiming_uniform_(a=sqrt(5)) weight, U(-1/sqrt(fan_in), ...) bias.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None) -> None:
        super().__init__()
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                raise TypeError(f"Linear: {name} must be an int, got {v!r}")
        if int(out_features) <= 0 or (in_features is not None and int(in_features) <= 0):
            raise ValueError(
                f"Linear: feature counts must be positive, got in_features="
                f"{in_features}, out_features={out_features}"
            )
        self.out_features = int(out_features)
        kw = _factory(dtype, device)
        self._kw = kw
        if in_features is None:
            self.weight = Parameter(None)
            self.weight._data = self.weight._data.astype(kw["dtype"])
        else:
            self.weight = Parameter(zeros(self.out_features, int(in_features), **kw))
        if bias:
            self.bias = Parameter(zeros(self.out_features, **kw))
        else:
            self.register_parameter("bias", None)
        if in_features is not None:
            self.reset_parameters()

    @property
    def in_features(self):
        """The input size (None until a lazy layer has seen its first input)."""
        return None if getattr(self.weight, "is_lazy", False) else self.weight.shape[1]

    def reset_parameters(self) -> None:
        """Draw fresh weights and bias (PyTorch's Kaiming-uniform scheme)."""
        if getattr(self.weight, "is_lazy", False):
            return
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        w = self.weight
        if getattr(w, "is_lazy", False):  # a plain tensor from func.functional_call
            w.materialize((self.out_features, input.shape[-1]), device=input.device)
            self.reset_parameters()
        return F.linear(input, w, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim `dim` into `unflattened_size`."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        d = self.dim % input.ndim
        shape = tuple(input.shape[:d]) + self.unflattened_size + tuple(input.shape[d + 1 :])
        return input.reshape(shape)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ================================================================= activations
class ReLU(Module):
    """max(x, 0), elementwise (`F.relu`)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x (`F.leaky_relu`)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1) (`F.elu`)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x * Phi(x), exact (`approximate="none"`) or the tanh form (`F.gelu`)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate='{self.approximate}'"


class SiLU(Module):
    """x * sigmoid(x), also called swish (`F.silu`)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """The hyperbolic tangent, elementwise."""

    def forward(self, input):
        return F.tanh(input)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear above `threshold` (`F.softplus`)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """exp(x) / sum(exp(x)) along `dim` (`F.softmax`)."""

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)  # dim None: PyTorch's legacy choice

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log(softmax(x)) along `dim`, computed stably (`F.log_softmax`)."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


# ================================================================= dropout
class _DropoutNd(Module):
    """The body every dropout layer shares (Dropout, Dropout1d/2d/3d, AlphaDropout,
    FeatureAlphaDropout): one `p` check, the attributes and the repr; `_fn`, a staticmethod
    `fn(input, p, training, inplace)`, is each layer's functional form. The others derive
    from this class rather than from Dropout, so `isinstance(m, Dropout)` answers as in
    PyTorch (ONNX export relies on it)."""

    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.is_training_now, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability p while training (see `Module.is_training_now`)."""


# ================================================================= normalisation
def _affine_params(module, affine, bias, shape, kw):
    """A norm layer's `weight` (ones) and `bias` (zeros) of `shape`, or None where off."""
    if affine:
        module.weight = Parameter(ones(shape, **kw))
        if bias:
            module.bias = Parameter(zeros(shape, **kw))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


class _BatchNorm(Module):
    _expected_ndim: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum=0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = _factory(dtype, device)
        _affine_params(self, affine, bias, num_features, kw)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **kw))
            self.register_buffer("running_var", ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", _wrap(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, batch count 0."""
        if self.track_running_stats:
            self.running_mean._data[...] = 0
            self.running_var._data[...] = 1
            self.num_batches_tracked._data[...] = 0

    def reset_parameters(self) -> None:
        """Reset the running statistics and set weight 1, bias 0."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.ndim not in self._expected_ndim:
            raise ValueError(
                f"{type(self).__name__}: expected {' or '.join(map(str, self._expected_ndim))}D "
                f"input, got {input.ndim}D input of shape {tuple(input.shape)}"
            )
        if input.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}({self.num_features}): the input has "
                f"{input.shape[1]} channels (dim 1 of shape {tuple(input.shape)})"
            )
        training = self.is_training_now
        momentum = 0.0 if self.momentum is None else self.momentum
        if training and self.track_running_stats:
            self.num_batches_tracked._data += 1
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked._data)
        use_batch = training or not self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if not training or self.track_running_stats else None,
            self.running_var if not training or self.track_running_stats else None,
            self.weight,
            self.bias,
            use_batch,
            momentum,
            self.eps,
        )

    def extra_repr(self) -> str:
        bias = f", bias={self.bias is not None}"
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}{bias}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs; running statistics for eval."""

    _expected_ndim = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs; running statistics for eval."""

    _expected_ndim = (4,)


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` dims; weight ones, bias zeros."""

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        kw = _factory(dtype, device)
        _affine_params(self, elementwise_affine, bias, self.normalized_shape, kw)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        bias = f", bias={self.bias is not None}"
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}{bias}"
        )


class GroupNorm(Module):
    """Normalise groups of channels of each sample; per-channel weight ones, bias zeros."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                f"num_groups ({num_groups})"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups,
            num_channels,
            eps,
            affine,
        )
        kw = _factory(dtype, device)
        _affine_params(self, affine, bias, num_channels, kw)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised N(0, 1)
    (the padding_idx row zero; it gets no gradient)."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} must be within "
                    f"[-{num_embeddings}, {num_embeddings})"
                )
            padding_idx %= num_embeddings
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError(
                "Embedding: max_norm, scale_grad_by_freq and sparse are not supported"
            )
        self.num_embeddings, self.embedding_dim, self.padding_idx = (
            num_embeddings,
            embedding_dim,
            padding_idx,
        )
        kw = _factory(dtype, device)
        if _weight is not None:
            self.weight = Parameter(_weight)
        else:
            self.weight = Parameter(zeros(num_embeddings, embedding_dim, **kw))
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw fresh standard normal embeddings (the `padding_idx` row zero)."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx=None):
        """An Embedding holding (a copy-free view of) `embeddings`."""
        rows, dim = embeddings.shape
        emb = cls(rows, dim, padding_idx=padding_idx, _weight=embeddings)
        emb.weight.requires_grad_(not freeze)
        return emb

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
