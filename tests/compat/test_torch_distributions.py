"""The torch facade's torch.distributions (Categorical, Normal, the submodule paths): values,
gradients and validation against PyTorch; sample shapes and frequencies."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.torch as ftorch
from tapegrad.compat.torch.distributions import Categorical, Normal


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _pair(torch, a):
    return tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_categorical_values_and_gradients_as_torch(torch, rng, kind):
    a = rng.random((3, 4)) + 0.1 if kind == "probs" else rng.standard_normal((3, 4))
    x, xt = _pair(torch, a)
    ours, theirs = Categorical(**{kind: x}), torch.distributions.Categorical(**{kind: xt})
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.event_shape == ()
    np.testing.assert_allclose(
        ours.probs.detach().numpy(), theirs.probs.detach().numpy(), rtol=1e-12
    )
    np.testing.assert_allclose(
        ours.logits.detach().numpy(), theirs.logits.detach().numpy(), rtol=1e-12
    )
    value = np.array([[0, 3, 1], [2, 2, 0]])  # broadcast against the batch of 3
    lp, lpt = ours.log_prob(tg.tensor(value)), theirs.log_prob(torch.tensor(value))
    assert lp.shape == tuple(lpt.shape)
    np.testing.assert_allclose(lp.detach().numpy(), lpt.detach().numpy(), rtol=1e-12)
    loss = lp.sum() + ours.entropy().sum()
    loss_t = lpt.sum() + theirs.entropy().sum()
    (g,) = tg.autograd.grad(loss, [x])
    (gt,) = torch.autograd.grad(loss_t, [xt])
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)


def test_categorical_samples(torch):
    tg.manual_seed(0)
    m = Categorical(probs=ftorch.tensor([[0.1, 0.9], [0.7, 0.3]]))
    s = m.sample((4000,))
    ref = torch.distributions.Categorical(probs=torch.tensor([[0.1, 0.9], [0.7, 0.3]])).sample(
        (4000,)
    )
    assert s.shape == tuple(ref.shape) and s.dtype == tg.int64
    np.testing.assert_allclose(s.numpy().mean(0), [0.9, 0.3], atol=0.03)
    assert m.sample().shape == (2,)
    assert Categorical(logits=ftorch.zeros(3)).sample().shape == ()
    np.testing.assert_array_equal(
        m.enumerate_support().numpy(),
        torch.distributions.Categorical(probs=torch.ones(2, 2)).enumerate_support().numpy(),
    )


def test_categorical_validation_as_torch(torch):
    with pytest.raises(ValueError, match="Simplex"):
        Categorical(probs=ftorch.tensor([-0.1, 1.0]))
    with pytest.raises(ValueError, match="Simplex"):
        torch.distributions.Categorical(probs=torch.tensor([-0.1, 1.0]))
    m = Categorical(probs=ftorch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="within the support"):
        m.log_prob(ftorch.tensor(2))
    with pytest.raises(ValueError, match="within the support"):
        torch.distributions.Categorical(probs=torch.tensor([0.5, 0.5])).log_prob(torch.tensor(2))
    np.testing.assert_allclose(
        Categorical(probs=ftorch.tensor([0.0, 1.0])).entropy().numpy(),
        torch.distributions.Categorical(probs=torch.tensor([0.0, 1.0])).entropy().numpy(),
        atol=1e-6,
    )


def test_normal_as_torch(torch, rng):
    loc, scale = rng.standard_normal(3), rng.random(3) + 0.5
    (m, mt), (s, st) = _pair(torch, loc), _pair(torch, scale)
    ours, theirs = Normal(m, s), torch.distributions.Normal(mt, st)
    v = rng.standard_normal((2, 3))
    p = rng.random(3)
    for name in ("log_prob", "cdf"):
        a, b = getattr(ours, name)(tg.tensor(v)), getattr(theirs, name)(torch.tensor(v))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        ours.icdf(tg.tensor(p)).detach().numpy(),
        theirs.icdf(torch.tensor(p)).detach().numpy(),
        rtol=1e-10,
    )
    for name in ("mean", "stddev", "variance", "mode"):
        np.testing.assert_allclose(
            getattr(ours, name).detach().numpy(), getattr(theirs, name).detach().numpy()
        )
    loss = ours.log_prob(tg.tensor(v)).sum() + ours.entropy().sum() + ours.cdf(tg.tensor(v)).sum()
    loss_t = (
        theirs.log_prob(torch.tensor(v)).sum()
        + theirs.entropy().sum()
        + theirs.cdf(torch.tensor(v)).sum()
    )
    g = tg.autograd.grad(loss, [m, s])
    gt = torch.autograd.grad(loss_t, [mt, st])
    for a, b in zip(g, gt):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


def test_normal_samples_and_reparameterization():
    tg.manual_seed(0)
    loc = ftorch.tensor([0.0, 5.0], requires_grad=True)
    scale = ftorch.tensor([1.0, 2.0], requires_grad=True)
    m = Normal(loc, scale)
    s = m.sample((5000,))
    assert s.shape == (5000, 2) and not s.requires_grad
    np.testing.assert_allclose(s.numpy().mean(0), [0.0, 5.0], atol=0.1)
    np.testing.assert_allclose(s.numpy().std(0), [1.0, 2.0], atol=0.1)
    r = m.rsample((3,))
    r.sum().backward()  # d(loc + eps * scale)/dloc = 1 per draw
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    assert Normal(0.0, 1.0).sample().shape == ()


def test_normal_validation_and_reprs(torch):
    with pytest.raises(ValueError, match=r"GreaterThan\(lower_bound=0.0\)"):
        Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"GreaterThan\(lower_bound=0.0\)"):
        torch.distributions.Normal(0.0, -1.0)
    assert repr(Normal(0.0, 1.0)) == repr(torch.distributions.Normal(0.0, 1.0))
    # PyTorch shows the parameters the distribution holds (logits only once computed); the
    # facade's torch.Size is a tuple, so its shapes print as tuples
    ours, theirs = (
        Categorical(probs=ftorch.ones(2, 2)),
        torch.distributions.Categorical(probs=torch.ones(2, 2)),
    )
    assert repr(ours) == "Categorical(probs: (2, 2))"
    assert repr(ours) == repr(theirs).replace("torch.Size([2, 2])", "(2, 2)")
    _ = ours.logits, theirs.logits
    assert repr(ours) == "Categorical(probs: (2, 2), logits: (2, 2))"
    assert repr(ours) == repr(theirs).replace("torch.Size([2, 2])", "(2, 2)")
    assert repr(Normal(ftorch.zeros(3), 1.0)) == "Normal(loc: (3,), scale: (3,))"


def test_submodule_paths_and_unsupported_names():
    from tapegrad.compat.torch.distributions.categorical import Categorical as C
    from tapegrad.compat.torch.distributions.distribution import Distribution
    from tapegrad.compat.torch.distributions.kl import kl_divergence
    from tapegrad.compat.torch.distributions.normal import Normal as N

    assert C is Categorical and N is Normal and Distribution is tg.distributions.Distribution
    assert ftorch.distributions.Beta is tg.distributions.Beta
    assert kl_divergence is ftorch.distributions.kl_divergence is tg.distributions.kl_divergence
    with pytest.raises(AttributeError, match="Weibull.*not supported"):
        _ = ftorch.distributions.Weibull
    with pytest.raises(AttributeError, match="Weibull.*not supported"):
        _ = ftorch.distributions.normal.Weibull
