"""Facade gaps found running pytorch/examples unchanged (tools/pytorch_examples.py): sparse
COO construction on dense storage (gcn, gat), factories' `size=` keyword (gat), torch.load's
weights_only switches (time_sequence_prediction)."""

from __future__ import annotations

import copy
import pickle
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import tapegrad.compat.torch as ft


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ------------------------------------------------------------------ sparse, stored dense

_IDX = [[0, 1, 1, 2], [2, 0, 0, 1]]  # (1, 0) twice: summed
_VAL = [3.0, 4.0, 5.0, -1.5]


def test_sparse_coo_tensor_values_as_torch(torch):
    mine = ft.sparse_coo_tensor(ft.tensor(_IDX), ft.tensor(_VAL), (3, 3))
    ref = torch.sparse_coo_tensor(
        torch.tensor(_IDX), torch.tensor(_VAL), (3, 3), check_invariants=True
    ).to_dense()
    np.testing.assert_array_equal(mine.numpy(), ref.numpy())
    assert mine.dtype == np.float32 and not mine.is_sparse


def test_sparse_coo_tensor_infers_size_and_dense_dims_as_torch(torch):
    vals = np.arange(8.0).reshape(4, 2)
    mine = ft.sparse_coo_tensor(_IDX, ft.tensor(vals))
    ref = torch.sparse_coo_tensor(
        torch.tensor(_IDX), torch.tensor(vals), check_invariants=True
    ).to_dense()
    assert tuple(mine.shape) == tuple(ref.shape) == (3, 3, 2)
    np.testing.assert_array_equal(mine.numpy(), ref.numpy())


def test_sparse_coo_tensor_dtype_and_arithmetic_with_dense_as_torch(torch):
    # gcn's adjacency: int64 entries from float ones, then eye + adj and a row-sum
    mine = ft.eye(3) + ft.sparse_coo_tensor(ft.tensor(_IDX), ft.ones(4), (3, 3), dtype=ft.int64)
    ref = torch.eye(3) + torch.sparse_coo_tensor(
        torch.tensor(_IDX), torch.ones(4), (3, 3), dtype=torch.int64, check_invariants=True
    )
    assert str(ref.dtype) == "torch.float32" and mine.dtype == np.float32
    np.testing.assert_array_equal(mine.numpy(), ref.to_dense().numpy())
    np.testing.assert_array_equal(
        ft.sum(mine, dim=1).numpy(), torch.sum(ref, dim=1).to_dense().numpy()
    )


def test_sparse_coo_tensor_gradient_reaches_values(torch):
    w = np.array([0.5, -2.0, 1.0, 3.0])
    v = ft.tensor(_VAL, requires_grad=True)
    (
        ft.sparse_coo_tensor(_IDX, v, (3, 3)) * ft.tensor(np.arange(9.0).reshape(3, 3))
    ).sum().backward()
    tv = torch.tensor(_VAL, requires_grad=True)
    torch.sparse.sum(
        torch.sparse_coo_tensor(torch.tensor(_IDX), tv, (3, 3), check_invariants=True)
        * torch.arange(9.0).reshape(3, 3).to_sparse()
    ).backward()
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())
    assert w.shape == v.grad.shape  # one gradient entry per value


def test_sparse_coo_tensor_requires_grad_makes_a_leaf():
    s = ft.sparse_coo_tensor(_IDX, _VAL, (3, 3), requires_grad=True)
    assert s.requires_grad and s.grad_fn is None


@pytest.mark.parametrize(
    ("indices", "values", "size", "error", "words"),
    [
        ([0, 1], [1.0, 2.0], None, ValueError, "2-D integer"),
        (_IDX, [1.0, 2.0], (3, 3), ValueError, "one row per index column"),
        (_IDX, _VAL, (3, 3, 2), ValueError, "does not fit"),
        (_IDX, _VAL, (2, 3), RuntimeError, "out of bounds"),
    ],
)
def test_sparse_coo_tensor_misuse_says_what_is_wrong(indices, values, size, error, words):
    with pytest.raises(error, match=f"sparse_coo_tensor: .*{words}"):
        ft.sparse_coo_tensor(indices, values, size)


def test_to_sparse_spmm_to_dense_as_torch(torch):
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    b = np.arange(6.0).reshape(3, 2)
    mine = ft.spmm(ft.tensor(a).to_sparse(), ft.tensor(b))
    ref = torch.spmm(torch.tensor(a).to_sparse(), torch.tensor(b))
    np.testing.assert_array_equal(mine.numpy(), ref.numpy())
    np.testing.assert_array_equal(
        (ft.diag(ft.tensor([2.0, 3.0], dtype=ft.float64)).to_sparse() @ ft.tensor(a)).numpy(),
        (torch.diag(torch.tensor([2.0, 3.0], dtype=torch.float64)).to_sparse() @ torch.tensor(a))
        .to_dense()
        .numpy(),
    )
    x = ft.tensor(a)
    assert x.to_dense() is x
    y = x.to_sparse()
    y.add_(1.0)  # a copy, as torch's: the source is unchanged
    np.testing.assert_array_equal(x.numpy(), a)


def test_to_sparse_gradient_flows():
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    (x.to_sparse() * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_spmm_refuses_non_matrices():
    with pytest.raises(ValueError, match="spmm: both arguments must be matrices"):
        ft.spmm(ft.ones(3), ft.ones(3, 1))


# ------------------------------------------------------------------ size= on the factories


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_factories_take_size_keyword_as_torch(torch, name):
    mine = getattr(ft, name)(size=(2, 3), dtype=ft.int64)
    ref = getattr(torch, name)(size=(2, 3), dtype=torch.int64)
    assert tuple(mine.shape) == tuple(ref.shape) and mine.dtype == np.int64
    if name != "empty":
        np.testing.assert_array_equal(mine.numpy(), ref.numpy())


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_factories_take_size_keyword(torch, name):
    assert tuple(getattr(ft, name)(size=[4, 1]).shape) == tuple(
        getattr(torch, name)(size=[4, 1]).shape
    )


def test_size_keyword_and_positional_sizes_together_is_an_error(torch):
    with pytest.raises(TypeError):
        torch.zeros(2, size=(2,))
    with pytest.raises(TypeError, match=r"zeros\(\): got the sizes both"):
        ft.zeros(2, size=(2,))


# ------------------------------------------------------------------ torch.load's switches


@pytest.fixture
def array_file(tmp_path):
    path = tmp_path / "arr.bin"
    ft.save(np.arange(3.0), str(path))
    return str(path)


def test_weights_only_refuses_an_array_by_default_as_torch(array_file, monkeypatch):
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ft.load(array_file)


def test_force_no_weights_only_env_loads_when_not_passed_as_torch(
    torch, array_file, tmp_path, monkeypatch
):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    ref_path = tmp_path / "ref.pt"
    torch.save(np.arange(3.0), str(ref_path))
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        ref = torch.load(str(ref_path))
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        mine = ft.load(array_file)
    np.testing.assert_array_equal(mine, ref)
    # an explicit weights_only=True still wins over it
    with pytest.raises(pickle.UnpicklingError):
        torch.load(str(ref_path), weights_only=True)
    with pytest.raises(pickle.UnpicklingError):
        ft.load(array_file, weights_only=True)


def test_force_weights_only_env_overrides_false_as_torch(torch, array_file, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(pickle.UnpicklingError):
        ft.load(array_file, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(RuntimeError, match="only one of TORCH_FORCE_WEIGHTS_ONLY_LOAD"):
        ft.load(array_file)


def test_pickle_module_makes_the_default_load_everything_as_torch(array_file, monkeypatch):
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(ft.load(array_file, pickle_module=pickle), [0.0, 1.0, 2.0])


# ------------------------------------------------------------------ shared memory, Hogwild


def test_share_memory_keeps_values_and_pickles_to_the_same_memory(torch):
    t = ft.tensor([1.0, 2.0, 3.0])
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    assert t.tolist() == [1.0, 2.0, 3.0]
    other = pickle.loads(ForkingPickler.dumps(t))  # as multiprocessing sends it
    other.add_(10.0)  # the other "process" writes in place: this one sees it
    assert t.tolist() == [11.0, 12.0, 13.0]
    for copied in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):  # plain pickle: values
        copied.add_(1.0)
        assert t.tolist() == [11.0, 12.0, 13.0] and copied.tolist() == [12.0, 13.0, 14.0]
    ref = torch.tensor([1.0, 2.0, 3.0])
    assert not ref.is_shared() and ref.share_memory_().is_shared()  # torch's flags agree


def test_unshared_tensors_still_pickle_by_value():
    t = ft.tensor([1.0, 2.0])
    other = pickle.loads(ForkingPickler.dumps(t))
    other.add_(1.0)
    assert t.tolist() == [1.0, 2.0] and not other.is_shared()


def test_module_share_memory_shares_parameters_through_pickle():
    model = ft.nn.Linear(3, 2)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    before = model.weight.detach().numpy().copy()
    child = pickle.loads(ForkingPickler.dumps(model))
    opt = ft.optim.SGD(child.parameters(), lr=0.5)
    child(ft.ones(1, 3)).sum().backward()
    opt.step()  # in place on the shared memory
    assert not np.array_equal(model.weight.detach().numpy(), before)
    np.testing.assert_array_equal(model.weight.detach().numpy(), child.weight.detach().numpy())
    np.testing.assert_array_equal(model.bias.detach().numpy(), child.bias.detach().numpy())
    assert isinstance(child.weight, ft.nn.Parameter) and child.weight.requires_grad


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_child_process_updates_a_shared_tensor_in_place(method):
    mp = pytest.importorskip("tapegrad.compat.torch.multiprocessing")
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    t = ft.zeros(4).share_memory_()
    p = mp.get_context(method).Process(target=t.add_, args=(2.5,))
    p.start()
    p.join(timeout=120)
    assert p.exitcode == 0
    assert t.tolist() == [2.5] * 4


def test_spawned_children_start_with_the_facade_while_it_is_torch(monkeypatch):
    import multiprocessing.spawn as spawn
    import sys

    import tapegrad.compat.torch.multiprocessing as mp

    monkeypatch.setitem(sys.modules, "torch", ft)  # as tapegrad.compat.run torch leaves it
    cmd = spawn.get_command_line(tracker_fd=3, pipe_handle=4)
    assert cmd[cmd.index("-c") + 1].startswith(mp._PRELUDE)
    monkeypatch.delitem(sys.modules, "torch")  # a program without the facade: plain children
    cmd = spawn.get_command_line(tracker_fd=3, pipe_handle=4)
    assert not cmd[cmd.index("-c") + 1].startswith(mp._PRELUDE)


def test_multiprocessing_spawn_runs_and_reports_failures():
    import tapegrad.compat.torch.multiprocessing as mp

    t = ft.zeros(2).share_memory_()
    mp.spawn(t.add_, nprocs=0)
    with pytest.raises(ValueError, match="spawn: nprocs=-1"):
        mp.spawn(t.add_, nprocs=-1)
    with pytest.raises(mp.ProcessRaisedException, match="process 0 terminated with exit code"):
        mp.spawn(_fails, nprocs=1, start_method="fork")


def _fails(i):
    raise SystemExit(3)
