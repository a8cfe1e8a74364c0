"""tg.utils.checkpoint: gradients equal the plain run's; intermediate values are not kept."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.utils.checkpoint import checkpoint


def _block():
    tg.manual_seed(0)
    return tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Tanh(), tg.nn.Linear(8, 3))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_match_the_plain_run(use_reentrant):
    block = _block()
    x = tg.randn(5, 4, requires_grad=True)
    (block(x) ** 2).sum().backward()
    expected = [p.grad.numpy().copy() for p in block.parameters()] + [x.grad.numpy().copy()]
    for p in block.parameters():
        p.grad = None
    x.grad = None
    y = checkpoint(block, x, use_reentrant=use_reentrant)
    (y**2).sum().backward()
    got = [p.grad.numpy() for p in block.parameters()] + [x.grad.numpy()]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_works_with_autograd_grad_and_closures():
    w = tg.randn(3, 3, requires_grad=True)
    x = tg.randn(2, 3, requires_grad=True)
    f = lambda x: (x @ w).sin() @ w  # noqa: E731  w reached through the closure
    ref = tg.autograd.grad(f(x).sum(), [x, w])
    got = tg.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), [x, w])
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_intermediate_values_are_not_kept():
    refs = []

    def f(x):
        h = (x * 2.0).exp()
        refs.append(weakref.ref(h))
        return h.sin().sum()

    x = tg.randn(100, requires_grad=True)
    y_plain = f(x)
    gc.collect()
    assert refs[0]() is not None  # the plain graph keeps h for sin's backward
    y = checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert refs[1]() is None  # checkpointed: only x is kept
    y.backward()
    h = np.exp(2.0 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * h * np.cos(h), rtol=1e-5)
    del y_plain


def test_dropout_recomputes_the_same_mask():
    drop = tg.nn.Dropout(0.5)
    x = tg.ones(1000, requires_grad=True)
    y = checkpoint(drop, x, use_reentrant=False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (y.detach().numpy() != 0) * 2.0)
