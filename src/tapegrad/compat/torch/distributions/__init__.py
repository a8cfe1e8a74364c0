"""`torch.distributions`: tapegrad.distributions (Normal, Categorical, ..., kl_divergence).

>>> import tapegrad.compat.torch as torch
>>> torch.distributions.Normal(0.0, 1.0).log_prob(torch.tensor(0.0))
tensor(-0.9189)
"""

from __future__ import annotations

from ..._facade import forward_getattr
from . import constraints  # noqa: F401

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.distributions)", "tapegrad.distributions"
)
