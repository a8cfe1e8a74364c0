"""rrelu, alpha_dropout, feature_alpha_dropout, gumbel_softmax and the layers RReLU,
AlphaDropout, FeatureAlphaDropout: exact values in eval (against PyTorch), statistical
properties and gradients of the training forms, seeding, errors, reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_rrelu_eval_matches_torch(torch, rng):
    x = rng.standard_normal((4, 5))
    x[0, :2] = 0.0
    for lower, upper in ((1 / 8, 1 / 3), (0.1, 0.1), (-0.5, 0.2)):
        a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out = F.rrelu(a, lower, upper, training=False)
        ref = torch.nn.functional.rrelu(b, lower, upper, training=False)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-15)
        g = rng.standard_normal(x.shape)
        out.backward(tg.tensor(g))
        ref.backward(torch.tensor(g))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-15)
    assert gradcheck(lambda t: F.rrelu(t), (tg.tensor(x + 0.01, requires_grad=True),))


def test_rrelu_training_draws_slopes_and_their_gradient():
    tg.manual_seed(3)
    grid = np.linspace(-3.0, 3.0, 20001)
    grid[10000] = 0.0
    x = tg.tensor(grid, requires_grad=True)
    out = F.rrelu(x, 0.1, 0.4, training=True)
    out.sum().backward()
    xs, ys, grad = x.detach().numpy(), out.detach().numpy(), x.grad.numpy()
    pos, neg = xs > 0, xs < 0
    np.testing.assert_array_equal(ys[pos], xs[pos])
    np.testing.assert_array_equal(grad[pos], 1.0)
    slopes = ys[neg] / xs[neg]
    np.testing.assert_allclose(grad[neg], slopes, rtol=1e-12)  # the gradient is the slope
    assert slopes.min() >= 0.1 and slopes.max() <= 0.4
    assert abs(slopes.mean() - 0.25) < 0.005 and abs(slopes.var() - 0.3**2 / 12) < 0.0005
    assert 0.1 <= grad[xs == 0][0] <= 0.4  # x = 0 draws a slope too, as PyTorch
    assert len(np.unique(slopes)) > 9000  # one draw per element
    tg.manual_seed(3)
    again = F.rrelu(tg.tensor(xs), 0.1, 0.4, training=True).numpy()
    np.testing.assert_array_equal(again, ys)  # the generator makes it reproducible


def test_rrelu_inplace_and_errors():
    x = tg.tensor([-1.0, 2.0])
    assert F.rrelu_(x, 0.2, 0.4) is x
    np.testing.assert_allclose(x.numpy(), [-0.3, 2.0], rtol=1e-6)
    y = tg.tensor([-1.0, 2.0])
    F.rrelu(y, inplace=True, training=True)
    assert 0.125 <= -y.numpy()[0] <= 1 / 3 and y.numpy()[1] == 2.0
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper"):
        F.rrelu(tg.ones(3), 0.5, 0.1)
    with pytest.raises(TypeError, match="rrelu: input must be floating point"):
        F.rrelu(tg.tensor([1, 2]))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_alpha_dropout_keeps_mean_and_variance(p):
    tg.manual_seed(0)
    x = tg.randn(400_000, dtype=tg.float64)
    out = F.alpha_dropout(x, p, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1.0) < 0.01
    # the dropped elements all hold a * alpha' + b; a fraction p of them
    a = 1.0 / np.sqrt((1 - p) * (1 + p * 1.7580993408473766**2))
    dropped_value = a * -1.7580993408473766 + (a * 1.7580993408473766 * p)
    dropped = np.isclose(out, dropped_value, rtol=0, atol=1e-12)
    assert abs(dropped.mean() - p) < 0.005


def test_alpha_dropout_gradient_is_the_kept_scale():
    tg.manual_seed(1)
    x = tg.randn(1000, dtype=tg.float64, requires_grad=True)
    out = F.alpha_dropout(x, 0.3, training=True)
    out.sum().backward()
    a = 1.0 / np.sqrt(0.7 * (1 + 0.3 * 1.7580993408473766**2))
    grad = x.grad.numpy()
    assert set(np.round(np.unique(grad), 12)) == {0.0, round(a, 12)}
    kept = grad != 0
    np.testing.assert_allclose(
        out.detach().numpy()[kept], a * x.detach().numpy()[kept] + a * 1.7580993408473766 * 0.3
    )


def test_feature_alpha_dropout_drops_whole_channels():
    tg.manual_seed(2)
    x = tg.randn(3000, 8, 5, 5, dtype=tg.float64)
    out = F.feature_alpha_dropout(x, 0.4, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1.0) < 0.02
    per_channel = out.reshape(3000, 8, 25)
    constant = np.all(per_channel == per_channel[..., :1], axis=-1)  # the dropped channels
    assert abs(constant.mean() - 0.4) < 0.01
    two_d = F.feature_alpha_dropout(tg.randn(6, 7), 0.5, training=True)
    assert two_d.shape == (6, 7)
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(tg.ones(3), 0.5, training=True)


def test_alpha_dropouts_identity_cases_and_errors(torch, rng):
    x = tg.tensor(rng.standard_normal((4, 3, 2)))
    for fn in (F.alpha_dropout, F.feature_alpha_dropout):
        assert fn(x, 0.5) is x  # training=False is PyTorch's default
        assert fn(x, 0.0, training=True) is x
        np.testing.assert_array_equal(fn(x, 1.0, training=True).numpy(), 0.0)
        np.testing.assert_array_equal(
            fn(x, 1.0, training=True).numpy(),
            getattr(torch.nn.functional, fn.__name__)(torch.tensor(x.numpy()), 1.0, True).numpy(),
        )
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            fn(x, 1.5, training=True)
    before = rng.standard_normal(200)
    y = tg.tensor(before)
    tg.manual_seed(4)
    assert F.alpha_dropout(y, 0.5, training=True, inplace=True) is y
    tg.manual_seed(4)
    np.testing.assert_array_equal(
        y.numpy(), F.alpha_dropout(tg.tensor(before), 0.5, training=True).numpy()
    )
    assert not np.array_equal(y.numpy(), before)


def test_gumbel_softmax_soft_hard_and_distribution():
    tg.manual_seed(0)
    logits = tg.tensor(np.log([[0.1, 0.2, 0.7]]).repeat(20000, 0), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0, rtol=1e-12)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(-1) == 1).all()
    # the argmax of logits + Gumbel noise is a sample of softmax(logits)
    np.testing.assert_allclose(h.mean(0), [0.1, 0.2, 0.7], atol=0.01)
    # straight-through: the hard sample's gradient is the soft sample's
    w = tg.tensor(np.arange(3.0))
    tg.manual_seed(5)
    (F.gumbel_softmax(logits, hard=True) * w).sum().backward()
    g_hard = logits.grad.numpy().copy()
    logits.grad = None
    tg.manual_seed(5)
    (F.gumbel_softmax(logits, hard=False) * w).sum().backward()
    np.testing.assert_allclose(g_hard, logits.grad.numpy(), rtol=1e-10, atol=1e-15)
    assert (
        F.gumbel_softmax(tg.zeros(2, 4, 3), dim=1, hard=True).numpy().sum(1).tolist()
        == [[1.0] * 3] * 2
    )


def test_gumbel_softmax_warns_for_eps_and_checks_tau():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
        F.gumbel_softmax(tg.zeros(3), eps=1e-3)
    with pytest.raises(ValueError, match="gumbel_softmax: tau must be a positive number"):
        F.gumbel_softmax(tg.zeros(3), tau=0)


def test_layers_train_and_eval_reprs_and_facade(torch, rng):
    pairs = [
        (tg.nn.RReLU(), torch.nn.RReLU()),
        (tg.nn.RReLU(0.1, 0.3, True), torch.nn.RReLU(0.1, 0.3, True)),
        (tg.nn.AlphaDropout(), torch.nn.AlphaDropout()),
        (tg.nn.FeatureAlphaDropout(0.2, True), torch.nn.FeatureAlphaDropout(0.2, True)),
    ]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
    x = rng.standard_normal((8, 4, 3))
    mine, theirs = tg.nn.RReLU(0.1, 0.3).eval(), torch.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(
        mine(tg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-15
    )
    drop = tg.nn.AlphaDropout(0.5)
    assert drop.training
    assert not np.array_equal(drop(tg.tensor(x)).numpy(), x)
    np.testing.assert_array_equal(drop.eval()(tg.tensor(x)).numpy(), x)
    np.testing.assert_array_equal(tg.nn.FeatureAlphaDropout(0.5).eval()(tg.tensor(x)).numpy(), x)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        tg.nn.AlphaDropout(2.0)
    from tapegrad.compat import torch as ttorch

    for name in ("RReLU", "AlphaDropout", "FeatureAlphaDropout"):
        assert getattr(ttorch.nn, name) is getattr(tg.nn, name)
    for name in ("rrelu", "rrelu_", "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax"):
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.nn.RReLU()(tg.tensor(x))
