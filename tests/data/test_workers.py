"""DataLoader(num_workers > 0): real worker processes, their seeding, order, errors,
persistence, prefetching, timeouts and shutdown."""

import multiprocessing as mp
import os
import random
import time

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info


def _children():
    return [p for p in mp.active_children() if p.name.startswith("tapegrad-DataLoader")]


@pytest.fixture(autouse=True)
def no_leaked_workers():
    yield
    import gc

    gc.collect()
    deadline = time.time() + 10
    while _children() and time.time() < deadline:
        time.sleep(0.05)
    assert _children() == []


class Info(Dataset):
    """Each sample says who loaded it and what the worker's generators give."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        return {
            "i": i,
            "worker": wid,
            "pid": os.getpid(),
            "np": np.random.randint(1 << 30),
            "py": random.randrange(1 << 30),
            "tg": float(tg.rand(()).item()),
        }


class Boom(ValueError):
    pass


class Faulty(Dataset):
    def __init__(self, bad=7, exc=Boom):
        self.bad, self.exc = bad, exc

    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f"sample {i} is broken")
        return i


def _ids(loader):
    return [b.tolist() for b in (batch["i"] for batch in loader)]


@pytest.mark.parametrize("persistent", [False, True])
def test_same_batches_as_in_process_for_a_seed(persistent):
    def epochs(**kw):
        loader = DataLoader(Info(), batch_size=5, shuffle=True, seed=3, **kw)
        return [_ids(loader) for _ in range(2)]

    ref = epochs()
    got = epochs(num_workers=3, persistent_workers=persistent)
    assert got == ref
    assert ref[0] != ref[1] and sorted(sum(ref[0], [])) == list(range(24))
    gen = [
        _ids(
            DataLoader(
                Info(),
                batch_size=4,
                shuffle=True,
                num_workers=2,
                generator=np.random.default_rng(11),
            )
        )
        for _ in range(2)
    ]
    assert gen[0] == gen[1]


def test_workers_are_real_processes_with_worker_info_and_seeds():
    assert get_worker_info() is None
    batches = list(DataLoader(Info(), batch_size=4, num_workers=3, seed=0))
    workers = np.concatenate([b["worker"].numpy() for b in batches])
    pids = set(np.concatenate([b["pid"].numpy() for b in batches]).tolist())
    assert set(workers.tolist()) == {0, 1, 2} and os.getpid() not in pids and len(pids) == 3
    # batches are handed out round-robin, in order
    assert [int(b["worker"][0]) for b in batches] == [0, 1, 2, 0, 1, 2]
    # every generator is seeded per worker: reproducible for the seed, different per worker
    again = list(DataLoader(Info(), batch_size=4, num_workers=3, seed=0))
    for key in ("np", "py", "tg"):
        a = np.concatenate([b[key].numpy() for b in batches])
        b = np.concatenate([b[key].numpy() for b in again])
        np.testing.assert_array_equal(a, b)
        assert len(set(a[: 3 * 4 : 4].tolist())) == 3  # first draw of each worker differs
    other = list(DataLoader(Info(), batch_size=4, num_workers=3, seed=1))
    assert not np.array_equal(
        np.concatenate([b["np"].numpy() for b in other]),
        np.concatenate([b["np"].numpy() for b in batches]),
    )


def _record_init(worker_id):
    info = get_worker_info()
    assert info is not None and info.id == worker_id
    np.random.seed(1000 + worker_id)


def test_worker_init_fn_runs_after_seeding():
    batches = list(DataLoader(Info(), batch_size=4, num_workers=2, worker_init_fn=_record_init))
    first = {int(b["worker"][0]): int(b["np"][0]) for b in batches[:2]}
    for wid, value in first.items():
        np.random.seed(1000 + wid)
        assert value == np.random.randint(1 << 30)


def test_an_error_in_a_worker_is_reraised_with_the_sample_index():
    with pytest.raises(
        Boom,
        match=r"worker process 1 while loading sample index 7 "
        r"\(batch 1\)[\s\S]*sample 7 is broken",
    ):
        list(DataLoader(Faulty(), batch_size=4, num_workers=2))
    with pytest.raises(Boom, match="sample index 7"):  # the same note without workers
        list(DataLoader(Faulty(), batch_size=4))
    # a type that can't be built from a message comes back as a RuntimeError
    with pytest.raises(RuntimeError, match="Caught UnicodeDecodeError .* sample index 3"):
        list(
            DataLoader(
                Faulty(3, lambda m: UnicodeDecodeError("utf-8", b"x", 0, 1, m)),
                batch_size=2,
                num_workers=2,
            )
        )


def test_the_loader_goes_on_after_a_worker_error():
    it = iter(DataLoader(Faulty(), batch_size=4, num_workers=2))
    assert next(it).tolist() == [0, 1, 2, 3]
    with pytest.raises(Boom):
        next(it)
    assert [b.tolist() for b in it] == [[8, 9, 10, 11], [12, 13, 14, 15], [16, 17, 18, 19]]


def _unpicklable(samples):
    return lambda: samples


def test_an_unpicklable_batch_is_an_error_not_a_hang():
    with pytest.raises(Exception, match="while sending batch 0 to the main process"):
        next(iter(DataLoader(Faulty(), batch_size=2, num_workers=1, collate_fn=_unpicklable)))


class Sharded(IterableDataset):
    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def test_iterable_dataset_in_workers():
    got = sorted(
        sum((b.tolist() for b in DataLoader(Sharded(23), batch_size=4, num_workers=3)), [])
    )
    assert got == list(range(23))
    dup = sorted(
        sum(
            (b.tolist() for b in DataLoader(Sharded(5, shard=False), batch_size=2, num_workers=2)),
            [],
        )
    )
    assert dup == sorted(list(range(5)) * 2)  # as in PyTorch: each worker has a copy
    loader = DataLoader(Sharded(10), batch_size=3, num_workers=2, persistent_workers=True)
    for _ in range(2):  # a new stream per epoch in the same workers
        assert sorted(sum((b.tolist() for b in loader), [])) == list(range(10))


def test_iterable_dataset_matches_torch():
    torch = pytest.importorskip("torch")

    class TorchSharded(torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id, 23, info.num_workers))

    theirs = [
        b.tolist() for b in torch.utils.data.DataLoader(TorchSharded(), batch_size=4, num_workers=2)
    ]
    ours = [b.tolist() for b in DataLoader(Sharded(23), batch_size=4, num_workers=2)]
    assert ours == theirs


def test_persistent_workers_keep_their_processes():
    loader = DataLoader(Info(), batch_size=6, num_workers=2, persistent_workers=True)
    pids = [set(np.concatenate([b["pid"].numpy() for b in loader]).tolist()) for _ in range(2)]
    assert pids[0] == pids[1] and len(_children()) == 2
    fresh = DataLoader(Info(), batch_size=6, num_workers=2)
    p1 = set(np.concatenate([b["pid"].numpy() for b in fresh]).tolist())
    alive = {p.pid for p in _children()}
    assert alive == pids[0] and not p1 & alive  # the epoch is over: its workers are gone
    p2 = set(np.concatenate([b["pid"].numpy() for b in fresh]).tolist())
    assert not p1 & p2
    del loader  # the fixture checks that the persistent workers went with it


class Counted(Dataset):
    def __init__(self):
        self.loads = mp.get_context("fork").Value("i", 0)

    def __len__(self):
        return 100

    def __getitem__(self, i):
        with self.loads.get_lock():
            self.loads.value += 1
        return i


@pytest.mark.parametrize("prefetch", [1, 3])
def test_prefetch_factor_bounds_the_work_in_flight(prefetch):
    ds = Counted()
    it = iter(
        DataLoader(
            ds,
            batch_size=2,
            num_workers=2,
            prefetch_factor=prefetch,
            multiprocessing_context="fork",
        )
    )

    def settle(expected):
        deadline = time.time() + 20
        while ds.loads.value < expected and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # had the workers run ahead, they'd have loaded more by now
        return ds.loads.value

    assert settle(prefetch * 2 * 2) == prefetch * 2 * 2  # batches in flight x batch size
    next(it)
    assert settle((prefetch * 2 + 1) * 2) == (prefetch * 2 + 1) * 2  # one more per batch taken
    del it


class Sleepy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(3)
        return i


def test_timeout():
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(iter(DataLoader(Sleepy(), num_workers=1, timeout=0.3)))
    assert time.perf_counter() - t0 < 2.9


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            os._exit(3)
        return i


def test_a_worker_that_dies_is_reported():
    with pytest.raises(
        RuntimeError,
        match=r"worker 0 \(pid \d+\) exited unexpectedly with "
        r"exit code 3",
    ):
        list(DataLoader(Dies(), batch_size=1, num_workers=1))


def test_spawn_context_and_tensor_dataset_fast_path():
    ds = TensorDataset(np.arange(12.0).reshape(6, 2), np.arange(6))
    got = list(DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn"))
    np.testing.assert_array_equal(got[0][0].numpy(), np.arange(8.0).reshape(4, 2))
    assert got[1][1].tolist() == [4, 5]
    with pytest.raises(ValueError, match="not a start method here"):
        list(DataLoader(ds, num_workers=1, multiprocessing_context="nope"))


def test_breaking_out_of_an_epoch_stops_its_workers():
    loader = DataLoader(Info(), batch_size=2, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 1:
            break
    assert _children() == []  # the loop dropped its iterator, which stopped them
    it = iter(loader)
    next(it)
    assert len(_children()) == 2
    del it
    assert _children() == []


EXIT_SCRIPT = """
import numpy as np, tapegrad as tg
ds = tg.data.TensorDataset(np.arange(40.0))
loader = tg.data.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True)
it = iter(loader)
next(it)
print(" ".join(str(p.pid) for p in it._pool.procs), flush=True)
# exits here with the workers still running: the interpreter must stop them
"""


def test_no_worker_outlives_the_interpreter():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2 and out.stderr == ""
    deadline = time.time() + 10
    alive = pids
    while alive and time.time() < deadline:
        alive = [p for p in pids if _exists(p)]
        time.sleep(0.05)
    assert alive == []


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
