"""The MegEngine facade's datasets: abstract Dataset / StreamDataset, ConcatDataset's
indexing against the concatenated arrays."""

import numpy as np
import pytest

from tapegrad.compat.megengine import data
from tapegrad.compat.megengine.data.dataset import ArrayDataset, ConcatDataset


def test_dataset_and_stream_dataset_are_abstract():
    with pytest.raises(TypeError):
        data.Dataset()
    with pytest.raises(TypeError):
        data.StreamDataset()

    class Half(data.Dataset):  # only __getitem__: still abstract
        def __getitem__(self, i):
            return (i,)

    with pytest.raises(TypeError):
        Half()


def test_concat_dataset_indexes_like_the_concatenated_arrays():
    rng = np.random.default_rng(0)
    parts = [rng.random((n, 2)) for n in (3, 1, 4)]
    labels = [np.arange(n) + 10 * k for k, n in enumerate((3, 1, 4))]
    ds = ConcatDataset([ArrayDataset(x, y) for x, y in zip(parts, labels)])
    whole_x, whole_y = np.concatenate(parts), np.concatenate(labels)
    assert len(ds) == len(whole_x) == 8
    for i in range(-8, 8):
        x, y = ds[i]
        np.testing.assert_array_equal(x, whole_x[i])
        assert y == whole_y[i]
    with pytest.raises(IndexError, match="ConcatDataset"):
        ds[8]
    batch = next(iter(data.DataLoader(ds, data.SequentialSampler(ds, batch_size=8))))
    np.testing.assert_array_equal(batch[1], whole_y)


def test_concat_dataset_refuses_streams_and_nothing():
    class Stream(data.StreamDataset):
        def __iter__(self):
            yield (0,)

    with pytest.raises(TypeError, match="StreamDataset"):
        ConcatDataset([Stream()])
    with pytest.raises(ValueError, match="at least one"):
        ConcatDataset([])
