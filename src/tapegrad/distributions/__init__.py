"""tg.distributions: probability distributions with differentiable log_prob, entropy and
reparameterized sampling (PyTorch's `torch.distributions`).

Draws come from tapegrad's generator (`tg.manual_seed` seeds it): the same seed gives the
same numbers in tapegrad, not PyTorch's numbers.

>>> from tapegrad.distributions import Normal
>>> loc = tg.tensor(0.0, requires_grad=True)
>>> Normal(loc, 1.0).log_prob(tg.tensor(1.0)).backward()
>>> loc.grad
tensor(1.)
"""

from __future__ import annotations

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential
from .laplace import Laplace
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = [
    "Bernoulli",
    "Categorical",
    "Distribution",
    "Exponential",
    "Laplace",
    "Normal",
    "OneHotCategorical",
    "Uniform",
    "constraints",
]
