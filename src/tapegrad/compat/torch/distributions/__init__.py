"""`torch.distributions`: tapegrad.distributions (Normal, Categorical, ..., kl_divergence).

The classes are tapegrad's own: parameters, `log_prob`, `entropy`, `cdf` and `rsample` are
differentiable tapegrad computations; `sample()` draws from tapegrad's generator (so
`torch.manual_seed` makes runs repeatable, not equal to PyTorch's draws). Arguments are
validated as in PyTorch (its default `validate_args`). PyTorch's submodule paths
(`torch.distributions.normal.Normal`, `torch.distributions.kl.kl_divergence`, ...) name the
same objects.

>>> import tapegrad.compat.torch as torch
>>> torch.distributions.Normal(0.0, 1.0).log_prob(torch.tensor(0.0))
tensor(-0.9189)
>>> from tapegrad.compat.torch.distributions.categorical import Categorical
>>> Categorical is torch.distributions.Categorical
True
"""

from __future__ import annotations

import sys
import types

from ..._facade import forward_getattr
from . import constraints  # noqa: F401

# PyTorch's torch/distributions/*.py that tapegrad.distributions has a module for
_SUBMODULES = [
    "bernoulli",
    "beta",
    "binomial",
    "categorical",
    "dirichlet",
    "distribution",
    "exponential",
    "gamma",
    "geometric",
    "independent",
    "kl",
    "laplace",
    "log_normal",
    "multivariate_normal",
    "normal",
    "one_hot_categorical",
    "poisson",
    "transformed_distribution",
    "transforms",
    "uniform",
    "utils",
]


def _submodule(leaf: str) -> types.ModuleType:
    full = f"{__name__}.{leaf}"
    module = types.ModuleType(full, f"`torch.distributions.{leaf}`: tapegrad.distributions'.")
    # resolved on first use, so importing the facade does not import every distribution
    vars(module)["__getattr__"] = forward_getattr(
        full,
        f"the PyTorch facade (torch.distributions.{leaf})",
        f"tapegrad.distributions.{leaf}",
    )
    sys.modules[full] = module  # (so that `from torch.distributions.normal import Normal` works)
    return module


for _leaf in _SUBMODULES:
    globals()[_leaf] = _submodule(_leaf)

__getattr__ = forward_getattr(
    __name__, "the PyTorch facade (torch.distributions)", "tapegrad.distributions"
)
