"""DistributedDataParallel without MPI: a world of one process (no communication at all),
and the bucket machinery driven by a stand-in communicator of two identical processes."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.distributed as dist
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.distributed import reducer as reducer_mod


@pytest.fixture
def world_of_one(monkeypatch):
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    for var in dist._SIZE_VARS:
        monkeypatch.delenv(var, raising=False)


class _Request:
    def __init__(self, log, n):
        self.log, self.n = log, n

    def Wait(self):  # noqa: N802  (mpi4py's name)
        self.log.append(("wait", self.n))


class TwinComm:
    """Two processes that hold exactly the same data: sums are twice the local value."""

    def __init__(self):
        self.log = []

    def Get_size(self):  # noqa: N802
        return 2

    def Get_rank(self):  # noqa: N802
        return 0

    def Bcast(self, arr, root=0):  # noqa: N802
        self.log.append(("bcast", arr.size))

    def allgather(self, obj):
        return [obj, obj]


@pytest.fixture
def twins(monkeypatch):
    comm = TwinComm()
    monkeypatch.setattr(dist, "_initialized", True)
    monkeypatch.setattr(dist, "_comm", comm)

    def start(comm_, send, recv):
        recv[...] = send * 2
        comm.log.append(("launch", send.size))
        return _Request(comm.log, send.size)

    monkeypatch.setattr(reducer_mod, "_start_allreduce", start)
    return comm


def mlp(seed=0):
    tg.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def grads(model, x, y):
    F.cross_entropy(model(x), y).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.fixture
def batch(rng):
    return (
        tg.tensor(rng.standard_normal((6, 4)).astype(np.float32)),
        tg.tensor(rng.integers(0, 3, 6)),
    )


# ------------------------------------------------------------------ one process, no MPI
def test_world_of_one_is_the_bare_module(world_of_one, batch):
    bare, wrapped = mlp(), mlp()
    ddp = dist.DistributedDataParallel(wrapped)
    assert ddp.module is wrapped and ddp.world_size == 1 and ddp.reducer is None
    assert [id(p) for p in ddp.parameters()] == [id(p) for p in wrapped.parameters()]
    assert all(k.startswith("module.") for k in ddp.state_dict())
    x, y = batch
    np.testing.assert_array_equal(ddp(x).detach().numpy(), bare(x).detach().numpy())
    for g0, g1 in zip(grads(bare, x, y), grads(ddp, x, y), strict=True):
        np.testing.assert_array_equal(g0, g1)


def test_world_of_one_no_sync_accumulates(world_of_one, batch):
    bare, ddp = mlp(), dist.DistributedDataParallel(mlp())
    x, y = batch
    with ddp.no_sync():
        assert ddp.require_backward_grad_sync is False
        grads(ddp, x[:3], y[:3])
    assert ddp.require_backward_grad_sync is True
    grads(bare, x[:3], y[:3])
    for g0, g1 in zip(grads(bare, x[3:], y[3:]), grads(ddp, x[3:], y[3:]), strict=True):
        np.testing.assert_array_equal(g0, g1)


def test_world_of_one_construction_changes_nothing(world_of_one):
    model = mlp(seed=5)
    before = [p.detach().numpy().copy() for p in model.parameters()]
    dist.DistributedDataParallel(model, bucket_cap_mb=1)
    for b, p in zip(before, model.parameters(), strict=True):
        np.testing.assert_array_equal(b, p.detach().numpy())


def test_bad_arguments(world_of_one):
    with pytest.raises(TypeError, match="wraps a tg.nn.Module, got function"):
        dist.DistributedDataParallel(lambda x: x)
    for cap in (0, -1, "25", True):
        with pytest.raises(ValueError, match="bucket_cap_mb must be a positive number"):
            dist.DistributedDataParallel(mlp(), bucket_cap_mb=cap)
    with pytest.raises(ValueError, match="process groups are not supported"):
        dist.DistributedDataParallel(mlp(), process_group=object())
    with pytest.raises(TypeError, match=r"unexpected arguments \['gradient_as_bucket'\]"):
        dist.DistributedDataParallel(mlp(), gradient_as_bucket=True)
    dist.DistributedDataParallel(mlp(), device_ids=None, output_device=None)  # PyTorch's


def test_mean_of_integers_is_refused_whatever_the_world_size(world_of_one):
    with pytest.raises(TypeError, match="op='mean' needs a floating tensor, got int64"):
        dist.all_reduce(tg.tensor([1, 2]), op="mean")
    assert dist.all_reduce(tg.tensor([1, 2]), op="sum").tolist() == [1, 2]


# ------------------------------------------------------------------ buckets, stand-in MPI
def test_buckets_average_and_launch_as_they_fill(twins, batch):
    bare, wrapped = mlp(), mlp()
    ddp = dist.DistributedDataParallel(wrapped, bucket_cap_mb=40 * 4 / 2**20)  # 40 floats
    assert [("bcast", 4 * p.numel()) for p in wrapped.parameters()] == twins.log  # bytes
    # reverse registration order: bias2 (3) + weight2 (24) + bias1 (8) fit in 40, weight1
    # (32) does not
    assert [len(b.params) for b in ddp.reducer.buckets] == [3, 1]
    assert [b.send.size for b in ddp.reducer.buckets] == [35, 32]
    twins.log.clear()
    x, y = batch
    expected = grads(bare, x, y)
    for g0, g1 in zip(expected, grads(ddp, x, y), strict=True):
        np.testing.assert_allclose(g0, g1, rtol=1e-6)  # (g + g) / 2
    launches = [e for e in twins.log if e[0] == "launch"]
    assert sorted(n for _, n in launches) == [32, 35]
    # every bucket starts before the first wait (waits come only at the end)
    assert twins.log[:2] == launches and [e[0] for e in twins.log[2:]] == ["wait"] * 2


def test_no_sync_launches_nothing_then_one_sync(twins, batch):
    ddp = dist.DistributedDataParallel(mlp())
    x, y = batch
    twins.log.clear()
    with ddp.no_sync():
        grads(ddp, x, y)
    assert twins.log == []
    grads(ddp, x, y)
    assert [e[0] for e in twins.log] == ["launch", "wait"]
    with tg.no_grad():
        ddp(x)  # evaluation arms nothing
    ddp.module(x).sum().backward()  # nor does calling the inner module
    assert len(twins.log) == 2


def test_unused_parameter_is_reported_at_the_next_forward(twins, batch):
    class Spare(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.spare = nn.Linear(4, 3), nn.Linear(4, 3)

        def forward(self, x):
            return self.used(x)

    x, y = batch
    ddp = dist.DistributedDataParallel(Spare(), bucket_cap_mb=1e-5)
    F.cross_entropy(ddp(x), y).backward()
    with pytest.raises(
        RuntimeError,
        match=r"2 parameter\(s\) \(spare.bias, spare.weight\).*"
        r"find_unused_parameters=True",
    ):
        ddp(x)
    ddp(x)  # the error is reported once

    model = Spare()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=True)
    grads(ddp, x, y)
    grads(ddp, x, y)
    assert not model.spare.weight.grad.numpy().any()  # zeros averaged in
    assert model.used.weight.grad is not None


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 3), nn.Linear(4, 3)

    def forward(self, x):
        return self.a(x), self.b(x)


def test_backwards_over_parts_of_one_forward(twins, batch):
    x, _ = batch
    ddp = dist.DistributedDataParallel(TwoHeads(), bucket_cap_mb=1e-5)
    twins.log.clear()
    ya, yb = ddp(x)
    ya.sum().backward()  # a's buckets start
    assert [e[0] for e in twins.log] == ["launch", "launch"]
    yb.sum().backward()  # b's complete the iteration: all four are waited for
    assert [e[0] for e in twins.log] == ["launch"] * 4 + ["wait"] * 4

    ya, yb = ddp(x)
    ya.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="parameter 'a.bias' got its gradient twice"):
        ya.sum().backward()


def test_reached_leaves_walks_the_graph(world_of_one):
    a, b, c = (tg.ones(2, requires_grad=True) for _ in range(3))
    out = (a * 2 + b.exp()).sum()
    ids = reducer_mod.reached_leaves([out, c])
    assert ids == {id(a), id(b), id(c)}


def test_one_dtype_per_bucket(twins):
    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.p16 = nn.Parameter(tg.ones(3, dtype=tg.float16))
            self.p32 = nn.Parameter(tg.ones(2))
            self.p64 = nn.Parameter(tg.ones(2, dtype=tg.float64))
            self.frozen = nn.Parameter(tg.ones(2), requires_grad=False)

        def forward(self, x):
            return (
                (self.p16.float() * x).sum()
                + (self.p32 * x[:2]).sum() * 2
                + (self.p64 * 3).sum().float()
            )

    model = Mixed()
    ddp = dist.DistributedDataParallel(model)
    buckets = ddp.reducer.buckets
    assert [b.send.dtype for b in buckets] == [np.float64, np.float32, np.float32]
    assert [id(b.params[0]) for b in buckets] == [id(model.p64), id(model.p32), id(model.p16)]
    ddp(tg.tensor([1.0, 2.0, 3.0])).backward()
    np.testing.assert_array_equal(model.p16.grad.numpy(), [1, 2, 3])
    assert model.p16.grad.dtype == tg.float16
    np.testing.assert_array_equal(model.p32.grad.numpy(), [2, 4])
    np.testing.assert_array_equal(model.p64.grad.numpy(), [3, 3])
    assert model.frozen.grad is None
