"""Random layers beyond Dropout: RReLU, AlphaDropout, FeatureAlphaDropout
(nn/functional_stochastic.py); random while training, deterministic in eval mode.

    >>> layer = tg.nn.RReLU(0.1, 0.3).eval()
    >>> layer(tg.tensor([-1.0, 1.0])).numpy()
    array([-0.2,  1. ], dtype=float32)
"""

from __future__ import annotations

from . import functional_stochastic as _fs
from .layers import _DropoutNd
from .module import Module

__all__ = ["RReLU", "AlphaDropout", "FeatureAlphaDropout"]


class RReLU(Module):
    """Randomized leaky ReLU, as torch.nn.RReLU: slopes U(lower, upper) per element while
    training, (lower + upper) / 2 in eval mode.

    >>> tg.nn.RReLU()
    RReLU(lower=0.125, upper=0.3333333333333333)
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return _fs.rrelu(input, self.lower, self.upper, self.is_training_now, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )


class _AlphaDropoutNd(_DropoutNd):
    _fn = staticmethod(_fs.alpha_dropout)


class AlphaDropout(_AlphaDropoutNd):
    """Dropout that keeps a SELU network's mean and variance (`F.alpha_dropout`).

    >>> tg.nn.AlphaDropout(0.2).eval()(tg.ones(3)).numpy()
    array([1., 1., 1.], dtype=float32)
    """

    _fn = staticmethod(_fs.alpha_dropout)


class FeatureAlphaDropout(_AlphaDropoutNd):
    """Alpha dropout of whole channels of (N, C, *) (`F.feature_alpha_dropout`).

    >>> tg.nn.FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    _fn = staticmethod(_fs.feature_alpha_dropout)
