"""tg.set_num_threads / tg.get_num_threads (threadpoolctl) and the thread policy."""

import pytest

import tapegrad as tg
from tapegrad.threads import apply_thread_policy


@pytest.fixture
def restore_threads():
    before = tg.get_num_threads()
    yield
    tg.set_num_threads(before)


def _blas_reports_threads():
    from threadpoolctl import threadpool_info

    return any(lib.get("user_api") == "blas" for lib in threadpool_info())


def test_set_and_get(restore_threads):
    if not _blas_reports_threads():
        pytest.skip("NumPy's BLAS is not visible to threadpoolctl")
    from threadpoolctl import threadpool_info

    for n in (1, 2):
        tg.set_num_threads(n)
        assert tg.get_num_threads() == n
        assert {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"} == {n}


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_counts(bad):
    with pytest.raises(ValueError, match="positive int"):
        tg.set_num_threads(bad)


def test_policy_default_env_and_flag(monkeypatch, restore_threads):
    monkeypatch.delenv("TAPEGRAD_NUM_THREADS", raising=False)
    assert apply_thread_policy() == 1
    monkeypatch.setenv("TAPEGRAD_NUM_THREADS", "2")
    assert apply_thread_policy() == 2
    assert apply_thread_policy(3) == 3  # an explicit --threads wins over the environment
    if _blas_reports_threads():
        assert tg.get_num_threads() == 3
    monkeypatch.setenv("TAPEGRAD_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="TAPEGRAD_NUM_THREADS='many' is not a number"):
        apply_thread_policy()


class _Threads(tg.data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return tg.get_num_threads()


def test_dataloader_workers_use_one_blas_thread(restore_threads):
    if not _blas_reports_threads():
        pytest.skip("NumPy's BLAS is not visible to threadpoolctl")
    tg.set_num_threads(2)
    for method in ("fork", "spawn"):
        loader = tg.data.DataLoader(_Threads(), num_workers=1, multiprocessing_context=method)
        assert [b.item() for b in loader] == [1, 1], method
        assert tg.get_num_threads() == 2  # the main process keeps its own setting


def test_each_mpi_rank_applies_the_policy(monkeypatch, restore_threads):
    import types

    import tapegrad.distributed as dist

    if not _blas_reports_threads():
        pytest.skip("NumPy's BLAS is not visible to threadpoolctl")
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    monkeypatch.setattr(dist, "_import_mpi", lambda: types.SimpleNamespace(COMM_WORLD="world"))
    monkeypatch.setenv("TAPEGRAD_NUM_THREADS", "2")
    tg.set_num_threads(1)
    dist.init(backend="mpi")
    assert dist._comm == "world" and tg.get_num_threads() == 2
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.delenv("TAPEGRAD_NUM_THREADS")
    dist.init(backend="mpi")
    assert tg.get_num_threads() == 1
    monkeypatch.setattr(dist, "_initialized", False)
    monkeypatch.setattr(dist, "_comm", None)
    tg.set_num_threads(2)
    dist.init(backend="local")  # one process: the machine is its own, nothing changes
    assert tg.get_num_threads() == 2
