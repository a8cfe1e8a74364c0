"""Dataset, TensorDataset, DataLoader (batching, seeded shuffling, drop_last, collate_fn),
random_split."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.data import DataLoader, Dataset, TensorDataset, default_collate, random_split


def _ds(n=10):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n)
    return TensorDataset(tg.tensor(x), y)


def test_tensor_dataset_items():
    ds = _ds()
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and y.shape == ()
    with pytest.raises(ValueError, match="tensor 0 has 10 rows but tensor 1 has 4"):
        TensorDataset(np.zeros((10, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="at least one tensor"):
        TensorDataset()


@pytest.mark.parametrize(
    ("n", "bs", "drop_last", "sizes"),
    [
        (10, 3, False, [3, 3, 3, 1]),
        (10, 3, True, [3, 3, 3]),
        (10, 5, True, [5, 5]),
        (10, 20, False, [10]),
        (10, 20, True, []),
    ],
)
def test_batching_and_drop_last(n, bs, drop_last, sizes):
    loader = DataLoader(_ds(n), batch_size=bs, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(sizes)
    assert [b[0].shape[0] for b in batches] == sizes
    if sizes:
        assert batches[0][0].shape == (sizes[0], 2)
        seen = np.concatenate([b[1].numpy() for b in batches])
        assert seen.tolist() == list(range(sum(sizes)))  # in order without shuffle


def test_shuffle_with_a_seed_is_reproducible_and_changes_each_epoch():
    def epochs(loader, k=2):
        return [np.concatenate([y.numpy() for _, y in loader]).tolist() for _ in range(k)]

    a = epochs(DataLoader(_ds(50), batch_size=8, shuffle=True, seed=3))
    b = epochs(DataLoader(_ds(50), batch_size=8, shuffle=True, seed=3))
    c = epochs(DataLoader(_ds(50), batch_size=8, shuffle=True, seed=4))
    assert a == b and a != c
    assert a[0] != a[1]  # a new order every epoch
    assert sorted(a[0]) == list(range(50))  # a permutation: every sample once
    g1 = epochs(DataLoader(_ds(50), batch_size=8, shuffle=True, generator=np.random.default_rng(9)))
    g2 = epochs(DataLoader(_ds(50), batch_size=8, shuffle=True, generator=np.random.default_rng(9)))
    assert g1 == g2


def test_shuffle_follows_manual_seed_without_a_seed():
    tg.manual_seed(11)
    a = [y.tolist() for _, y in DataLoader(_ds(20), batch_size=20, shuffle=True)]
    tg.manual_seed(11)
    b = [y.tolist() for _, y in DataLoader(_ds(20), batch_size=20, shuffle=True)]
    assert a == b


def test_features_and_labels_stay_paired_under_shuffle():
    for x, y in DataLoader(_ds(30), batch_size=7, shuffle=True, seed=0):
        np.testing.assert_array_equal(x.numpy()[:, 0], 2 * y.numpy())


class Pairs(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(3, i, dtype=np.float32), "y": i, "name": f"s{i}"}


def test_generic_dataset_and_default_collate():
    batches = list(DataLoader(Pairs(), batch_size=2))
    assert len(batches) == 3
    b = batches[0]
    assert b["x"].shape == (2, 3) and b["x"].dtype == np.float32
    assert b["y"].tolist() == [0, 1] and b["y"].dtype == np.int64
    assert b["name"] == ["s0", "s1"]
    out = default_collate([(tg.ones(2), 0.5), (tg.zeros(2), 1.5)])
    assert out[0].tolist() == [[1.0, 1.0], [0.0, 0.0]] and out[1].dtype == np.float32
    with pytest.raises(TypeError, match="pass collate_fn"):
        default_collate([object()])


def test_custom_collate_fn():
    loader = DataLoader(_ds(6), batch_size=4, collate_fn=lambda samples: len(samples))
    assert list(loader) == [4, 2]


def test_loader_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(_ds(), batch_size=0)
    with pytest.raises(TypeError, match="map-style dataset"):
        DataLoader(42)
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        DataLoader(_ds(), shuffle=True, generator=1234)
    with pytest.raises(NotImplementedError, match="must implement __len__"):
        len(Dataset())


def test_random_split_lengths_and_fractions():
    ds = _ds(10)
    a, b = random_split(ds, [7, 3], seed=0)
    assert len(a) == 7 and len(b) == 3
    ids = sorted(int(s[1].item()) for part in (a, b) for s in (part[i] for i in range(len(part))))
    assert ids == list(range(10))
    a2, _ = random_split(ds, [7, 3], seed=0)
    assert a.indices.tolist() == a2.indices.tolist()
    sizes = [len(p) for p in random_split(ds, [0.5, 0.3, 0.2], seed=1)]
    assert sizes == [5, 3, 2]
    sizes = [len(p) for p in random_split(_ds(11), [0.34, 0.33, 0.33], seed=1)]
    assert sizes == [4, 4, 3]
    # a Subset keeps the loader's batch fast path and the pairing
    for x, y in DataLoader(a, batch_size=3, shuffle=True, seed=2):
        np.testing.assert_array_equal(x.numpy()[:, 0], 2 * y.numpy())


def test_random_split_matches_torch_sizes():
    torch = pytest.importorskip("torch")
    for n, fr in [(11, [0.34, 0.33, 0.33]), (7, [0.5, 0.5]), (100, [0.8, 0.1, 0.1])]:
        ours = [len(p) for p in random_split(_ds(n), fr, seed=0)]
        theirs = [len(p) for p in torch.utils.data.random_split(range(n), fr)]
        assert ours == theirs


def test_random_split_errors():
    with pytest.raises(ValueError, match=r"sum to 9 but the dataset has 10"):
        random_split(_ds(10), [5, 4])
    with pytest.raises(ValueError, match="non-negative ints or fractions"):
        random_split(_ds(10), [0.5, 0.6])


def test_pytorch_loader_arguments_are_accepted():
    loader = DataLoader(_ds(4), batch_size=2, num_workers=0, pin_memory=True)
    assert len(list(loader)) == 2
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(_ds(4), num_workers=-1)
