"""Gluon's basic layers on tapegrad's functional ops: Dense, Dropout, BatchNorm, Flatten,
Embedding, LayerNorm, Lambda.

Each layer owns Gluon Parameters (record-scope variables, `grad_req="write"`), infers
unknown input sizes at its first forward (deferred initialization), and asks
`autograd.is_training()` where training and prediction differ.
"""

from __future__ import annotations

from .....autograd.record import is_training
from .....ops import nn_norm as _norm
from .....tensor import write_data
from ..block import Block, HybridBlock, block_args
from ..parameter import Parameter
from .activations import activation_fn

__all__ = [
    "Dense",
    "Dropout",
    "BatchNorm",
    "Flatten",
    "Embedding",
    "LayerNorm",
    "Lambda",
    "InstanceNorm",
    "GroupNorm",
    "HybridLambda",
    "Identity",
]


def _tg():
    import tapegrad

    return tapegrad


def _materialize(param: Parameter, shape) -> None:
    """Fill the unknown dimensions of `param` from `shape` and finish its initialization."""
    if param._var is None:
        param.shape = shape
        param._finish_deferred_init()


def _scale_shift(
    block: HybridBlock, shape, scale, center, gamma_initializer, beta_initializer
) -> tuple[Parameter, Parameter]:
    """The learned scale (gamma) and shift (beta) of a norm layer, gamma registered first.

    LayerNorm, InstanceNorm and GroupNorm declare the same pair (deferred, trainable only
    where `scale` / `center` ask); one declaration keeps their parameter sets in step.
    """
    gamma = block.params.get(
        "gamma",
        shape=shape,
        init=gamma_initializer,
        allow_deferred_init=True,
        differentiable=scale,
    )
    beta = block.params.get(
        "beta",
        shape=shape,
        init=beta_initializer,
        allow_deferred_init=True,
        differentiable=center,
    )
    return gamma, beta


class Dense(HybridBlock):
    """A fully connected layer: `activation(x @ weight.T + bias)`.

    Args:
        units: output size. activation: "relu", "sigmoid", "tanh", ... or None.
        use_bias: add a bias. flatten: collapse all input axes but the first (default, as
        MXNet); with flatten=False the layer acts on the last axis.
        in_units: input size (0: inferred at the first forward).
        weight_initializer, bias_initializer: this layer's own initializers.
    """

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        flatten=True,
        dtype="float32",
        weight_initializer=None,
        bias_initializer="zeros",
        in_units=0,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        self._units, self._in_units, self._flatten = units, in_units, flatten
        self.weight = self.params.get(
            "weight",
            shape=(units, in_units),
            dtype=dtype,
            init=weight_initializer,
            allow_deferred_init=True,
        )
        self.bias = (
            self.params.get(
                "bias", shape=(units,), dtype=dtype, init=bias_initializer, allow_deferred_init=True
            )
            if use_bias
            else None
        )
        self.act = activation_fn(activation) if activation is not None else None
        self._act_name = activation

    def forward(self, x):
        tg = _tg()
        if self._flatten and x.ndim != 2:
            x = tg.reshape(x, (x.shape[0], -1))
        _materialize(self.weight, (self._units, x.shape[-1]))
        bias = None
        if self.bias is not None:
            self.bias._finish_deferred_init()
            bias = self.bias.data()
        out = tg.nn.functional.linear(x, self.weight.data(), bias)
        return self.act(out) if self.act is not None else out

    def _repr_body(self) -> str:
        shape = self.weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}, " + (
            "linear" if self._act_name is None else self._act_name
        )


class Dropout(HybridBlock):
    """Zero each element with probability `rate` in training mode (inside `record()`),
    scaling the rest by 1/(1-rate); the identity in predict mode.

    Args:
        rate: the drop probability. axes: axes along which one mask is shared.
    """

    def __init__(self, rate, axes=(), **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        if not 0 <= rate <= 1:
            raise ValueError(f"Dropout rate must be in [0, 1], got {rate}")
        self._rate, self._axes = rate, tuple(axes)

    def forward(self, x):
        if not is_training() or self._rate == 0:
            return x
        tg = _tg()
        if not self._axes:
            return tg.nn.functional.dropout(x, p=self._rate, training=True)
        # one mask shared along `axes`: drop a ones tensor of the reduced shape, broadcast
        mask_shape = tuple(1 if i in self._axes else s for i, s in enumerate(x.shape))
        mask = tg.nn.functional.dropout(
            tg.ones(mask_shape, dtype=x.dtype), p=self._rate, training=True
        )
        return x * mask

    def _repr_body(self) -> str:
        return f"p = {self._rate}, axes={self._axes}"


class BatchNorm(HybridBlock):
    """Batch normalization over `axis` (the channel axis, 1 by default).

    Training mode (inside `record()`) normalizes with the batch statistics and updates the
    running ones: `running = momentum * running + (1 - momentum) * batch` (MXNet's
    convention: `momentum=0.9` keeps 90%; the batch variance divides by N, as MXNet's).
    Predict mode uses the running statistics.
    """

    def __init__(
        self,
        axis=1,
        momentum=0.9,
        epsilon=1e-5,
        center=True,
        scale=True,
        use_global_stats=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        running_mean_initializer="zeros",
        running_variance_initializer="ones",
        in_channels=0,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        self._axis, self._momentum, self._eps = axis, momentum, epsilon
        self._use_global_stats = use_global_stats
        self.gamma = self.params.get(
            "gamma",
            grad_req="write" if scale else "null",
            shape=(in_channels,),
            init=gamma_initializer,
            allow_deferred_init=True,
            differentiable=scale,
        )
        self.beta = self.params.get(
            "beta",
            grad_req="write" if center else "null",
            shape=(in_channels,),
            init=beta_initializer,
            allow_deferred_init=True,
            differentiable=center,
        )
        self.running_mean = self.params.get(
            "running_mean",
            grad_req="null",
            shape=(in_channels,),
            init=running_mean_initializer,
            allow_deferred_init=True,
            differentiable=False,
        )
        self.running_var = self.params.get(
            "running_var",
            grad_req="null",
            shape=(in_channels,),
            init=running_variance_initializer,
            allow_deferred_init=True,
            differentiable=False,
        )

    def forward(self, x):
        tg = _tg()
        axis = self._axis % x.ndim
        channels = x.shape[axis]
        for p in (self.gamma, self.beta, self.running_mean, self.running_var):
            _materialize(p, (channels,))
        moved = axis != 1
        if moved:
            x = tg.moveaxis(x, axis, 1)
        training = is_training() and not self._use_global_stats
        rm, rv = self.running_mean.data(), self.running_var.data()
        if training:  # the op itself: MXNet takes one value per channel (its output: beta)
            out = _norm._batch_norm(
                x, self.gamma.data(), self.beta.data(), training=True, eps=self._eps
            )
        else:
            out = tg.nn.functional.batch_norm(
                x, rm, rv, weight=self.gamma.data(), bias=self.beta.data(), eps=self._eps
            )
        if training:
            self._update_running(x, rm, rv)
        return tg.moveaxis(out, 1, axis) if moved else out

    def _update_running(self, x, rm, rv) -> None:
        """MXNet's update: momentum-weighted, with the biased (divide by N) batch variance."""
        tg = _tg()
        axes = (0,) + tuple(range(2, x.ndim))
        m = self._momentum
        with tg.no_grad():
            x = x.detach()
            batch_mean, batch_var = tg.mean(x, dim=axes), tg.var(x, dim=axes, correction=0)
            for stat, batch in ((rm, batch_mean), (rv, batch_var)):
                write_data(stat, stat.detach() * m + (1.0 - m) * batch.astype(stat.dtype))

    def _repr_body(self) -> str:
        return (
            f"axis={self._axis}, eps={self._eps}, momentum={self._momentum}, "
            f"in_channels={self.gamma.shape[0] or None}"
        )


class Flatten(HybridBlock):
    """Collapse every axis but the first: (N, ...) -> (N, prod(...))."""

    def forward(self, x):
        return _tg().reshape(x, (x.shape[0], -1))


class Embedding(HybridBlock):
    """Rows of `weight` (input_dim x output_dim) picked by integer (or integral float) indices."""

    def __init__(
        self,
        input_dim,
        output_dim,
        dtype="float32",
        weight_initializer=None,
        sparse_grad=False,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        # sparse_grad=True is accepted: the gradient is dense (the same values)
        self._dims = (input_dim, output_dim)
        self.weight = self.params.get(
            "weight", shape=(input_dim, output_dim), dtype=dtype, init=weight_initializer
        )

    def forward(self, x):
        tg = _tg()
        idx = x if x.dtype.kind in "iu" else x.astype("int64")
        return tg.nn.functional.embedding(idx, self.weight.data())

    def _repr_body(self) -> str:
        return f"{self._dims[0]} -> {self._dims[1]}"


class LayerNorm(HybridBlock):
    """Normalize over the last axis with learned scale (gamma) and shift (beta)."""

    def __init__(
        self,
        axis=-1,
        epsilon=1e-5,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        in_channels=0,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        if axis != -1:
            raise ValueError("LayerNorm: only axis=-1 is supported by the MXNet facade")
        self._eps = epsilon
        self.gamma, self.beta = _scale_shift(
            self, (in_channels,), scale, center, gamma_initializer, beta_initializer
        )

    def forward(self, x):
        n = x.shape[-1]
        if self.gamma.shape and self.gamma.shape[0] > 0 and self.gamma.shape[0] != n:
            from ...base import MXNetError

            raise MXNetError(
                f"LayerNorm: the input's last axis has {n} entries, but the layer "
                f"has in_channels={self.gamma.shape[0]}"
            )
        _materialize(self.gamma, (n,))
        _materialize(self.beta, (n,))
        return _tg().nn.functional.layer_norm(
            x, (n,), self.gamma.data(), self.beta.data(), self._eps
        )


class InstanceNorm(HybridBlock):
    """Normalize each sample's channel over its spatial axes, with a learned scale (gamma)
    and shift (beta) per channel (`axis` is the channel axis, 1 by default)."""

    def __init__(
        self,
        axis=1,
        epsilon=1e-5,
        center=True,
        scale=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        in_channels=0,
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        self._axis, self._eps = axis, epsilon
        self.gamma, self.beta = _scale_shift(
            self, (in_channels,), scale, center, gamma_initializer, beta_initializer
        )

    def forward(self, x):
        tg = _tg()
        x = tg.movedim(x, self._axis, 1) if self._axis != 1 else x
        c = x.shape[1]
        _materialize(self.gamma, (c,))
        _materialize(self.beta, (c,))
        out = tg.nn.functional.group_norm(x, c, self.gamma.data(), self.beta.data(), self._eps)
        return tg.movedim(out, 1, self._axis) if self._axis != 1 else out


class GroupNorm(HybridBlock):
    """Normalize over groups of channels (NC... input); MXNet 1.x's gamma and beta have one
    entry per group (shape (num_groups,))."""

    def __init__(
        self,
        num_groups=1,
        epsilon=1e-5,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        **kwargs,
    ) -> None:
        super().__init__(**block_args(kwargs))
        self._groups, self._eps = num_groups, epsilon
        self.gamma, self.beta = _scale_shift(
            self, (num_groups,), scale, center, gamma_initializer, beta_initializer
        )

    def forward(self, x):
        tg = _tg()
        g = self._groups
        if x.shape[1] % g:
            raise ValueError(f"GroupNorm: {x.shape[1]} channels do not split into {g} groups")
        _materialize(self.gamma, (g,))
        _materialize(self.beta, (g,))
        out = tg.nn.functional.group_norm(x, g, None, None, self._eps)
        grouped = tg.reshape(out, (x.shape[0], g, -1))
        shape = (1, g, 1)
        grouped = grouped * tg.reshape(self.gamma.data(), shape) + tg.reshape(
            self.beta.data(), shape
        )
        return tg.reshape(grouped, x.shape)


class Lambda(Block):
    """Wraps a function of arrays (or the name of an `mx.nd` function) as a block."""

    def __init__(self, function, prefix=None) -> None:
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import ndarray

            if not hasattr(ndarray, function):
                raise ValueError(f"Lambda: mx.nd has no function {function!r}")
            function = getattr(ndarray, function)
        elif not callable(function):
            raise ValueError(f"Lambda: expected a function or its name, got {function!r}")
        self._fn = function

    def forward(self, *args):
        return self._fn(*args)


class HybridLambda(HybridBlock):
    """Wraps `function(F, *args)` (F is `mx.nd`), or the name of an `mx.nd` function, as a
    hybrid block."""

    def __init__(self, function, prefix=None) -> None:
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            from ... import ndarray

            if not hasattr(ndarray, function):
                raise ValueError(f"HybridLambda: mx.nd has no function {function!r}")
            name = function

            def function(F, *args):  # noqa: N803 - MXNet's name for the namespace
                return getattr(F, name)(*args)
        elif not callable(function):
            raise ValueError(f"HybridLambda: expected a function or its name, got {function!r}")
        self._fn = function

    def forward(self, *args):
        from ... import ndarray

        return self._fn(ndarray, *args)


class Identity(HybridBlock):
    def forward(self, x):
        return x
