"""Gluon activation blocks and the `activation=` names of Dense/Conv2D."""
from __future__ import annotations

from ..block import HybridBlock, block_args

__all__ = ["Activation", "LeakyReLU", "ELU", "GELU", "Swish", "SiLU", "activation_fn"]


def _F():  # noqa: N802 - the core's elementwise activations (API.md 1)
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


class SiLU(Swish):
    def __init__(self, **kwargs) -> None:
        super().__init__(1.0)
