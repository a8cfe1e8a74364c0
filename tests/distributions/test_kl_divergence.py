"""tg.distributions.kl_divergence: the closed forms against torch.distributions.kl_divergence
(values and gradients in both distributions' parameters), finite-difference gradient checks
in float64, the infinite cases, and register_kl's dispatch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import distributions as D


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


R = np.random.default_rng(7)
POS_P, POS_Q = R.uniform(0.5, 3.0, (2, 3)), R.uniform(0.5, 3.0, (3,))
LOC_P, LOC_Q = R.standard_normal((2, 3)), R.standard_normal((3,))
PR_P, PR_Q = R.uniform(0.1, 0.9, (2, 3)), R.uniform(0.1, 0.9, (3,))
SIMPLEX_P, SIMPLEX_Q = R.dirichlet(np.ones(4), 2), R.dirichlet(np.ones(4), 1)[0]
CONC_P, CONC_Q = R.uniform(0.5, 3.0, (2, 4)), R.uniform(0.5, 3.0, (4,))


def _tril(batch):
    low = np.tril(R.standard_normal(batch + (3, 3)) * 0.3)
    idx = np.arange(3)
    low[..., idx, idx] = R.uniform(0.5, 1.5, batch + (3,))
    return low


def _cov(batch):
    low = _tril(batch)
    return low @ np.swapaxes(low, -1, -2)


# name -> (build(module, *params), p's parameters, q's parameters, indices not differentiable)
CASES = {
    "Normal": (lambda M, a, b: M.Normal(a, b), [LOC_P, POS_P], [LOC_Q, POS_Q], ()),
    # (torch's Bernoulli KL cannot broadcast p's batch against q's: one batch shape here)
    "Bernoulli-probs": (lambda M, p: M.Bernoulli(probs=p), [PR_P], [PR_P[::-1].copy()], ()),
    "Bernoulli-logits": (lambda M, x: M.Bernoulli(logits=x), [LOC_P], [LOC_P[::-1].copy()], ()),
    "Binomial": (
        lambda M, n, p: M.Binomial(n, probs=p),
        [np.full((2, 3), 6.0), PR_P],
        [np.full((3,), 6.0), PR_Q],
        (0,),
    ),
    "Categorical-probs": (
        lambda M, p: M.Categorical(probs=p),
        [SIMPLEX_P],
        [SIMPLEX_Q],
        (),
    ),
    "Categorical-logits": (
        lambda M, x: M.Categorical(logits=x),
        [R.standard_normal((2, 4))],
        [R.standard_normal(4)],
        (),
    ),
    "OneHotCategorical": (
        lambda M, p: M.OneHotCategorical(probs=p),
        [SIMPLEX_P],
        [SIMPLEX_Q],
        (),
    ),
    "Uniform": (
        lambda M, lo, hi: M.Uniform(lo, hi),
        [LOC_P, LOC_P + POS_P],
        [np.full(3, -3.0), np.full(3, 7.0)],
        (),
    ),
    "Exponential": (lambda M, r: M.Exponential(r), [POS_P], [POS_Q], ()),
    "Laplace": (lambda M, a, b: M.Laplace(a, b), [LOC_P, POS_P], [LOC_Q, POS_Q], ()),
    "Gamma": (
        lambda M, a, b: M.Gamma(a, b),
        [POS_P, POS_P[::-1].copy()],
        [POS_Q, POS_Q[::-1].copy()],
        (),
    ),
    "Beta": (
        lambda M, a, b: M.Beta(a, b),
        [POS_P, POS_P[::-1].copy()],
        [POS_Q, POS_Q[::-1].copy()],
        (),
    ),
    "Dirichlet": (lambda M, c: M.Dirichlet(c), [CONC_P], [CONC_Q], ()),
    "Poisson": (lambda M, r: M.Poisson(r), [POS_P], [POS_Q], ()),
    "Geometric": (lambda M, p: M.Geometric(probs=p), [PR_P], [PR_Q], ()),
    "MultivariateNormal-scale_tril": (
        lambda M, m, s: M.MultivariateNormal(m, scale_tril=s.tril()),
        [LOC_P, _tril((2,))],
        [LOC_Q, _tril(())],
        (),
    ),
    "Independent-Normal": (
        lambda M, a, b: M.Independent(M.Normal(a, b), 1),
        [LOC_P, POS_P],
        [LOC_Q, POS_Q],
        (),
    ),
    "Independent-Bernoulli-2": (
        lambda M, p: M.Independent(M.Bernoulli(probs=p), 2),
        [PR_P],
        [np.broadcast_to(PR_Q, (2, 3)).copy()],
        (),
    ),
}


def _tensors(lib, values, fixed, requires_grad=True):
    if lib == "tg":
        make = lambda v, rg: tg.tensor(v, dtype="float64", requires_grad=rg)  # noqa: E731
    else:
        import torch

        make = lambda v, rg: torch.tensor(v, dtype=torch.float64, requires_grad=rg)  # noqa: E731
    return [make(v, requires_grad and i not in fixed) for i, v in enumerate(values)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_as_torch(torch, name):
    build, p_values, q_values, fixed = CASES[name]
    ours_p, ours_q = _tensors("tg", p_values, fixed), _tensors("tg", q_values, fixed)
    theirs_p, theirs_q = _tensors("torch", p_values, fixed), _tensors("torch", q_values, fixed)
    kl = D.kl_divergence(build(D, *ours_p), build(D, *ours_q))
    kl_t = torch.distributions.kl_divergence(
        build(torch.distributions, *theirs_p), build(torch.distributions, *theirs_q)
    )
    assert kl.shape == tuple(kl_t.shape)
    assert kl.dtype == tg.float64
    np.testing.assert_allclose(kl.detach().numpy(), kl_t.detach().numpy(), rtol=1e-10)
    leaves = [t for t in ours_p + ours_q if t.requires_grad]
    leaves_t = [t for t in theirs_p + theirs_q if t.requires_grad]
    grads = tg.autograd.grad(kl.sum(), leaves)
    grads_t = torch.autograd.grad(kl_t.sum(), leaves_t)
    for g, gt in zip(grads, grads_t):
        np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)


GRADCHECK = sorted(set(CASES) - {"Categorical-probs", "OneHotCategorical"}) + ["simplex"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck_float64(name):
    if name == "simplex":
        # probs are normalized inside Categorical: perturb free logits through a softmax
        def build(M, x):
            return M.Categorical(probs=tg.nn.functional.softmax(x, dim=-1))

        p_values, q_values, fixed = [R.standard_normal((2, 4))], [R.standard_normal(4)], ()
    else:
        build, p_values, q_values, fixed = CASES[name]
    n = len(p_values)
    tensors = _tensors("tg", p_values + q_values, tuple(fixed) + tuple(i + n for i in fixed))
    leaves = [t for t in tensors if t.requires_grad]

    def fn(*args):
        it = iter(args)
        full = [next(it) if t.requires_grad else t for t in tensors]
        return D.kl_divergence(build(D, *full[:n]), build(D, *full[n:]))

    assert tg.autograd.gradcheck(fn, leaves)


def test_multivariate_normal_covariance_and_precision_as_torch(torch):
    loc_p, loc_q = LOC_P, LOC_Q
    cov_p, prec_q = _cov((2,)), np.linalg.inv(_cov(()))
    kl = D.kl_divergence(
        D.MultivariateNormal(tg.tensor(loc_p), covariance_matrix=tg.tensor(cov_p)),
        D.MultivariateNormal(tg.tensor(loc_q), precision_matrix=tg.tensor(prec_q)),
    )
    kl_t = torch.distributions.kl_divergence(
        torch.distributions.MultivariateNormal(
            torch.tensor(loc_p), covariance_matrix=torch.tensor(cov_p)
        ),
        torch.distributions.MultivariateNormal(
            torch.tensor(loc_q), precision_matrix=torch.tensor(prec_q)
        ),
    )
    np.testing.assert_allclose(kl.numpy(), kl_t.numpy(), rtol=1e-9)
    same = D.MultivariateNormal(tg.tensor(loc_q), covariance_matrix=tg.tensor(cov_p[0]))
    np.testing.assert_allclose(D.kl_divergence(same, same).numpy(), 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(same, D.MultivariateNormal(tg.zeros(2), tg.eye(2)))


def test_infinite_and_degenerate_cases_as_torch(torch):
    def both(name, p_args, q_args, **kw):
        ours = D.kl_divergence(
            getattr(D, name)(*map(tg.tensor, p_args), **kw),
            getattr(D, name)(*map(tg.tensor, q_args), **kw),
        )
        theirs = torch.distributions.kl_divergence(
            getattr(torch.distributions, name)(*map(torch.tensor, p_args), **kw),
            getattr(torch.distributions, name)(*map(torch.tensor, q_args), **kw),
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        return ours.numpy()

    # p's support outside q's: inf
    out = both("Uniform", ([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ([0.0, 0.5, -1.0], [2.0, 2.0, 0.5]))
    np.testing.assert_allclose(out, [np.log(2.0), np.inf, np.inf])
    out = both("Bernoulli", ([0.0, 1.0, 0.5, 0.0, 0.3],), ([0.5, 0.5, 0.0, 0.0, 1.0],))
    np.testing.assert_allclose(out[[2, 3, 4]], [np.inf, 0.0, np.inf])
    out = both("Categorical", ([[0.0, 1.0], [0.5, 0.5]],), ([[0.5, 0.5], [0.0, 1.0]],))
    np.testing.assert_allclose(out, [np.log(2.0), np.inf], rtol=1e-6)
    both("Geometric", ([1.0, 0.5],), ([0.5, 0.3],))
    with pytest.raises(NotImplementedError, match="total_count"):
        D.kl_divergence(D.Binomial(5, tg.tensor(0.3)), D.Binomial(6, tg.tensor(0.4)))
    big = D.kl_divergence(D.Binomial(6, tg.tensor(0.3)), D.Binomial(5, tg.tensor(0.4)))
    assert big.item() == np.inf


def test_poisson_rate_zero_is_the_point_mass_limit():
    # KL(delta_0 || Poisson(r)) = r (PyTorch's formula gives nan there)
    kl = D.kl_divergence(
        D.Poisson(tg.tensor([0.0, 0.0, 1.0])), D.Poisson(tg.tensor([2.0, 0.0, 0.0]))
    )
    np.testing.assert_allclose(kl.numpy(), [2.0, 0.0, np.inf])


def test_kl_is_zero_for_equal_and_positive_otherwise():
    tg.manual_seed(0)
    for build in (
        lambda: D.Normal(tg.randn(4), tg.rand(4) + 0.5),
        lambda: D.Gamma(tg.rand(4) + 0.5, tg.rand(4) + 0.5),
        lambda: D.Dirichlet(tg.rand(2, 5) + 0.5),
        lambda: D.Laplace(tg.randn(4), tg.rand(4) + 0.5),
    ):
        p, q = build(), build()
        np.testing.assert_allclose(D.kl_divergence(p, p).numpy(), 0.0, atol=1e-6)
        assert bool((D.kl_divergence(p, q) > 0).all())


def test_monte_carlo_agrees_with_the_closed_form():
    # E_p[log p - log q] over many draws, for a pair whose closed form is not Normal's
    tg.manual_seed(1)
    p, q = D.Gamma(tg.tensor(2.5), tg.tensor(1.5)), D.Gamma(tg.tensor(1.5), tg.tensor(0.7))
    x = p.sample((200_000,))
    mc = (p.log_prob(x) - q.log_prob(x)).mean().item()
    assert abs(mc - D.kl_divergence(p, q).item()) < 0.01


def test_unregistered_pair_and_bad_arguments():
    with pytest.raises(NotImplementedError, match="Normal.*Laplace.*register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))
    with pytest.raises(NotImplementedError, match="reinterpreted_batch_ndims"):
        D.kl_divergence(
            D.Independent(D.Normal(tg.zeros(2, 3), 1.0), 1),
            D.Independent(D.Normal(tg.zeros(2, 3), 1.0), 2),
        )
    with pytest.raises(TypeError, match="kl_divergence: q must be"):
        D.kl_divergence(D.Normal(0.0, 1.0), 3.0)
    with pytest.raises(TypeError, match="register_kl: expected type_q"):
        D.register_kl(D.Normal, int)


def test_register_kl_uses_the_most_specific_pair():
    class Base(D.Normal):
        pass

    class Child(Base):
        pass

    class Other(D.Normal):
        pass

    calls = []

    @D.register_kl(Base, Base)
    def _base(p, q):
        calls.append("base")
        return p.loc * 0

    # without a pair of their own, subclasses use the nearest registered one
    D.kl_divergence(Child(0.0, 1.0), Child(0.0, 1.0))
    assert calls == ["base"]
    np.testing.assert_allclose(
        D.kl_divergence(Other(0.0, 1.0), Other(1.0, 2.0)).numpy(), 0.4431471805599453
    )

    @D.register_kl(Child, Base)
    def _child(p, q):
        calls.append("child")
        return p.loc * 0

    D.kl_divergence(Child(0.0, 1.0), Child(0.0, 1.0))  # (Child, Base) beats (Base, Base)
    D.kl_divergence(Base(0.0, 1.0), Child(0.0, 1.0))
    assert calls == ["base", "child", "base"]

    @D.register_kl(Base, Child)
    def _other_side(p, q):
        calls.append("other")
        return p.loc * 0

    # (Child, Base) and (Base, Child) both match (Child, Child): ambiguous, p's side wins
    with pytest.warns(RuntimeWarning, match="ambiguous.*register_kl\\(Child, Child\\)"):
        D.kl_divergence(Child(0.0, 1.0), Child(0.0, 1.0))
    assert calls[-1] == "child"

    @D.register_kl(Child, Child)
    def _exact(p, q):
        calls.append("exact")
        return p.loc * 0

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.kl_divergence(Child(0.0, 1.0), Child(0.0, 1.0))
    assert calls[-1] == "exact"


def test_torch_facade_paths(torch):
    import importlib

    ftorch = importlib.import_module("tapegrad.compat.torch")
    kl_module = importlib.import_module("tapegrad.compat.torch.distributions.kl")
    assert ftorch.distributions.kl_divergence is D.kl_divergence
    assert ftorch.distributions.register_kl is D.register_kl
    assert kl_module.kl_divergence is D.kl_divergence
    assert kl_module.register_kl is D.register_kl
    p = ftorch.distributions.Normal(ftorch.tensor([0.0, 1.0]), 1.0)
    q = ftorch.distributions.Normal(0.5, 2.0)
    ref = torch.distributions.kl_divergence(
        torch.distributions.Normal(torch.tensor([0.0, 1.0]), 1.0),
        torch.distributions.Normal(0.5, 2.0),
    )
    np.testing.assert_allclose(kl_module.kl_divergence(p, q).numpy(), ref.numpy(), rtol=1e-6)


def test_binary_kl_broadcasts_the_batches(torch):
    # torch's own Bernoulli KL needs equal batch shapes; ours broadcasts as the others do
    kl = D.kl_divergence(D.Bernoulli(tg.tensor(PR_P)), D.Bernoulli(tg.tensor(PR_Q)))
    kl_t = torch.distributions.kl_divergence(
        torch.distributions.Bernoulli(torch.tensor(PR_P)),
        torch.distributions.Bernoulli(torch.tensor(np.broadcast_to(PR_Q, (2, 3)).copy())),
    )
    np.testing.assert_allclose(kl.numpy(), kl_t.numpy(), rtol=1e-10)
