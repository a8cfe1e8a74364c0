"""The torch facade's torch.compile runs on tg.compile."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad.compat.torch as torch
from tapegrad.compat.torch import nn


def test_compiled_module_equals_eager_and_forwards_attributes(rng):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2))
    fast = torch.compile(net)
    assert fast._orig_mod is net
    assert all(p is q for p, q in zip(fast.parameters(), net.parameters(), strict=True))
    for _ in range(3):
        x = torch.tensor(rng.standard_normal((4, 5)), dtype=torch.float32)
        net.zero_grad()
        net(x).sum().backward()
        want = [p.grad.numpy().copy() for p in net.parameters()]
        net.zero_grad()
        out = fast(x)
        out.sum().backward()
        assert_array_equal(out.detach().numpy(), net(x).detach().numpy())
        for p, w in zip(net.parameters(), want, strict=True):
            assert_array_equal(p.grad.numpy(), w)
    assert fast._compiled.cache_info().hits == 2
    fast.eval()  # attribute access reaches the module
    assert not net.training


def test_decorator_with_options_fullgraph_and_disable():
    @torch.compile(mode="reduce-overhead", dynamic=False)
    def f(x):
        return torch.sin(x) * 2.0

    x = torch.ones(3)
    assert_array_equal(f(x).numpy(), f(x).numpy())
    assert_array_equal(f(x).numpy(), (np.sin(np.ones(3, np.float32)) * 2.0).astype(np.float32))

    @torch.compile(fullgraph=True)
    def g(x):
        return x * float(x.sum())

    with pytest.raises(RuntimeError, match="fullgraph=True.*reads a tensor's value"):
        g(x)

    def h(x):
        return x

    assert torch.compile(h, disable=True) is h


def test_jit_trace_runs_the_example_and_replays(rng):
    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    example = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32)
    traced = torch.jit.trace(net, example)
    assert traced._compiled.cache_info().misses == 1
    x = torch.tensor(rng.standard_normal((4, 3)), dtype=torch.float32)
    assert_array_equal(traced(x).detach().numpy(), net(x).detach().numpy())
    assert traced._compiled.cache_info().hits == 1
    with pytest.raises(RuntimeError, match="TorchScript"):
        torch.jit.script(net)
