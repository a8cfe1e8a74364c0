"""kl_divergence(p, q) and register_kl: closed-form KL divergences, dispatched on the types.

Every closed form is composed of differentiable tapegrad ops, so a KL term in a loss (a
VAE's KL to the prior, a trust region) back-propagates into both distributions' parameters.

>>> from tapegrad.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0))
tensor(0.4431)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from ._linalg import solve_lower
from ._special import digamma, lgamma
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent, sum_rightmost
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KLFunction = Callable[[Any, Any], Tensor]
_REGISTRY: dict[tuple[type, type], _KLFunction] = {}
_CACHE: dict[tuple[type, type], _KLFunction | None] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[_KLFunction], _KLFunction]:
    """A decorator registering `fn(p, q)` as KL(p || q) for p of type `type_p` (or a
    subclass) and q of type `type_q` (or a subclass).

    `kl_divergence` uses the most specific registered pair: a pair whose two types are
    subclasses of another pair's wins. Where two pairs match and neither is more specific
    (one more specific in p, the other in q), it warns (RuntimeWarning) and uses the one
    more specific in p; register the exact pair to settle it.

    >>> from tapegrad.distributions import Distribution, Normal, kl_divergence, register_kl
    >>> class Point(Normal): ...
    >>> @register_kl(Point, Point)
    ... def _kl_point_point(p, q):
    ...     return (p.loc - q.loc).abs()
    >>> kl_divergence(Point(0.0, 1.0), Point(3.0, 1.0))
    tensor(3.)
    """
    for name, cls in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(
                f"register_kl: expected {name} to be a Distribution subclass, got {cls!r}"
            )

    def decorator(fn: _KLFunction) -> _KLFunction:
        _REGISTRY[type_p, type_q] = fn
        _CACHE.clear()  # a new pair can be more specific than a cached choice
        return fn

    return decorator


def _more_specific(a: tuple[type, type], b: tuple[type, type]) -> bool:
    """Whether pair `a` is at least as specific as `b` in both places."""
    return issubclass(a[0], b[0]) and issubclass(a[1], b[1])


def _dispatch(type_p: type, type_q: type) -> _KLFunction | None:
    key = (type_p, type_q)
    if key in _CACHE:
        return _CACHE[key]
    matches = [m for m in _REGISTRY if issubclass(type_p, m[0]) and issubclass(type_q, m[1])]
    fn = None
    if matches:
        best = [m for m in matches if all(_more_specific(m, o) for o in matches if o != m)]
        if best:
            fn = _REGISTRY[best[0]]
        else:
            # no pair beats every other: the one nearest to type_p in its MRO, then to type_q
            mro_p, mro_q = type_p.__mro__, type_q.__mro__
            minimal = [
                m for m in matches if not any(_more_specific(o, m) for o in matches if o != m)
            ]
            chosen = min(minimal, key=lambda m: (mro_p.index(m[0]), mro_q.index(m[1])))
            names = ", ".join(f"({a.__name__}, {b.__name__})" for a, b in minimal)
            warnings.warn(
                f"kl_divergence: ambiguous KL({type_p.__name__} || {type_q.__name__}): the "
                f"registered pairs {names} match equally; using ({chosen[0].__name__}, "
                f"{chosen[1].__name__}). Register the pair with register_kl("
                f"{type_p.__name__}, {type_q.__name__}) to choose",
                RuntimeWarning,
                stacklevel=3,
            )
            fn = _REGISTRY[chosen]
    _CACHE[key] = fn
    return fn


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], one value per element of the broadcast batch
    (inf where p has mass outside q's support).

    Closed forms are registered for Normal, Uniform, Bernoulli, Binomial, Categorical,
    OneHotCategorical, Exponential, Laplace, Gamma, Beta, Dirichlet, Poisson, Geometric and
    MultivariateNormal pairs of the same family, and Independent pairs (summing the
    reinterpreted dimensions); others are added with `register_kl`.

    >>> from tapegrad.distributions import Bernoulli, kl_divergence
    >>> kl_divergence(Bernoulli(tg.tensor([0.5, 0.9])), Bernoulli(0.5))
    tensor([0.    , 0.3681])
    """
    for name, d in (("p", p), ("q", q)):
        if not isinstance(d, Distribution):
            raise TypeError(
                f"kl_divergence: {name} must be a tapegrad.distributions.Distribution, got "
                f"{type(d).__name__}"
            )
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(
            f"kl_divergence: no KL(p || q) is registered for p of type {type(p).__name__} "
            f"and q of type {type(q).__name__}; add one with @register_kl("
            f"{type(p).__name__}, {type(q).__name__})"
        )
    return fn(p, q)


def _where(cond: Tensor, value: float, other: Tensor) -> Tensor:
    import tapegrad as tg

    return tg.where(cond, value, other)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    # log(sq / sp) + (sp^2 + (mp - mq)^2) / (2 sq^2) - 1/2, with r = (sp / sq)^2
    r = (p.scale / q.scale) ** 2
    t = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (r + t - 1.0 - r.log())


def _binary_kl(p_probs: Tensor, p_logits: Tensor, q_probs: Tensor, q_logits: Tensor) -> Tensor:
    import tapegrad.nn.functional as F

    # log p = -softplus(-logit), log(1 - p) = -softplus(logit): finite for every logit
    ones = p_probs * (F.softplus(-q_logits) - F.softplus(-p_logits))
    ones = _where(p_probs == 0, 0.0, _where(q_probs == 0, math.inf, ones))
    zeros = (1 - p_probs) * (F.softplus(q_logits) - F.softplus(p_logits))
    zeros = _where(p_probs == 1, 0.0, _where(q_probs == 1, math.inf, zeros))
    return ones + zeros


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    return _binary_kl(p.probs, p.logits, q.probs, q.logits)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((q.total_count > p.total_count).any()):
        raise NotImplementedError(
            "kl_divergence: KL between Binomials where q.total_count > p.total_count is not "
            "implemented (it has no closed form)"
        )
    kl = p.total_count * _binary_kl(p.probs, p.logits, q.probs, q.logits)
    # p puts mass on counts above q's total_count
    return _where(q.total_count < p.total_count, math.inf, kl)


def _categorical_kl(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _where(p.probs == 0, 0.0, _where(q.probs == 0, math.inf, t))
    return t.sum(-1)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    return _categorical_kl(p, q)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _categorical_kl(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    kl = ((q.high - q.low) / (p.high - p.low)).log()
    return _where((q.low > p.low) | (q.high < p.high), math.inf, kl)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1.0


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    ratio = p.scale / q.scale
    gap = (p.loc - q.loc).abs()
    return -ratio.log() + gap / q.scale + ratio * (-gap / p.scale).exp() - 1.0


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return (a - c) * digamma(a) - lgamma(a) + lgamma(c) + c * (b.log() - d.log()) + a * (d - b) / b


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    a1, b1 = p.concentration1, p.concentration0
    a2, b2 = q.concentration1, q.concentration0
    log_beta_p = lgamma(a1) + lgamma(b1) - lgamma(a1 + b1)
    log_beta_q = lgamma(a2) + lgamma(b2) - lgamma(a2 + b2)
    return (
        log_beta_q
        - log_beta_p
        + (a1 - a2) * digamma(a1)
        + (b1 - b2) * digamma(b1)
        + (a2 - a1 + b2 - b1) * digamma(a1 + b1)
    )


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    return (
        lgamma(a0)
        - lgamma(a).sum(-1)
        - lgamma(b0)
        + lgamma(b).sum(-1)
        + ((a - b) * (digamma(a) - digamma(a0).unsqueeze(-1))).sum(-1)
    )


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    import tapegrad as tg

    # xlogy: a rate-0 p is the point mass at 0, whose KL is q.rate (PyTorch gives nan)
    return tg.xlogy(p.rate, p.rate) - tg.xlogy(p.rate, q.rate) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    # -H(p) - E_p[log q(k)], with log q(k) = log q + k log(1 - q) and E_p[k] = (1 - p) / p
    failures = (1.0 - p.probs) / p.probs
    return -p.entropy() - (q.probs.log() + failures * (-q.probs).log1p())


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "kl_divergence: KL between MultivariateNormals of different event shapes "
            f"{p.event_shape} and {q.event_shape} cannot be computed"
        )
    k = p.event_shape[0]
    low_p, low_q = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    # tr(Sq^-1 Sp) = |Lq^-1 Lp|_F^2; the Mahalanobis term = |Lq^-1 (mq - mp)|^2
    trace = (solve_lower(low_q, low_p) ** 2).sum((-2, -1))
    diff = (q.loc - p.loc).unsqueeze(-1)
    maha = (solve_lower(low_q, diff).squeeze(-1) ** 2).sum(-1)
    half_log_det = q._half_log_det() - p._half_log_det()
    kl = half_log_det + 0.5 * (trace + maha - k)
    batch = np.broadcast_shapes(p.batch_shape, q.batch_shape)
    return kl if tuple(kl.shape) == batch else kl.expand(*batch)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            "kl_divergence: KL between Independent distributions of different "
            f"reinterpreted_batch_ndims ({p.reinterpreted_batch_ndims} and "
            f"{q.reinterpreted_batch_ndims}) is not implemented"
        )
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
