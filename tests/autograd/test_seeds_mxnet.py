"""The MXNet Gluon autograd tutorial's examples (seed 001), written with the core API."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import autograd


def test_y_equals_2x_squared():
    x = tg.tensor([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = 2 * x**2
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0, 12.0])


def test_custom_head_gradient_gives_192():
    x = tg.tensor([2.0])
    x.attach_grad()
    with autograd.record():
        y = x**3
    y_np = y.asnumpy()  # outside tapegrad: z = y^2, dz/dy = 2y
    dzdy = tg.tensor(2 * y_np)
    y.backward(dzdy)
    np.testing.assert_allclose(x.grad.numpy(), [192.0])


def f(x):
    y = x  # y is changed below, x is kept
    if x < 0.75:
        num_loops = math.floor(1 / (1 - x.item()))  # depends on x
        for _ in range(num_loops):
            y = y * x
    else:
        y = y * 0
    return y


def get_grad(f, x):
    x.attach_grad()
    with autograd.record():
        y = f(x)
    y.backward()
    return x.grad


def test_python_control_flow_gradients_match_the_pieces():
    xs = tg.arange(0.0, 1.0, 0.1)
    grads = [get_grad(f, x).item() for x in xs]
    values = xs.numpy().astype(np.float64)
    expected = []
    for v in values:
        if v < 0.5:
            expected.append(2 * v)
        elif v < 2 / 3:
            expected.append(3 * v**2)
        elif v < 0.75:
            expected.append(4 * v**3)
        else:
            expected.append(0.0)
    np.testing.assert_allclose(grads, expected, rtol=1e-5, atol=1e-7)
    assert grads[6] == pytest.approx(1.08, rel=1e-5)  # the article's spot check at x = 0.6


# ---------------------------------------------------------------- higher order via autograd.grad
def _derivatives(fn, x0, n=3):
    """The first n derivatives of elementwise fn at x0, by autograd.grad(create_graph=True)
    inside record(); a derivative that no longer depends on x is zero from there on."""
    x = tg.tensor(np.asarray(x0, dtype=np.float64))
    x.attach_grad()
    out = []
    with autograd.record():
        d = fn(x)
        for _ in range(n):
            if d.grad_fn is None:  # a constant in x: its derivative is zero
                d = tg.zeros_like(x)
            else:
                (d,) = autograd.grad(
                    d, [x], create_graph=True, retain_graph=True, allow_unused=True
                )
                d = tg.zeros_like(x) if d is None else d
            out.append(d.detach().numpy().copy())
    return out


X = np.array([-1.7, -0.4, 0.3, 1.2, 2.5])
POS = np.array([0.3, 0.9, 1.5, 4.0])
_SIG = 1 / (1 + np.exp(-X))
_TANH = np.tanh(X)

CASES = {
    "sin": (tg.sin, X, [np.cos(X), -np.sin(X), -np.cos(X)]),
    "cos": (tg.cos, X, [-np.sin(X), -np.cos(X), np.sin(X)]),
    "exp": (tg.exp, X, [np.exp(X)] * 3),
    "log": (tg.log, POS, [1 / POS, -1 / POS**2, 2 / POS**3]),
    "power_int": (lambda x: x**3, X, [3 * X**2, 6 * X, 6 + 0 * X]),
    "power_real": (
        lambda x: tg.pow(x, 2.5),
        POS,
        [2.5 * POS**1.5, 3.75 * POS**0.5, 1.875 * POS**-0.5],
    ),
    "sigmoid": (
        tg.sigmoid,
        X,
        [
            _SIG * (1 - _SIG),
            _SIG * (1 - _SIG) * (1 - 2 * _SIG),
            _SIG * (1 - _SIG) * (1 - 6 * _SIG + 6 * _SIG**2),
        ],
    ),
    "tanh": (
        tg.tanh,
        X,
        [1 - _TANH**2, -2 * _TANH * (1 - _TANH**2), (6 * _TANH**2 - 2) * (1 - _TANH**2)],
    ),
    "relu": (tg.relu, X, [(X > 0).astype(float), 0 * X, 0 * X]),
    "abs": (tg.abs, X, [np.sign(X), 0 * X, 0 * X]),
    "clip": (lambda x: tg.clip(x, -1.0, 1.0), X, [(np.abs(X) < 1).astype(float), 0 * X, 0 * X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_second_third_derivatives(name):
    fn, x0, expected = CASES[name]
    got = _derivatives(fn, x0, 3)
    for order, (g, e) in enumerate(zip(got, expected, strict=True), start=1):
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-10, err_msg=f"{name}, order {order}")


def test_grad_inside_record_then_backward_of_the_gradient():
    # the tutorial's pattern: dx = grad(..., create_graph=True) inside record(), then dx.backward()
    x = tg.tensor([0.5, 1.0])
    x.attach_grad()
    with autograd.record():
        y = tg.sin(x)
        (dx,) = autograd.grad(y, [x], create_graph=True, retain_graph=True)
    dx.backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x.numpy()), rtol=1e-6)
