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

from . import constraints, kl, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform, SigmoidTransform, Transform
from .uniform import Uniform

__all__ = [
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "Gamma",
    "Geometric",
    "Independent",
    "Laplace",
    "LogNormal",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "SigmoidTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "kl_divergence",
    "register_kl",
    "kl",
    "transforms",
]
