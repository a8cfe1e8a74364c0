"""Reparameterized Gamma, Beta and Dirichlet draws: the implicit-reparameterization
derivative of a gamma draw against PyTorch's (same draws) and against mpmath, and the
pathwise gradients' expectations against the exact derivatives of the means."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import distributions as D
from tapegrad.distributions._special import standard_gamma, standard_gamma_grad_np


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("a", [0.05, 0.4, 1.0, 3.0, 20.0, 500.0])
def test_draw_gradient_as_torch(torch, a):
    # torch's own draws and its autograd gradient of them, against ours at the same draws
    torch.manual_seed(0)
    at = torch.full((400,), a, dtype=torch.float64, requires_grad=True)
    rate = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    x = torch.distributions.Gamma(at, rate).rsample()
    ga, gr = torch.autograd.grad(x.sum(), [at, rate])
    draws = x.detach().numpy() * 1.5  # the standard gamma draws
    # PyTorch's derivative is an approximation good to about 1e-3 relative
    np.testing.assert_allclose(standard_gamma_grad_np(np.full(400, a), draws) / 1.5, ga, rtol=2e-3)
    # the same through the tapegrad Function that rsample uses, and the rate's gradient
    ours_a = tg.tensor(np.full(400, a), dtype="float64", requires_grad=True)
    ours_r = tg.tensor(1.5, dtype="float64", requires_grad=True)
    (standard_gamma(ours_a, draws) / ours_r).sum().backward()
    np.testing.assert_allclose(ours_a.grad.numpy(), ga.numpy(), rtol=2e-3)
    np.testing.assert_allclose(ours_r.grad.item(), gr.item(), rtol=1e-10)


@pytest.mark.parametrize(
    "a,x",
    [
        (0.05, 1e-30),
        (0.01, 5.0),
        (0.5, 30.0),  # far upper tail: P near 1, the continued fraction
        (1.0, 1.0),
        (1.0, 40.0),
        (2.0, 1e-8),
        (3.0, 4.0001),  # just above the switch between the two methods
        (5.0, 60.0),
        (100.0, 40.0),
        (100.0, 101.0),
        (100.0, 180.0),
        (1e4, 1e4 + 1.5),
        (1e4, 1e4 + 300.0),
    ],
)
def test_draw_gradient_against_mpmath(a, x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(40):
        d_cdf = mpmath.diff(lambda s: mpmath.gammainc(s, 0, x, regularized=True), a)
        density = mpmath.exp((a - 1) * mpmath.log(x) - x - mpmath.loggamma(a))
        exact = float(-d_cdf / density)
    np.testing.assert_allclose(standard_gamma_grad_np(np.array(a), np.array(x)), exact, rtol=1e-8)


def _mean_and_error(g: np.ndarray) -> tuple[float, float]:
    return float(g.mean()), float(g.std() / np.sqrt(g.size))


def test_gamma_rsample_gradients_are_unbiased():
    # E[x] = c / r: d/dc = 1 / r, d/dr = -c / r^2
    tg.manual_seed(3)
    n, c0, r0 = 20000, 0.7, 2.0
    c = tg.full((n,), c0, dtype="float64", requires_grad=True)
    r = tg.full((n,), r0, dtype="float64", requires_grad=True)
    x = D.Gamma(c, r).rsample()
    x.sum().backward()
    for g, exact in ((c.grad.numpy(), 1 / r0), (r.grad.numpy(), -c0 / r0**2)):
        mean, err = _mean_and_error(g)
        assert abs(mean - exact) < 4 * err
    np.testing.assert_allclose(x.detach().numpy().mean(), c0 / r0, rtol=0.03)


def test_beta_rsample_gradients_are_unbiased():
    # E[x] = a / (a + b): d/da = b / (a + b)^2, d/db = -a / (a + b)^2
    tg.manual_seed(4)
    n, a0, b0 = 20000, 0.8, 2.5
    a = tg.full((n,), a0, dtype="float64", requires_grad=True)
    b = tg.full((n,), b0, dtype="float64", requires_grad=True)
    x = D.Beta(a, b).rsample()
    assert bool(((x > 0) & (x <= 1)).all())
    x.sum().backward()
    for g, exact in ((a.grad.numpy(), b0 / (a0 + b0) ** 2), (b.grad.numpy(), -a0 / (a0 + b0) ** 2)):
        mean, err = _mean_and_error(g)
        assert abs(mean - exact) < 4 * err


def test_dirichlet_rsample_gradients_are_unbiased():
    # E[x_0] = c_0 / sum(c): d/dc_0 = (s - c_0) / s^2, d/dc_j = -c_0 / s^2
    tg.manual_seed(5)
    n, c0 = 20000, np.array([0.6, 1.5, 3.0])
    s = c0.sum()
    c = tg.tensor(np.tile(c0, (n, 1)), dtype="float64", requires_grad=True)
    x = D.Dirichlet(c).rsample()
    np.testing.assert_allclose(x.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    x[:, 0].sum().backward()
    exact = np.array([(s - c0[0]) / s**2, -c0[0] / s**2, -c0[0] / s**2])
    g = c.grad.numpy()
    for j in range(3):
        mean, err = _mean_and_error(g[:, j])
        assert abs(mean - exact[j]) < 4 * err


def test_rsample_shapes_and_float32():
    c = tg.tensor([1.0, 2.0], requires_grad=True)
    x = D.Gamma(c, 1.0).rsample((5,))
    assert x.shape == (5, 2) and x.dtype == tg.float32 and x.requires_grad
    x.sum().backward()
    assert c.grad.shape == (2,) and bool((c.grad > 0).all())
    assert D.Beta(tg.ones(3), tg.ones(3)).rsample((2,)).shape == (2, 3)
    assert D.Dirichlet(tg.ones(2, 4)).rsample((3,)).shape == (3, 2, 4)
    # tiny concentrations underflow to the smallest positive number, not to 0
    assert bool((D.Gamma(tg.full((100,), 1e-3), 1.0).rsample() > 0).all())
