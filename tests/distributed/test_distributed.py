"""tg.distributed without MPI: a world of one process; MPI asked for only when needed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.distributed as dist

HAS_MPI = importlib.util.find_spec("mpi4py") is not None


@pytest.fixture
def fresh(monkeypatch):
    """The module as if init() had not run yet (restored afterwards)."""
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    for var in dist._SIZE_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_world_of_one(fresh):
    dist.init()
    dist.init()  # idempotent
    assert dist.is_initialized()
    assert dist.get_rank() == 0 and dist.get_world_size() == 1
    dist.barrier()


def test_collectives_with_one_process_return_their_input(fresh):
    t = tg.tensor([1.0, 2.0])
    assert dist.all_reduce(t) is t
    assert dist.all_reduce(t, op="MEAN") is t
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert dist.broadcast(t, src=0) is t
    (g,) = dist.all_gather(t)
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0])
    assert g is not t
    out = [tg.zeros(2)]
    assert dist.all_gather(out, t) is out
    np.testing.assert_array_equal(out[0].numpy(), [1.0, 2.0])


def test_collective_bad_arguments(fresh):
    t = tg.tensor([1.0])
    with pytest.raises(ValueError, match="op must be one of sum, mean, max, min, prod"):
        dist.all_reduce(t, op="avg")
    with pytest.raises(ValueError, match="src=1 is not a rank of a world of 1"):
        dist.broadcast(t, src=1)
    with pytest.raises(ValueError, match="2 tensors for 1 processes"):
        dist.all_gather([tg.zeros(1), tg.zeros(1)], t)
    with pytest.raises(TypeError, match="expected a Tensor, got list"):
        dist.all_reduce([1.0])
    with pytest.raises(ValueError, match="backend must be"):
        dist.init(backend="nccl")


@pytest.mark.parametrize("name", ["mean", "MEAN", "Sum", "sum"])
def test_allreduce_cb_with_one_process_returns_the_gradient(fresh, name):
    cb = dist.make_allreduce_cb(name)
    p, g = tg.tensor([1.0, 2.0]), tg.tensor([0.5, -1.0])
    assert cb(p, g) is g
    assert name.lower() in cb.__name__


def test_allreduce_cb_rejects_other_reductions():
    with pytest.raises(ValueError, match="'mean' or 'sum'.*'max'"):
        dist.make_allreduce_cb("max")


@pytest.mark.skipif(HAS_MPI, reason="checks the message shown when mpi4py is missing")
def test_mpi_needed_without_mpi4py_says_how_to_install(fresh):
    with pytest.raises(ImportError, match=r'pip install "tapegrad\[mpi\]"'):
        dist.init(backend="mpi")
    assert not dist.is_initialized()
    fresh.setenv("OMPI_COMM_WORLD_SIZE", "4")  # launched by mpiexec -n 4
    with pytest.raises(ImportError, match=r"tapegrad\[mpi\]"):
        dist.get_world_size()


def test_local_backend_ignores_the_launcher(fresh):
    fresh.setenv("PMI_SIZE", "8")
    dist.init(backend="local")
    assert dist.get_world_size() == 1
