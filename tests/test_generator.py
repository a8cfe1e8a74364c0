"""tg.Generator (PyTorch's torch.Generator): an independent stream for `generator=`, its
seed and state, the thread generator's state functions, and every function that takes one."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn
from tapegrad.data import (
    DataLoader,
    RandomSampler,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


def _draws(g):
    """One of every kind of draw that takes a generator, from `g`."""
    t = tg.empty(4)
    w = tg.empty(3, 5)
    return [
        tg.rand(3, generator=g).tolist(),
        tg.randn(2, 2, generator=g).tolist(),
        tg.randint(0, 10, (4,), generator=g).tolist(),
        tg.randperm(6, generator=g).tolist(),
        tg.normal(1.0, 2.0, (3,), generator=g).tolist(),
        tg.uniform(-1.0, 1.0, (3,), generator=g).tolist(),
        tg.bernoulli(tg.full((5,), 0.5), generator=g).tolist(),
        tg.poisson(tg.full((3,), 4.0), generator=g).tolist(),
        tg.multinomial(tg.tensor([1.0, 2.0, 3.0]), 2, generator=g).tolist(),
        t.uniform_(0, 1, generator=g).tolist(),
        t.normal_(generator=g).tolist(),
        nn.init.kaiming_uniform_(w, generator=g).tolist(),
        nn.init.xavier_normal_(w, generator=g).tolist(),
        nn.init.orthogonal_(w, generator=g).tolist(),
        nn.init.trunc_normal_(w, generator=g).tolist(),
    ]


def test_a_seeded_generator_reproduces_every_draw_and_leaves_the_thread_stream_alone():
    tg.manual_seed(3)
    thread_next = tg.rand(4).tolist()
    tg.manual_seed(3)
    first = _draws(tg.Generator().manual_seed(11))
    assert tg.rand(4).tolist() == thread_next  # the object draws did not advance it
    assert _draws(tg.Generator().manual_seed(11)) == first
    assert _draws(tg.Generator().manual_seed(12)) != first


def test_seed_initial_seed_and_manual_seed_chaining():
    g = tg.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s
    assert tg.Generator().seed() != tg.Generator().seed()  # OS entropy
    # unseeded: PyTorch's fixed default seed, so two new generators agree
    assert tg.Generator().initial_seed() == 67280421310721
    assert (
        tg.rand(3, generator=tg.Generator()).tolist()
        == tg.rand(3, generator=tg.Generator()).tolist()
    )
    assert g.device == "cpu" and "initial_seed" in repr(g)


def test_get_state_and_set_state_resume_the_stream():
    g = tg.Generator().manual_seed(1)
    tg.rand(7, generator=g)
    state = g.get_state()
    assert state.dtype == tg.uint8 and state.ndim == 1
    a = tg.randn(5, generator=g).tolist()
    assert g.set_state(state) is g
    assert tg.randn(5, generator=g).tolist() == a
    other = tg.Generator().set_state(state)  # a state moves to another generator
    assert tg.randn(5, generator=other).tolist() == a


def test_thread_generator_state_functions():
    s = tg.manual_seed(21)
    assert s is tg.default_generator and tg.initial_seed() == 21
    tg.rand(3)
    state = tg.get_rng_state()
    a = tg.rand(4).tolist()
    tg.set_rng_state(state)
    assert tg.rand(4).tolist() == a
    assert tg.default_generator.get_state().tolist() == tg.get_rng_state().tolist()
    tg.default_generator.manual_seed(21)
    b = tg.rand(3, generator=tg.default_generator).tolist()
    tg.manual_seed(21)
    assert tg.rand(3).tolist() == b  # the default generator is the thread's stream
    fresh = tg.seed()
    assert tg.initial_seed() == fresh


def test_each_thread_has_its_own_initial_seed():
    tg.manual_seed(4)
    seen = {}

    def worker():
        seen["seed"] = tg.initial_seed()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen["seed"] == 4  # derived from the base seed, as its stream is


@pytest.mark.parametrize(
    "bad, match",
    [
        (1, "rand: generator must be a tg.Generator"),
        ("cpu", "rand: generator must be a tg.Generator"),
    ],
)
def test_a_wrong_generator_argument_names_the_function(bad, match):
    with pytest.raises(TypeError, match=match):
        tg.rand(2, generator=bad)


def test_bad_seeds_devices_and_states_are_refused():
    with pytest.raises(ValueError, match="Generator.manual_seed: seed must be a non-negative"):
        tg.Generator().manual_seed(-1)
    with pytest.raises(ValueError, match="manual_seed: seed must be"):
        tg.manual_seed(True)
    with pytest.raises(ValueError, match="Generator: unknown device 'tpu'"):
        tg.Generator("tpu")
    with pytest.raises(TypeError, match="Generator.set_state: expected the uint8 tensor"):
        tg.Generator().set_state(tg.zeros(3))
    with pytest.raises(ValueError, match="set_rng_state: the tensor is not a tapegrad"):
        tg.set_rng_state(tg.zeros(8, dtype=tg.uint8))
    g = tg.Generator().manual_seed(2)
    before = g.get_state().tolist()
    with pytest.raises(ValueError):
        g.set_state(tg.tensor(list(b"{}"), dtype=tg.uint8))
    assert g.get_state().tolist() == before  # a refused state changes nothing


def test_bernoulli_and_poisson_values_and_errors():
    p = tg.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=tg.float64)
    out = tg.bernoulli(p)
    assert out.dtype == tg.float64 and out.tolist() == p.tolist()
    assert tg.bernoulli(tg.zeros(3), 1.0).tolist() == [1.0, 1.0, 1.0]
    many = tg.bernoulli(tg.full((20000,), 0.3), generator=tg.Generator().manual_seed(0))
    assert abs(float(many.mean()) - 0.3) < 0.02
    counts = tg.poisson(tg.full((20000,), 3.0), generator=tg.Generator().manual_seed(0))
    assert abs(float(counts.mean()) - 3.0) < 0.06 and abs(float(counts.var()) - 3.0) < 0.15
    assert not tg.bernoulli(tg.full((2,), 0.5, requires_grad=True)).requires_grad
    with pytest.raises(RuntimeError, match=r"bernoulli: expected every probability to be in \["):
        tg.bernoulli(tg.tensor([1.5]))
    with pytest.raises(RuntimeError, match="bernoulli: expected every probability"):
        tg.bernoulli(tg.tensor([float("nan")]))
    with pytest.raises(NotImplementedError, match="bernoulli: not implemented for int64"):
        tg.bernoulli(tg.tensor([1, 0]))
    with pytest.raises(TypeError, match="bernoulli: p must be a Python number"):
        tg.bernoulli(tg.zeros(2), "half")
    with pytest.raises(RuntimeError, match="poisson: invalid Poisson rate"):
        tg.poisson(tg.tensor([-1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning for the NaN compare
        with pytest.raises(RuntimeError, match="poisson"):
            tg.poisson(tg.tensor([float("nan")]))


def test_data_loading_takes_a_generator():
    ds = TensorDataset(tg.arange(20))

    def order(g):
        return [int(b[0][0]) for b in DataLoader(ds, batch_size=1, shuffle=True, generator=g)]

    assert order(tg.Generator().manual_seed(8)) == order(tg.Generator().manual_seed(8))
    assert order(tg.Generator().manual_seed(8)) != order(tg.Generator().manual_seed(9))

    def split(seed):
        parts = random_split(ds, [15, 5], generator=tg.Generator().manual_seed(seed))
        return [s.indices.tolist() for s in parts]

    a, b = split(1), split(1)
    assert a == b and sorted(a[0] + a[1]) == list(range(20))
    for make in (
        lambda g: RandomSampler(range(10), generator=g),
        lambda g: SubsetRandomSampler(list(range(10)), generator=g),
        lambda g: WeightedRandomSampler([1.0] * 10, 10, generator=g),
    ):
        g1, g2 = tg.Generator().manual_seed(3), tg.Generator().manual_seed(3)
        assert list(make(g1)) == list(make(g2))


def test_the_torch_facade_names():
    import tapegrad.compat.torch as torch

    g = torch.Generator().manual_seed(0)
    assert isinstance(g, tg.Generator)
    assert torch.rand(2, generator=g).shape == (2,)
    assert torch.manual_seed(0) is torch.default_generator
    torch.set_rng_state(torch.get_rng_state())
    assert torch.bernoulli(torch.ones(2)).tolist() == [1.0, 1.0]


def test_a_generator_draw_inside_a_compiled_function_runs_eagerly():
    g = tg.Generator().manual_seed(0)

    def noisy(x):
        return x + tg.rand(3, generator=g)

    f = tg.compile(noisy)
    x = tg.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the compile's one warning, that it runs eagerly
        outs = [f(x).tolist() for _ in range(3)]
    assert outs[0] != outs[1] != outs[2]  # fresh numbers each call, as eager draws them
    g.manual_seed(0)
    assert outs[0] == noisy(x).tolist()


def test_state_tensor_is_the_pcg64_state():
    g = tg.Generator().manual_seed(9)
    raw = bytes(np.asarray(g.get_state().numpy()))
    assert b"PCG64" in raw
