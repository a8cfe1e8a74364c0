"""`inplace=True` (and the `F.x_` forms) write the result into the input, as PyTorch's:
values, gradients through the written tensor, the module forms, the leaf error."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F

CASES = [
    ("leaky_relu", (0.2,), {}),
    ("elu", (0.7,), {}),
    ("silu", (), {}),
    ("hardtanh", (-0.5, 0.8), {}),
    ("relu6", (), {}),
    ("hardsigmoid", (), {}),
    ("hardswish", (), {}),
    ("mish", (), {}),
    ("selu", (), {}),
    ("celu", (1.3,), {}),
    ("threshold", (0.1, -2.0), {}),
]
UNDERSCORED = ["leaky_relu_", "elu_", "hardtanh_", "selu_", "celu_", "threshold_"]


def _x():
    return np.random.default_rng(0).standard_normal((3, 5)) * 4


@pytest.mark.parametrize("name,args,kw", CASES)
def test_inplace_writes_the_input_and_keeps_the_gradient(name, args, kw):
    x = tg.tensor(_x(), requires_grad=True)
    y = x * 1.0
    out = getattr(F, name)(y, *args, inplace=True, **kw)
    assert out is y
    want = getattr(F, name)(x * 1.0, *args, **kw)
    np.testing.assert_array_equal(y.detach().numpy(), want.detach().numpy())
    (y * y).sum().backward()
    g_inplace = x.grad.numpy().copy()
    x.grad = None
    (want * want).sum().backward()
    np.testing.assert_allclose(g_inplace, x.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,args,kw", CASES)
def test_against_pytorch(name, args, kw):
    torch = pytest.importorskip("torch")
    tx = torch.tensor(_x(), requires_grad=True)
    ty = tx * 1.0
    getattr(torch.nn.functional, name)(ty, *args, inplace=True, **kw)
    (ty * ty).sum().backward()
    gx = tg.tensor(_x(), requires_grad=True)
    gy = gx * 1.0
    getattr(F, name)(gy, *args, inplace=True, **kw)  # return value ignored, as scripts do
    (gy * gy).sum().backward()
    # PyTorch rounds a constant to float32 in float64 math here: hardsigmoid's gradient
    # is 0.1666666716 (not 1/6), its in-place celu ~2e-8 off its out-of-place one
    rtol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-12
    np.testing.assert_allclose(gy.detach().numpy(), ty.detach().numpy(), rtol=rtol)
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=max(rtol, 1e-10), atol=1e-12)


@pytest.mark.parametrize("name", UNDERSCORED)
def test_underscored_forms(name):
    torch = pytest.importorskip("torch")
    args = {"threshold_": (0.1, -2.0), "hardtanh_": (-0.5, 0.8)}.get(name, ())
    t = torch.tensor(_x())
    getattr(torch.nn.functional, name)(t, *args)
    g = tg.tensor(_x())
    assert getattr(F, name)(g, *args) is g
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_modules_with_inplace():
    x = tg.tensor(_x())
    for module in (
        tg.nn.LeakyReLU(0.1, inplace=True),
        tg.nn.ELU(inplace=True),
        tg.nn.SiLU(inplace=True),
        tg.nn.Hardtanh(inplace=True),
        tg.nn.SELU(inplace=True),
        tg.nn.Mish(inplace=True),
        tg.nn.Threshold(0.0, 1.0, inplace=True),
    ):
        y = x.clone()
        module(y)
        assert not np.array_equal(y.numpy(), x.numpy()), module
    y = tg.ones(50, 40)
    tg.nn.Dropout(0.5, inplace=True).train()(y)
    values = set(np.unique(y.numpy()).tolist())
    assert values == {0.0, 2.0}
    y = tg.ones(4, 6, 3, 3)
    tg.nn.Dropout2d(0.5, inplace=True).train()(y)
    per_channel = y.numpy().reshape(24, 9)
    assert all(len(set(row.tolist())) == 1 for row in per_channel)  # whole channels


def test_a_leaf_that_requires_grad_is_refused():
    x = tg.tensor(_x(), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        F.elu(x, inplace=True)
    with tg.no_grad():  # as in PyTorch, no_grad allows it
        F.elu(x, inplace=True)
