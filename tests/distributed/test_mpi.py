"""tg.distributed with real MPI: two processes launched by mpiexec run _mpi_worker.py; the
values they saw are checked here against the same computation done in one process.

Skipped (with the reason) where mpi4py or mpiexec is missing: both are optional
(`pip install tapegrad[mpi]` plus an MPI library such as Open MPI).
"""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
WORKER = HERE / "_mpi_worker.py"
N = 2


def _worker_module():
    spec = importlib.util.spec_from_file_location("_mpi_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, mpirun):
    """Run the worker on N processes once; the list of what each rank saved."""
    out = tmp_path_factory.mktemp("mpi")
    mpirun(N, WORKER, out)
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(N)]


@pytest.fixture(scope="module")
def worker():
    return _worker_module()


def _grads(model, x, y) -> list:
    model.zero_grad()
    F.mse_loss(model(tg.tensor(x)), tg.tensor(y)).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


def test_world(ranks):
    assert [int(r["rank"]) for r in ranks] == list(range(N))
    assert all(int(r["size"]) == N for r in ranks)


def test_collectives(ranks):
    for r in ranks:
        np.testing.assert_array_equal(r["sum"], [1.0 + 2.0, 0.0 + 10.0])
        np.testing.assert_array_equal(r["mean"], [1.5, 5.0])
        np.testing.assert_array_equal(r["max"], [2.0, 10.0])
        np.testing.assert_array_equal(r["bcast"], [1.0, -1.0])  # rank 1's value
        np.testing.assert_array_equal(r["gather"], [[0, 0], [1, 2]])
        np.testing.assert_array_equal(r["gather_into"], [0.5, 1.5])
        assert r["f16"].dtype == np.float16 and r["bcast16"].dtype == np.float16
        np.testing.assert_array_equal(r["f16"], [1.5, 0.5])
        np.testing.assert_array_equal(r["bcast16"], [1.25])
        np.testing.assert_array_equal(r["any"], [True, True])
        np.testing.assert_array_equal(r["all"], [True, False])
        np.testing.assert_array_equal(r["gather_bool"], [[True, True], [True, False]])


@pytest.mark.parametrize("tag, buckets", [("one", 1), ("tiny", 4)])
def test_ddp_step_equals_one_process_on_the_whole_batch(ranks, worker, tag, buckets):
    model = worker.build(seed=100)  # rank 0's initial model, which DDP broadcasts
    x, y = worker.data()
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    init = worker.params_of(model)
    _grads(model, x, y)
    opt.step()
    expected = worker.params_of(model)
    for r in ranks:
        assert int(r[f"{tag}_buckets"]) == buckets
        for i, (p0, p1) in enumerate(zip(init, expected, strict=True)):
            np.testing.assert_array_equal(r[f"{tag}_init{i}"], p0)  # broadcast from rank 0
            np.testing.assert_allclose(r[f"{tag}_after{i}"], p1, rtol=1e-5, atol=1e-6)
    for i in range(len(expected)):  # and the ranks agree bit for bit
        np.testing.assert_array_equal(ranks[0][f"{tag}_after{i}"], ranks[1][f"{tag}_after{i}"])


def test_no_sync_accumulates_locally_then_averages_everything(ranks, worker):
    model = worker.build(seed=7)
    x, y = worker.data()
    quarter = len(x) // N // 2
    local, total = [], None
    for r in range(N):
        base = r * len(x) // N
        lo = _grads(model, x[base : base + quarter], y[base : base + quarter])
        second = slice(base + quarter, base + 2 * quarter)
        hi = _grads(model, x[second], y[second])
        local.append(lo)
        both = [a + b for a, b in zip(lo, hi, strict=True)]
        total = both if total is None else [a + b for a, b in zip(total, both, strict=True)]
    for r, saved in enumerate(ranks):
        for i, g in enumerate(total):
            np.testing.assert_allclose(saved[f"nosync_local{i}"], local[r][i], rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(saved[f"nosync_grad{i}"], g / N, rtol=1e-5, atol=1e-7)


def test_find_unused_parameters_and_the_error_without_it(ranks, worker):
    x, _ = worker.data()
    expected = np.tile(x[:N].mean(axis=0), (2, 1))  # d sum(W x + b) / dW, averaged
    for r in ranks:
        np.testing.assert_allclose(r["unused_used_grad"], expected, rtol=1e-6)
        assert bool(r["unused_spare_grad_is_zero"])
        msg = str(r["unused_error"])
        assert "spare.bias, spare.weight" in msg and "find_unused_parameters=True" in msg


def test_allreduce_callback_with_grad_manager(ranks, worker):
    x, y = worker.data()
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    expected = 2.0 / y.size * x.T @ (x @ w - y)  # d mean((xw - y)^2) / dw on the whole batch
    for r in ranks:
        np.testing.assert_allclose(r["gm_grad"], expected, rtol=1e-5, atol=1e-6)
