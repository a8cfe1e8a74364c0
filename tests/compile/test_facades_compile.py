"""MXNet's hybridize() and MegEngine's jit.trace run on tg.compile."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as MF
from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd
from tapegrad.compat.mxnet.gluon import nn


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def test_hybridized_gluon_block_equals_eager_and_replays(rng):
    mx.random.seed(0)
    net = _mlp()
    xs = [mx.np.array(rng.standard_normal((4, 5)).astype(np.float32)) for _ in range(4)]
    net(xs[0])  # deferred initialisation happens eagerly
    params = list(net.collect_params().values())
    results = []
    for hybrid in (False, True):
        net.hybridize(active=hybrid, static_alloc=True, static_shape=True)
        outs = []
        for x in xs:
            with autograd.record():
                y = net(x)
            y.backward()
            outs.append(y.asnumpy())
            outs += [p.grad().asnumpy().copy() for p in params]
        results.append(outs)
    for got, want in zip(results[1], results[0], strict=True):
        assert_array_equal(got, want)
    assert net._hybrid.cache_info().hits == 2  # first call eager, then trace, then replays
    net.hybridize(active=False)
    assert net._hybrid is None


def test_hybridize_before_deferred_initialisation(rng):
    mx.random.seed(0)
    net = _mlp()
    net.hybridize()
    x = mx.np.array(rng.standard_normal((2, 5)).astype(np.float32))
    first = net(x).asnumpy()  # eager: shapes inferred, weights drawn
    for _ in range(3):
        assert_array_equal(net(x).asnumpy(), first)
    assert net._hybrid.cache_info().hits == 2


def test_megengine_jit_trace_decorator_forms(rng):
    w = mge.tensor(rng.standard_normal((3, 2)).astype(np.float32))

    @mge.jit.trace(symbolic=True, capture_as_const=True)
    def infer(x):
        return MF.relu(MF.matmul(x, w))

    x = mge.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    want = np.maximum(x.numpy() @ w.numpy(), 0)
    for _ in range(3):
        np.testing.assert_allclose(infer(x).numpy(), want, rtol=1e-6)
    assert infer.cache_info().hits == 2
    bare = mge.jit.trace(lambda x: x * 3.0)
    assert_array_equal(bare(x).numpy(), bare(x).numpy())
    with pytest.raises(NotImplementedError, match="dump"):
        infer.dump("model.mge")


def test_hybridized_gluon_batch_norm_in_training_runs_eagerly(rng):
    from tapegrad.compile import CompileWarning

    net = nn.HybridSequential()
    net.add(nn.Dense(4), nn.BatchNorm())
    net.initialize()
    net.hybridize()
    x = mx.np.array(rng.standard_normal((5, 3)).astype(np.float32))
    bn = net[1]

    def running():
        return [
            p.data().asnumpy().copy()
            for name, p in bn.collect_params().items()
            if "running" in name
        ]

    with autograd.record():
        net(x)  # eager: deferred initialisation
    history = [running()]
    with pytest.warns(CompileWarning, match="in place") as record:
        for _ in range(3):  # the block, then its BatchNorm child, fall back once each
            with autograd.record():
                net(x)
            history.append(running())
    assert {str(w.message).split(" runs")[0] for w in record} == {
        "tg.compile: Sequential.forward",
        "tg.compile: BatchNorm.forward",
    }
    for before, after in zip(history, history[1:]):  # the statistics move at every call
        assert not any(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
