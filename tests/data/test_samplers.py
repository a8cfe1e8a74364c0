"""Samplers, ConcatDataset, IterableDataset and the DataLoader's argument checks, against
PyTorch's torch.utils.data where installed."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_convert,
)


class Range(Dataset):
    def __init__(self, n, offset=0):
        self.n, self.offset = n, offset

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.offset + i


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2


def test_random_sampler_seeded_permutations_and_replacement():
    a = list(RandomSampler(range(20), generator=np.random.default_rng(1)))
    b = list(RandomSampler(range(20), generator=np.random.default_rng(1)))
    assert a == b and sorted(a) == list(range(20)) and a != list(range(20))
    s = RandomSampler(range(5), num_samples=12, generator=np.random.default_rng(0))
    drawn = list(s)
    assert len(s) == 12 and len(drawn) == 12
    assert sorted(drawn[:5]) == list(range(5)) and sorted(drawn[5:10]) == list(range(5))
    r = list(
        RandomSampler(
            range(3), replacement=True, num_samples=300, generator=np.random.default_rng(0)
        )
    )
    assert set(r) == {0, 1, 2} and len(r) == 300
    tg.manual_seed(5)
    c = list(RandomSampler(range(10)))
    tg.manual_seed(5)
    assert list(RandomSampler(range(10))) == c


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 20, 30, 40], generator=np.random.default_rng(0))
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4


def test_weighted_sampler_frequencies():
    s = WeightedRandomSampler([0.0, 1.0, 3.0], 40000, generator=np.random.default_rng(0))
    counts = np.bincount(list(s), minlength=3)
    assert counts[0] == 0
    assert abs(counts[2] / counts[1] - 3.0) < 0.15
    no_rep = list(
        WeightedRandomSampler(
            [1.0, 1.0, 1.0, 0.0], 3, replacement=False, generator=np.random.default_rng(0)
        )
    )
    assert sorted(no_rep) == [0, 1, 2]
    with pytest.raises(ValueError, match="without replacement from 3 indices"):
        WeightedRandomSampler([1.0, 1.0, 1.0, 0.0], 4, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([-1.0, 1.0], 2)


def test_concat_dataset_and_add():
    both = ConcatDataset([Range(3), Range(2, offset=100)])
    assert len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i] for i in range(5)] == [0, 1, 2, 100, 101]
    assert both[-1] == 101 and both[-5] == 0
    with pytest.raises(IndexError, match="index 5 is out of range for 5"):
        both[5]
    assert [(Range(2) + Range(1, offset=7))[i] for i in range(3)] == [0, 1, 7]
    with pytest.raises(ValueError, match="datasets is empty"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="is an IterableDataset"):
        ConcatDataset([Stream(3)])


def test_concat_dataset_matches_torch():
    torch = pytest.importorskip("torch")
    tds = torch.utils.data.ConcatDataset([list(range(3)), list(range(10, 14))])
    ours = ConcatDataset([Range(3), Range(4, offset=10)])
    assert [ours[i] for i in range(-7, 7)] == [tds[i] for i in range(-7, 7)]


def test_loader_with_sampler_and_batch_sampler():
    ds = TensorDataset(np.arange(10))
    got = [b[0].tolist() for b in DataLoader(ds, batch_size=4, sampler=[9, 8, 7, 1, 0])]
    assert got == [[9, 8, 7, 1], [0]]
    bs = [[0, 5], [2], [9, 3, 1]]
    got = [b[0].tolist() for b in DataLoader(ds, batch_sampler=bs)]
    assert got == [[0, 5], [2], [9, 3, 1]]
    loader = DataLoader(ds, batch_size=3, shuffle=True, seed=0)
    assert isinstance(loader.sampler, RandomSampler) and len(loader) == 4
    assert isinstance(DataLoader(ds).sampler, SequentialSampler)


def test_no_auto_batching():
    got = list(DataLoader(Range(3), batch_size=None))
    assert got == [0, 1, 2]
    got = list(DataLoader(TensorDataset(np.arange(3.0)), batch_size=None))
    assert [t[0].item() for t in got] == [0.0, 1.0, 2.0] and got[0][0].shape == ()
    out = default_convert({"a": np.ones(2), "b": [np.zeros(1), "s"]})
    assert isinstance(out["a"], tg.Tensor) and isinstance(out["b"][0], tg.Tensor)
    assert out["b"][1] == "s"


def test_iterable_dataset_batches_and_len():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [
        [0, 1, 2],
        [3, 4, 5],
    ]
    assert list(DataLoader(Stream(3), batch_size=None)) == [0, 1, 2]
    with pytest.raises(TypeError):
        len(DataLoader(Stream(3)))


def test_subclass_of_tensor_dataset_keeps_its_getitem():
    class Doubled(TensorDataset):
        def __getitem__(self, i):
            (x,) = super().__getitem__(i)
            return (x * 2,)

    got = [b[0].tolist() for b in DataLoader(Doubled(np.arange(4)), batch_size=2)]
    assert got == [[0, 2], [4, 6]]


def test_frozen_attributes():
    loader = DataLoader(Range(4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3
    loader.num_workers = 0  # not frozen, as in PyTorch


BAD_ARGS = [
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(persistent_workers=True),
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(batch_size=0),
    dict(batch_size=-2),
    dict(num_workers=2, prefetch_factor=-1),
]


@pytest.mark.parametrize("kwargs", BAD_ARGS)
def test_argument_checks_match_torch(kwargs):
    with pytest.raises(ValueError) as ours:
        DataLoader(Range(4), **kwargs)
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DataLoader(list(range(4)), **kwargs)
    # the same first clause (ours may add the value or a hint)
    assert str(theirs.value).split(";")[0].split(".")[0][:40] in str(ours.value)


@pytest.mark.parametrize(
    "kwargs", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])]
)
def test_iterable_dataset_refuses_sampling_options(kwargs):
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
        DataLoader(Stream(3), **kwargs)


def test_sampler_argument_checks():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler([0], 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler([0], 2, 1)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        RandomSampler(range(3), generator=7)
    with pytest.raises(ValueError, match="timeout applies to worker processes only"):
        DataLoader(Range(3), timeout=1)
    with pytest.raises(ValueError, match="seed= or generator="):
        DataLoader(Range(3), seed=1, generator=np.random.default_rng(1))
