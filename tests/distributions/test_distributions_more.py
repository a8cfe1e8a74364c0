"""tg.distributions: Beta, Gamma, Dirichlet, Poisson, Binomial, Geometric, MultivariateNormal,
Independent, LogNormal and TransformedDistribution against torch.distributions."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import distributions as D


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


R = np.random.default_rng(1)
A = R.uniform(0.5, 3.0, (2, 3))
B = R.uniform(0.5, 3.0, (2, 3))
P = R.uniform(0.1, 0.9, (2, 3))
CONC = R.uniform(0.5, 3.0, (2, 4))
LOC = R.standard_normal((2, 3))

# name -> (parameters (numpy), value, properties torch has, which parameters get gradients)
CASES = {
    "Gamma": ({"concentration": A, "rate": B}, A / B, ("mean", "variance", "mode")),
    "Beta": ({"concentration1": A, "concentration0": B}, P, ("mean", "variance", "mode")),
    "Dirichlet": (
        {"concentration": CONC},
        R.dirichlet(np.ones(4), 2),
        ("mean", "variance", "mode"),
    ),
    "Poisson": ({"rate": A}, np.floor(A * 2), ("mean", "variance", "mode")),
    "Binomial": (
        {"total_count": np.full((2, 3), 7.0), "probs": P},
        np.floor(P * 7),
        ("mean", "variance", "mode"),
    ),
    "Geometric": ({"probs": P}, np.floor(A), ("mean", "variance", "mode")),
    "LogNormal": ({"loc": LOC, "scale": A}, B, ("mean", "variance", "mode")),
}
NO_ENTROPY = {"Poisson"}
NOT_DIFFERENTIABLE = {"total_count"}


def _make(module, name, params, lib, requires_grad=False):
    out = {}
    for k, v in params.items():
        rg = requires_grad and k not in NOT_DIFFERENTIABLE
        if lib == "tg":
            out[k] = tg.tensor(v, dtype="float64", requires_grad=rg)
        else:
            import torch

            out[k] = torch.tensor(v, dtype=torch.float64, requires_grad=rg)
    return getattr(module, name)(**out), out


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(torch, name):
    params, v, props = CASES[name]
    ours, _ = _make(D, name, params, "tg")
    theirs, _ = _make(torch.distributions, name, params, "torch")
    ov, tv = tg.tensor(v, dtype="float64"), torch.tensor(v, dtype=torch.float64)
    np.testing.assert_allclose(ours.log_prob(ov).numpy(), theirs.log_prob(tv).numpy(), rtol=1e-9)
    if name not in NO_ENTROPY:
        np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-9)
    for prop in props:
        np.testing.assert_allclose(
            getattr(ours, prop).numpy(), getattr(theirs, prop).numpy(), rtol=1e-9, err_msg=prop
        )
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(torch, name):
    params, v, _ = CASES[name]
    ours, op = _make(D, name, params, "tg", requires_grad=True)
    theirs, tp = _make(torch.distributions, name, params, "torch", requires_grad=True)
    ov, tv = tg.tensor(v, dtype="float64"), torch.tensor(v, dtype=torch.float64)
    lo, lt = ours.log_prob(ov).sum(), theirs.log_prob(tv).sum()
    if name not in NO_ENTROPY:
        lo, lt = lo + ours.entropy().sum(), lt + theirs.entropy().sum()
    lo.backward()
    lt.backward()
    for k in op:
        if k not in NOT_DIFFERENTIABLE:
            np.testing.assert_allclose(op[k].grad.numpy(), tp[k].grad.numpy(), rtol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck_float64(name):
    params, v, _ = CASES[name]
    names = [k for k in params if k not in NOT_DIFFERENTIABLE]
    fixed = {k: tg.tensor(params[k], dtype="float64") for k in params if k in NOT_DIFFERENTIABLE}
    leaves = tuple(tg.tensor(params[k], dtype="float64", requires_grad=True) for k in names)
    value = tg.tensor(v, dtype="float64")

    def fn(*args):
        d = getattr(D, name)(**dict(zip(names, args)), **fixed, validate_args=False)
        out = d.log_prob(value)
        return out if name in NO_ENTROPY else out + d.entropy()

    assert tg.autograd.gradcheck(fn, leaves)


@pytest.mark.parametrize(
    ("make", "mean", "var"),
    [
        (lambda: D.Gamma(3.0, 2.0), 1.5, 0.75),
        (lambda: D.Beta(2.0, 3.0), 0.4, 0.04),
        (lambda: D.Poisson(4.0), 4.0, 4.0),
        (lambda: D.Binomial(10, tg.tensor(0.3)), 3.0, 2.1),
        (lambda: D.Geometric(tg.tensor(0.4)), 1.5, 3.75),
        (lambda: D.LogNormal(0.0, 0.5), np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
    ],
)
def test_statistics_of_many_draws(make, mean, var):
    tg.manual_seed(5)
    d = make()
    s = d.sample((40000,)).numpy().astype(np.float64)
    assert bool(d.support.check(tg.tensor(s)).all())
    assert abs(s.mean() - mean) < 0.05 * max(1.0, mean)
    assert abs(s.var() - var) < 0.06 * max(1.0, var)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("sample_shape", [(), (3,), (2, 5)])
def test_sample_shapes_and_dtypes(torch, name, sample_shape):
    params, _, _ = CASES[name]
    ours, _ = _make(D, name, params, "tg")
    theirs, _ = _make(torch.distributions, name, params, "torch")
    s, t = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert s.shape == tuple(t.shape)
    assert str(s.dtype) == str(t.dtype).replace("torch.", "")
    wide = ours.expand((4,) + ours.batch_shape)
    assert (
        wide.sample(sample_shape).shape == tuple(sample_shape) + (4,) + s.shape[len(sample_shape) :]
    )


def test_dirichlet_draws_have_its_mean():
    tg.manual_seed(6)
    c = np.array([1.0, 2.0, 5.0])
    s = D.Dirichlet(tg.tensor(c)).sample((20000,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(s.mean(0), c / c.sum(), atol=0.01)


def test_gamma_beta_dirichlet_have_rsample_as_torch(torch):
    pairs = [
        (D.Gamma(1.0, 1.0), torch.distributions.Gamma(1.0, 1.0)),
        (D.Beta(1.0, 1.0), torch.distributions.Beta(1.0, 1.0)),
        (D.Dirichlet(tg.ones(2)), torch.distributions.Dirichlet(torch.ones(2))),
    ]
    for ours, theirs in pairs:
        assert ours.has_rsample and theirs.has_rsample
        assert ours.rsample((3,)).shape == tuple(theirs.rsample((3,)).shape)


SPD = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, -0.3], [0.1, -0.3, 1.0]])


@pytest.mark.parametrize("form", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_matches_torch(torch, form):
    mats = {
        "covariance_matrix": SPD,
        "precision_matrix": np.linalg.inv(SPD),
        "scale_tril": np.linalg.cholesky(SPD),
    }
    loc = R.standard_normal((2, 3))
    v = R.standard_normal((4, 2, 3))
    ol, om = tg.tensor(loc, requires_grad=True), tg.tensor(mats[form], requires_grad=True)
    tl = torch.tensor(loc, requires_grad=True)
    tm = torch.tensor(mats[form], requires_grad=True)
    ours = D.MultivariateNormal(ol, **{form: om})
    theirs = torch.distributions.MultivariateNormal(tl, **{form: tm})
    assert ours.batch_shape == (2,) and ours.event_shape == (3,)
    lo, lt = ours.log_prob(tg.tensor(v)), theirs.log_prob(torch.tensor(v))
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(
        ours.entropy().detach().numpy(), theirs.entropy().detach().numpy(), rtol=1e-9
    )
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril", "variance", "mean"):
        np.testing.assert_allclose(
            getattr(ours, prop).detach().numpy(),
            getattr(theirs, prop).detach().numpy(),
            rtol=1e-8,
            atol=1e-12,
        )
    (lo.sum() + ours.entropy().sum()).backward()
    (lt.sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(ol.grad.numpy(), tl.grad.numpy(), rtol=1e-8)
    np.testing.assert_allclose(om.grad.numpy(), tm.grad.numpy(), rtol=1e-7, atol=1e-10)


def test_multivariate_normal_gradcheck_and_rsample():
    v = tg.tensor(R.standard_normal((3,)))

    def fn(loc, cov):
        d = D.MultivariateNormal(
            loc, covariance_matrix=0.5 * (cov + cov.transpose(-1, -2)), validate_args=False
        )
        return d.log_prob(v) + d.entropy()

    assert tg.autograd.gradcheck(
        fn,
        (tg.tensor(R.standard_normal(3), requires_grad=True), tg.tensor(SPD, requires_grad=True)),
    )
    tg.manual_seed(7)
    low = tg.tensor(np.linalg.cholesky(SPD), requires_grad=True)
    d = D.MultivariateNormal(tg.zeros(3, dtype="float64"), scale_tril=low)
    s = d.rsample((20000,))
    np.testing.assert_allclose(np.cov(s.detach().numpy().T), SPD, atol=0.06)
    assert s.shape == (20000, 3)
    (s**2).sum().backward()  # d/dL sum (L eps)^2 = 2 (L eps) eps^T summed
    assert low.grad is not None and low.grad.shape == (3, 3)


def test_multivariate_normal_errors(torch):
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        D.MultivariateNormal(tg.zeros(2))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.MultivariateNormal(tg.tensor(0.0), covariance_matrix=tg.eye(1))
    with pytest.raises(ValueError, match="constraint PositiveDefinite"):
        D.MultivariateNormal(tg.zeros(2), covariance_matrix=tg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="constraint LowerCholesky"):
        D.MultivariateNormal(tg.zeros(2), scale_tril=tg.tensor([[1.0, 2.0], [0.0, 1.0]]))


def test_independent_matches_torch(torch):
    loc, scale = R.standard_normal((4, 3)), A[0]
    ours = D.Independent(D.Normal(tg.tensor(loc), tg.tensor(scale)), 1)
    theirs = torch.distributions.Independent(
        torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)), 1
    )
    assert (ours.batch_shape, ours.event_shape) == (
        tuple(theirs.batch_shape),
        tuple(theirs.event_shape),
    )
    v = R.standard_normal((5, 4, 3))
    np.testing.assert_allclose(
        ours.log_prob(tg.tensor(v)).numpy(), theirs.log_prob(torch.tensor(v)).numpy()
    )
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy())
    assert ours.sample((2,)).shape == (2, 4, 3)
    assert ours.expand((6, 4)).sample().shape == (6, 4, 3)
    assert ours.has_rsample
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(tg.zeros(3), 1.0), 2)


def test_transformed_distribution_matches_torch(torch):
    T, TT = D.transforms, torch.distributions.transforms
    ours = D.TransformedDistribution(
        D.Normal(tg.tensor(LOC), tg.tensor(A)), [T.AffineTransform(0.5, 2.0), T.SigmoidTransform()]
    )
    theirs = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.tensor(LOC), torch.tensor(A)),
        [TT.AffineTransform(0.5, 2.0), TT.SigmoidTransform()],
    )
    np.testing.assert_allclose(
        ours.log_prob(tg.tensor(P)).numpy(), theirs.log_prob(torch.tensor(P)).numpy(), rtol=1e-9
    )
    np.testing.assert_allclose(
        ours.cdf(tg.tensor(P)).numpy(), theirs.cdf(torch.tensor(P)).numpy(), rtol=1e-9
    )
    np.testing.assert_allclose(
        ours.icdf(tg.tensor(P)).numpy(), theirs.icdf(torch.tensor(P)).numpy(), rtol=1e-9
    )
    s = ours.sample((100,))
    assert s.shape == (100, 2, 3) and bool(((s > 0) & (s < 1)).all())
    flipped = D.TransformedDistribution(D.Normal(0.0, 1.0), T.AffineTransform(0.0, -1.0))
    np.testing.assert_allclose(flipped.cdf(tg.tensor(1.0)).item(), 0.8413447, rtol=1e-6)
    # LogNormal: differentiable rsample and cdf as torch's
    loc = tg.tensor(0.3, requires_grad=True)
    x = D.LogNormal(loc, 0.5).rsample((10,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.item(), x.detach().numpy().sum(), rtol=1e-5)
    np.testing.assert_allclose(
        D.LogNormal(0.3, 0.5).cdf(tg.tensor(1.5)).item(),
        torch.distributions.LogNormal(0.3, 0.5).cdf(torch.tensor(1.5)).item(),
        rtol=1e-6,
    )


def test_bad_parameters(torch):
    with pytest.raises(ValueError, match="parameter concentration .*GreaterThan"):
        D.Gamma(-1.0, 1.0)
    with pytest.raises(ValueError, match="parameter total_count .*IntegerGreaterThan"):
        D.Binomial(tg.tensor(2.5), tg.tensor(0.5))
    with pytest.raises(ValueError, match="parameter probs .*to be positive"):
        D.Geometric(tg.tensor(0.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Poisson(1.0).log_prob(tg.tensor(0.5))
    with pytest.raises(ValueError, match="within the support"):
        D.Binomial(3, tg.tensor(0.5)).log_prob(tg.tensor(4.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Dirichlet(tg.ones(3)).log_prob(tg.tensor([0.5, 0.6, 0.1]))
