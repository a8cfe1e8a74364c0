"""Gluon activation blocks and the `activation=` names of Dense/Conv2D."""

from __future__ import annotations

from ..block import HybridBlock, block_args

__all__ = ["Activation", "LeakyReLU", "ELU", "GELU", "Swish", "SiLU", "activation_fn"]


def _F():  # noqa: N802 - the core's elementwise activations
    import tapegrad as tg

    return tg


def _softsign(x):
    return x / (1 + abs(x))


_ACTIVATIONS = {
    "relu": lambda x: _F().relu(x),
    "sigmoid": lambda x: _F().sigmoid(x),
    "tanh": lambda x: _F().tanh(x),
    "softrelu": lambda x: _F().softplus(x),
    "softsign": _softsign,
}


def activation_fn(name):
    """The function for an MXNet activation name (relu sigmoid tanh softrelu softsign)."""
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown activation {name!r}; MXNet's act_type is one of {sorted(_ACTIVATIONS)}"
        ) from None


class Activation(HybridBlock):
    """Applies `activation` ("relu", "sigmoid", "tanh", "softrelu", "softsign")."""

    def __init__(self, activation, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._act_type = activation
        self._fn = activation_fn(activation)

    def forward(self, x):
        return self._fn(x)

    def _repr_body(self) -> str:
        return self._act_type


class LeakyReLU(HybridBlock):
    """max(x, alpha * x)."""

    def __init__(self, alpha, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._alpha = alpha

    def forward(self, x):
        return _F().leaky_relu(x, self._alpha)


class ELU(HybridBlock):
    def __init__(self, alpha=1.0, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._alpha = alpha

    def forward(self, x):
        return _F().elu(x, self._alpha)


class GELU(HybridBlock):
    """GELU with the exact erf form (MXNet's default)."""

    def __init__(self, approximation="erf", **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._approx = "none" if approximation == "erf" else "tanh"

    def forward(self, x):
        return _F().gelu(x, approximate=self._approx)


class Swish(HybridBlock):
    """x * sigmoid(beta * x)."""

    def __init__(self, beta=1.0, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        self._beta = beta

    def forward(self, x):
        return x * _F().sigmoid(self._beta * x)


class SELU(HybridBlock):
    """scale * x for x >= 0, scale * alpha * expm1(x) below (the self-normalizing constants)."""

    _SCALE, _ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717

    def forward(self, x):
        import tapegrad as tg

        return tg.where(x >= 0, self._SCALE * x, (self._SCALE * self._ALPHA) * tg.expm1(x))


class PReLU(HybridBlock):
    """max(x, alpha * x) with learned slopes `alpha`: one (in_channels=1), or one per
    channel (axis 1)."""

    def __init__(self, alpha_initializer=None, in_channels=1, **kwargs) -> None:
        super().__init__(**block_args(kwargs))
        from ...initializer import Constant

        init = alpha_initializer if alpha_initializer is not None else Constant(0.25)
        self.alpha = self.params.get("alpha", shape=(in_channels,), init=init)

    def forward(self, x):
        import tapegrad as tg

        alpha = self.alpha.data()
        if x.ndim > 1 and alpha.shape[0] > 1:
            alpha = tg.reshape(alpha, (1, -1) + (1,) * (x.ndim - 2))
        return tg.where(x >= 0, x, x * alpha)


class SiLU(Swish):
    def __init__(self, **kwargs) -> None:
        super().__init__(1.0)
