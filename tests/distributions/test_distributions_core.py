"""tg.distributions, the core: Normal, Uniform, Bernoulli, Categorical, OneHotCategorical,
Exponential, Laplace against torch.distributions (values, shapes, gradients, errors)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import distributions as D


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


R = np.random.default_rng(0)
LOC = R.standard_normal((2, 3))
SCALE = R.uniform(0.5, 2.0, (2, 3))
PROBS = R.uniform(0.1, 0.9, (2, 3))
CAT = R.dirichlet(np.ones(4), (2, 3))

# name -> (parameters, a value inside the support, which properties PyTorch has)
CASES = {
    "Normal": ({"loc": LOC, "scale": SCALE}, R.standard_normal((2, 3))),
    "Uniform": ({"low": LOC, "high": LOC + SCALE}, LOC + SCALE * 0.3),
    "Exponential": ({"rate": SCALE}, SCALE * 0.7),
    "Laplace": ({"loc": LOC, "scale": SCALE}, R.standard_normal((2, 3))),
    "Bernoulli": ({"probs": PROBS}, (PROBS > 0.5).astype(np.float64)),
    "Categorical": ({"probs": CAT}, np.array([[0, 1, 3], [2, 2, 0]])),
    "OneHotCategorical": ({"probs": CAT}, np.eye(4)[np.array([[0, 1, 3], [2, 2, 0]])]),
}
CONTINUOUS = {"Normal", "Uniform", "Exponential", "Laplace"}


def _pair(torch, name, params, requires_grad=False):
    ours = {
        k: tg.tensor(v, dtype="float64", requires_grad=requires_grad) for k, v in params.items()
    }
    theirs = {
        k: torch.tensor(v, dtype=torch.float64, requires_grad=requires_grad)
        for k, v in params.items()
    }
    return (
        getattr(D, name)(**ours),
        getattr(torch.distributions, name)(**theirs),
        ours,
        theirs,
    )


def _value(torch, name, v):
    if name == "Categorical":
        return tg.tensor(v), torch.tensor(v)
    return tg.tensor(v, dtype="float64"), torch.tensor(v, dtype=torch.float64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_and_moments_match_torch(torch, name):
    params, v = CASES[name]
    ours, theirs, _, _ = _pair(torch, name, params)
    ov, tv = _value(torch, name, v)
    np.testing.assert_allclose(ours.log_prob(ov).numpy(), theirs.log_prob(tv).numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-10)
    for prop in ("mean", "variance", "stddev", "mode"):
        np.testing.assert_allclose(
            getattr(ours, prop).numpy(), getattr(theirs, prop).numpy(), rtol=1e-10, err_msg=prop
        )
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert repr(ours.support).split("(")[0] == repr(theirs.support).split("(")[0]


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_cdf_and_icdf_match_torch(torch, name):
    params, v = CASES[name]
    ours, theirs, _, _ = _pair(torch, name, params)
    ov, tv = _value(torch, name, v)
    np.testing.assert_allclose(ours.cdf(ov).numpy(), theirs.cdf(tv).numpy(), rtol=1e-10)
    q = R.uniform(0.05, 0.95, (2, 3))
    np.testing.assert_allclose(
        ours.icdf(tg.tensor(q, dtype="float64")).numpy(),
        theirs.icdf(torch.tensor(q)).numpy(),
        rtol=1e-9,
    )


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 4)])
def test_sample_shapes_dtypes_and_support(torch, name, sample_shape):
    params, _ = CASES[name]
    ours, theirs, _, _ = _pair(torch, name, params)
    tg.manual_seed(0)
    s, t = ours.sample(sample_shape), theirs.sample(sample_shape)
    assert s.shape == tuple(t.shape)
    assert str(s.dtype) == str(t.dtype).replace("torch.", "")
    assert not s.requires_grad
    assert bool(ours.support.check(s).all())
    # an expanded batch samples to the expanded shape
    wide = ours.expand((4, 2, 3))
    assert wide.sample(sample_shape).shape == tuple(
        theirs.expand((4, 2, 3)).sample(sample_shape).shape
    )


@pytest.mark.parametrize(
    ("dist", "mean", "var"),
    [
        (lambda: D.Normal(1.5, 2.0), 1.5, 4.0),
        (lambda: D.Uniform(-1.0, 3.0), 1.0, 16 / 12),
        (lambda: D.Exponential(2.0), 0.5, 0.25),
        (lambda: D.Laplace(-1.0, 0.5), -1.0, 0.5),
        (lambda: D.Bernoulli(0.3), 0.3, 0.21),
        (lambda: D.Categorical(tg.tensor([0.1, 0.2, 0.7])), 1.6, 0.44),
    ],
)
def test_statistics_of_many_draws(dist, mean, var):
    tg.manual_seed(1)
    s = dist().sample((40000,)).numpy().astype(np.float64)
    assert abs(s.mean() - mean) < 0.05 * max(1.0, abs(mean))
    assert abs(s.var() - var) < 0.05 * max(1.0, var)


def test_one_hot_draws_have_the_class_frequencies():
    tg.manual_seed(2)
    p = np.array([0.1, 0.6, 0.3])
    s = D.OneHotCategorical(tg.tensor(p)).sample((20000,)).numpy()
    assert set(np.unique(s.sum(-1))) == {1.0}
    np.testing.assert_allclose(s.mean(0), p, atol=0.02)


def test_seed_reproduces_draws():
    tg.manual_seed(3)
    a = D.Normal(tg.zeros(3), 1.0).sample((2,))
    tg.manual_seed(3)
    b = D.Normal(tg.zeros(3), 1.0).sample((2,))
    assert bool((a == b).all())


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_and_entropy_gradients_match_torch(torch, name):
    params, v = CASES[name]
    ours, theirs, op, tp = _pair(torch, name, params, requires_grad=True)
    ov, tv = _value(torch, name, v)
    w = R.standard_normal((2, 3))
    (ours.log_prob(ov) * tg.tensor(w) + ours.entropy()).sum().backward()
    (theirs.log_prob(tv) * torch.tensor(w) + theirs.entropy()).sum().backward()
    for k in op:
        np.testing.assert_allclose(op[k].grad.numpy(), tp[k].grad.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_gradcheck_float64(name):
    params, v = CASES[name]
    leaves = tuple(tg.tensor(p, dtype="float64", requires_grad=True) for p in params.values())
    value = tg.tensor(v) if name == "Categorical" else tg.tensor(v, dtype="float64")

    def fn(*args):
        d = getattr(D, name)(**dict(zip(params, args)), validate_args=False)
        return d.log_prob(value) + d.entropy()

    assert tg.autograd.gradcheck(fn, leaves)


def test_logits_parameterization_and_gradients(torch):
    logits = R.standard_normal((2, 4))
    lo = tg.tensor(logits, dtype="float64", requires_grad=True)
    lt = torch.tensor(logits, requires_grad=True)
    v = np.array([1, 3])
    ours, theirs = D.Categorical(logits=lo), torch.distributions.Categorical(logits=lt)
    np.testing.assert_allclose(
        ours.probs.detach().numpy(), theirs.probs.detach().numpy(), rtol=1e-12
    )
    (ours.log_prob(tg.tensor(v)).sum() + ours.entropy().sum()).backward()
    (theirs.log_prob(torch.tensor(v)).sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(lo.grad.numpy(), lt.grad.numpy(), rtol=1e-9)
    b = D.Bernoulli(logits=tg.tensor(logits, dtype="float64"))
    tb = torch.distributions.Bernoulli(logits=torch.tensor(logits))
    x = (logits > 0).astype(np.float64)
    np.testing.assert_allclose(
        b.log_prob(tg.tensor(x)).numpy(), tb.log_prob(torch.tensor(x)).numpy()
    )
    np.testing.assert_allclose(b.probs.numpy(), tb.probs.numpy(), rtol=1e-12)


def test_rsample_gradients_are_the_reparameterization():
    loc = tg.tensor([0.5, -1.0], requires_grad=True)
    scale = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.manual_seed(4)
    x = D.Normal(loc, scale).rsample((1000,))
    x.mean().backward()
    # d mean(loc + eps * scale) / d loc = 1 / 2 (two batch elements), / d scale = mean(eps) / 2
    np.testing.assert_allclose(loc.grad.numpy(), [0.5, 0.5], rtol=1e-4)
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.numpy().mean(0) / 2, rtol=1e-4)
    # Exponential: x = E / rate, d x / d rate = -x / rate
    rate = tg.tensor(2.0, requires_grad=True)
    x = D.Exponential(rate).rsample((100,))
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.item(), -(x.detach().numpy() / 2.0).sum(), rtol=1e-5)
    # Uniform: x = low + u (high - low)
    low, high = tg.tensor(0.0, requires_grad=True), tg.tensor(2.0, requires_grad=True)
    x = D.Uniform(low, high).rsample((50,))
    x.sum().backward()
    u = x.detach().numpy() / 2.0
    np.testing.assert_allclose(
        [low.grad.item(), high.grad.item()], [(1 - u).sum(), u.sum()], rtol=1e-5
    )


def test_laplace_rsample_gradient():
    loc, scale = tg.tensor(1.0, requires_grad=True), tg.tensor(0.5, requires_grad=True)
    x = D.Laplace(loc, scale).rsample((200,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.item(), 200.0)
    np.testing.assert_allclose(
        scale.grad.item(), ((x.detach().numpy() - 1.0) / 0.5).sum(), rtol=1e-5
    )


@pytest.mark.parametrize(
    ("make", "param", "constraint"),
    [
        (lambda: D.Normal(0.0, -1.0), "scale", "GreaterThan(lower_bound=0.0)"),
        (lambda: D.Exponential(tg.tensor([1.0, 0.0])), "rate", "GreaterThan(lower_bound=0.0)"),
        (
            lambda: D.Bernoulli(tg.tensor(1.5)),
            "probs",
            "Interval(lower_bound=0.0, upper_bound=1.0)",
        ),
        (lambda: D.Categorical(tg.tensor([0.5, -0.5, 1.0])), "probs", "Simplex()"),
        (lambda: D.Laplace(float("nan"), 1.0), "loc", "Real()"),
    ],
)
def test_bad_parameters_raise_naming_parameter_and_constraint(torch, make, param, constraint):
    pattern = rf"Expected parameter {param} .* constraint {re.escape(constraint)}"
    with pytest.raises(ValueError, match=pattern):
        make()


def test_bad_values_and_validation_switch(torch):
    with pytest.raises(ValueError, match="within the support"):
        D.Exponential(1.0).log_prob(tg.tensor(-1.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Bernoulli(0.5).log_prob(tg.tensor(0.5))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(1.0)
    with pytest.raises(ValueError, match="broadcastable"):
        D.Normal(tg.zeros(3), 1.0).log_prob(tg.zeros(2))
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        D.Bernoulli(probs=0.5, logits=0.0)
    assert D.Exponential(1.0, validate_args=False).log_prob(tg.tensor(-1.0)).item() == 1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # no error
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(NotImplementedError, match="rsample"):
        D.Bernoulli(0.5).rsample()
    with pytest.raises(ValueError, match="expand"):
        D.Normal(tg.zeros(3), 1.0).expand((2,))


def test_uniform_outside_and_low_not_below_high(torch):
    d = D.Uniform(0.0, 1.0, validate_args=False)
    assert d.log_prob(tg.tensor(2.0)).item() == -np.inf
    with pytest.raises(ValueError, match="low"):
        D.Uniform(1.0, 0.0)


def test_enumerate_support_matches_torch(torch):
    c = D.Categorical(tg.tensor(CAT))
    tc = torch.distributions.Categorical(torch.tensor(CAT))
    np.testing.assert_array_equal(c.enumerate_support().numpy(), tc.enumerate_support().numpy())
    np.testing.assert_array_equal(
        c.enumerate_support(expand=False).numpy(), tc.enumerate_support(expand=False).numpy()
    )
    b = D.Bernoulli(tg.tensor(PROBS))
    tb = torch.distributions.Bernoulli(torch.tensor(PROBS))
    np.testing.assert_array_equal(b.enumerate_support().numpy(), tb.enumerate_support().numpy())


def test_float32_parameters_stay_float32():
    d = D.Normal(tg.zeros(2), 1.0)
    assert str(d.sample().dtype) == "float32"
    assert str(d.log_prob(tg.zeros(2)).dtype) == "float32"
    assert str(D.Categorical(tg.ones(3)).sample().dtype) == "int64"
