"""The activations of nn/functional_activations.py: values and gradients against PyTorch
(boundaries included), finite differences, and the channel dropouts."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck

# the points where the derivatives have their boundaries, and some others
X = np.array([-7.0, -3.0, -2.5, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.5, 3.0, 6.0, 8.0, 25.0])

CASES = {
    "hardtanh": (lambda F, x: F.hardtanh(x), None),
    "hardtanh(-2, 2.5)": (lambda F, x: F.hardtanh(x, -2.0, 2.5), None),
    "relu6": (lambda F, x: F.relu6(x), None),
    # PyTorch's backward multiplies by a float32 1/6 (and celu's by a float32 1/alpha), also
    # in float64: its gradients are 3e-8 off the exact ones there
    "hardsigmoid": (lambda F, x: F.hardsigmoid(x), 1e-7),
    "hardswish": (lambda F, x: F.hardswish(x), 1e-7),
    "mish": (lambda F, x: F.mish(x), None),
    "selu": (lambda F, x: F.selu(x), None),
    "celu": (lambda F, x: F.celu(x, alpha=0.7), 1e-6),
    "softsign": (lambda F, x: F.softsign(x), None),
    "logsigmoid": (lambda F, x: F.logsigmoid(x), None),
    "tanhshrink": (lambda F, x: F.tanhshrink(x), None),
    "softshrink": (lambda F, x: F.softshrink(x, 0.5), None),
    "hardshrink": (lambda F, x: F.hardshrink(x, 0.5), None),
    "threshold": (lambda F, x: F.threshold(x, 0.25, -9.0), None),
    "softmin": (lambda F, x: F.softmin(x.reshape(3, 5), dim=1), None),
    "glu": (lambda F, x: F.glu(x[:14].reshape(2, 7, 1).expand(2, 7, 2), dim=2), None),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_values_and_gradients_match_torch(case):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF

    f, grad_rtol = case
    x = tg.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    y, ty = f(F, x), f(TF, tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-14, atol=1e-15)
    w = np.linspace(0.5, 2.0, y.numel()).reshape(y.shape)
    (y * tg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    rtol = grad_rtol or 1e-13
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=1e-15)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_against_finite_differences_away_from_the_kinks(case):
    f, _ = case
    rng = np.random.default_rng(0)
    # keep clear of the boundaries (±3, ±0.5, 0.25, 0, 6, ±1, -2, 2.5), where no derivative exists
    x = np.array([-6.1, -2.7, -1.3, -0.8, -0.4, -0.1, 0.1, 0.4, 0.7, 1.3, 2.1, 2.7, 4.6, 7.2, 9.0])
    x = x + rng.uniform(-0.02, 0.02, x.shape)
    t = tg.tensor(x, requires_grad=True)
    assert gradcheck(lambda a: f(F, a), (t,))
    assert gradgradcheck(lambda a: f(F, a), (t,))


def test_prelu_per_channel_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4))
    x[0, 0, 0] = 0.0
    w = np.array([0.1, 0.25, -0.5])
    ours = [tg.tensor(a, requires_grad=True) for a in (x, w)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
    F.prelu(*ours).pow(2).sum().backward()
    torch.nn.functional.prelu(*theirs).pow(2).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-13)


def test_misuse_is_named():
    with pytest.raises(RuntimeError, match="glu: halving dimension must be even.*size 3"):
        F.glu(tg.ones(2, 3))
    with pytest.raises(RuntimeError, match="prelu: weight has 2 values but the input has 3"):
        F.prelu(tg.ones(1, 3, 2), tg.ones(2))
    with pytest.raises(ValueError, match="hardtanh: min_val"):
        F.hardtanh(tg.ones(2), 1.0, -1.0)
    with pytest.raises(RuntimeError, match=r"dropout1d: expected a 2-D \(C, L\) or 3-D"):
        F.dropout1d(tg.ones(2, 3, 4, 5))


def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest():
    tg.manual_seed(0)
    x = tg.ones(8, 16, 3, 3, requires_grad=True)
    y = F.dropout2d(x, p=0.25)
    per_channel = y.detach().numpy().reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(axis=2) | (per_channel == 1 / 0.75).all(axis=2))
    dropped = (per_channel == 0).all(axis=2).mean()
    assert 0.1 < dropped < 0.4
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # d(x * mask)/dx = mask
    assert F.dropout2d(x, 0.25, training=False) is x
    assert F.dropout1d(tg.ones(4, 5), 0.5).shape == (4, 5)  # unbatched (C, L)


LAYERS = {
    "ReLU6": (lambda nn: nn.ReLU6(), (2, 5)),
    "Hardtanh": (lambda nn: nn.Hardtanh(-0.5, 2.0), (2, 5)),
    "Hardsigmoid": (lambda nn: nn.Hardsigmoid(), (2, 5)),
    "Hardswish": (lambda nn: nn.Hardswish(), (2, 5)),
    "Mish": (lambda nn: nn.Mish(), (2, 5)),
    "SELU": (lambda nn: nn.SELU(), (2, 5)),
    "CELU": (lambda nn: nn.CELU(0.5), (2, 5)),
    "Softsign": (lambda nn: nn.Softsign(), (2, 5)),
    "LogSigmoid": (lambda nn: nn.LogSigmoid(), (2, 5)),
    "Softmin": (lambda nn: nn.Softmin(dim=1), (2, 5)),
    "GLU": (lambda nn: nn.GLU(dim=0), (2, 5)),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), (2, 5)),
    "Softshrink": (lambda nn: nn.Softshrink(0.3), (2, 5)),
    "Hardshrink": (lambda nn: nn.Hardshrink(0.3), (2, 5)),
    "Threshold": (lambda nn: nn.Threshold(0.2, -1.0), (2, 5)),
    "PReLU": (lambda nn: nn.PReLU(3, init=0.1), (2, 3, 4)),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), (1, 2, 3, 3)),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(2, 3.5), (1, 2, 4)),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(1), (1, 2, 3, 3)),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d((2, 1)), (1, 2, 4)),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), (1, 1, 3, 3)),
}


@pytest.mark.parametrize("case", LAYERS.values(), ids=LAYERS.keys())
def test_layers_match_torch_in_repr_values_and_gradients(case):
    torch = pytest.importorskip("torch")
    build, shape = case
    ours, theirs = build(tg.nn).double(), build(torch.nn).double()
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal(shape) * 3
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12)
    (ya * ya).sum().backward()
    (yb * yb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_channel_dropout_layers_follow_train_and_eval():
    layer = tg.nn.Dropout2d(0.5)
    x = tg.ones(2, 4, 3, 3)
    tg.manual_seed(1)
    assert (layer(x).numpy() == 0).any()
    layer.eval()
    assert layer(x) is x
