"""Compiled DistributedDataParallel steps: a world of one process replays as the bare model;
over several processes (a stand-in communicator here) each replay arms the averaging again,
so the post-accumulate hooks all-reduce the replayed gradients as in eager."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
import tapegrad.distributed as dist
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.compile import CompileWarning
from tapegrad.distributed import reducer as reducer_mod


class _Done:
    def Wait(self):  # noqa: N802  (mpi4py's name)
        pass


class _PeerComm:
    """Two processes; the other one's gradients are all ones (so averaging changes them)."""

    def __init__(self):
        self.launches = 0

    def Get_size(self):  # noqa: N802
        return 2

    def Get_rank(self):  # noqa: N802
        return 0

    def Bcast(self, arr, root=0):  # noqa: N802
        pass

    def allgather(self, obj):
        return [obj, obj]


@pytest.fixture
def peer(monkeypatch):
    comm = _PeerComm()
    monkeypatch.setattr(dist, "_initialized", True)
    monkeypatch.setattr(dist, "_comm", comm)

    def start(comm_, send, recv):
        recv[...] = send + 1
        comm.launches += 1
        return _Done()

    monkeypatch.setattr(reducer_mod, "_start_allreduce", start)
    return comm


@pytest.fixture
def world_of_one(monkeypatch):
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    for var in dist._SIZE_VARS:
        monkeypatch.delenv(var, raising=False)


def _train(data, compiled, **ddp_options):
    tg.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    model = dist.DistributedDataParallel(net, **ddp_options)
    opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # averaged over the processes here
        opt.step()
        return loss

    run = tg.compile(step) if compiled else step
    losses = [run(x, y).item() for x, y in data]
    return losses, [p.detach().numpy().copy() for p in net.parameters()], run, model


def _data(rng, n=8):
    return [
        (
            tg.tensor(rng.standard_normal((6, 4)).astype(np.float32)),
            tg.tensor(rng.integers(0, 3, 6)),
        )
        for _ in range(n)
    ]


def test_compiled_steps_average_gradients_as_eager(peer, rng):
    data = _data(rng)
    want = _train(data, compiled=False)
    launched = peer.launches
    got = _train(data, compiled=True)
    assert peer.launches == 2 * launched > 0  # every replayed backward communicated
    assert got[2].cache_info().hits == len(data) - 1 and got[2].eager_reason is None
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        assert_array_equal(a, b)


def test_no_sync_is_read_at_each_replay(peer, rng):
    data = _data(rng, 4)
    _, _, run, model = _train(data[:2], compiled=True)
    before = peer.launches
    with model.no_sync():
        run(*data[2])
    assert peer.launches == before  # local gradients only
    run(*data[3])
    assert peer.launches > before


def test_find_unused_parameters_keeps_the_step_eager(peer, rng):
    with pytest.warns(CompileWarning, match="find_unused_parameters"):
        _train(_data(rng, 2), compiled=True, find_unused_parameters=True)


def test_world_of_one_compiles_as_the_bare_model(world_of_one, rng):
    data = _data(rng)
    want = _train(data, compiled=False)
    got = _train(data, compiled=True)
    assert got[0] == want[0] and got[2].cache_info().hits == len(data) - 1
    for a, b in zip(got[1], want[1], strict=True):
        assert_array_equal(a, b)
