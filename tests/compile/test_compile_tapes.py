"""A compiled forward records on every tape: MXNet's record(), MegEngine's GradManager."""

from __future__ import annotations

import numpy as np

import tapegrad as tg
from tapegrad.compat.megengine import Parameter
from tapegrad.compat.megengine.autodiff import GradManager
from tapegrad.compat.mxnet import autograd, nd


def test_mxnet_record_scope(rng):
    f = tg.compile(lambda x: (x * x).sum() * 3.0)
    x0 = rng.standard_normal(3).astype(np.float32)
    for _ in range(3):
        x = nd.array(x0)
        x.attach_grad()
        with autograd.record():
            y = f(x)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), 6.0 * x0, rtol=1e-6)
    x = nd.array(x0)
    x.attach_grad()
    assert f(x).grad_fn is None  # outside record(): nothing recorded, another signature
    assert f.cache_info().misses == 2


def test_megengine_grad_manager_and_a_released_graph(rng):
    w0 = rng.standard_normal(2).astype(np.float32)
    w = Parameter(w0)
    gm = GradManager().attach([w])
    g = tg.compile(lambda w: (w * w * w).sum())
    for _ in range(3):  # GradManager releases the traced graph; the replay doesn't need it
        w.grad = None
        with gm:
            gm.backward(g(w))
        np.testing.assert_allclose(w.grad.numpy(), 3.0 * w0 * w0, rtol=1e-6)
    assert g.cache_info().hits == 2
