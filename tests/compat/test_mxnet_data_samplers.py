"""mx.gluon.data: samplers, the Dataset methods (filter, shard, take, sample), DataLoader's
sampler / batch_sampler / last_batch, and Block.save / Block.load."""

from __future__ import annotations

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx

data = mx.gluon.data


def test_samplers_give_the_documented_indices():
    assert list(data.SequentialSampler(4, start=2)) == [2, 3, 4, 5]
    mx.random.seed(0)
    order = list(data.RandomSampler(10))
    assert sorted(order) == list(range(10)) and order != list(range(10))
    assert list(data.IntervalSampler(7, 3)) == [0, 3, 6, 1, 4, 2, 5]
    assert list(data.IntervalSampler(7, 3, rollover=False)) == [0, 3, 6]
    seq = data.SequentialSampler(7)
    assert list(data.BatchSampler(seq, 3, "keep")) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(data.BatchSampler(seq, 3, "discard")) == [[0, 1, 2], [3, 4, 5]]
    roll = data.BatchSampler(seq, 3, "rollover")
    assert list(roll) == [[0, 1, 2], [3, 4, 5]]
    assert list(roll) == [[6, 0, 1], [2, 3, 4]]  # the left-over index starts the next epoch
    assert len(data.BatchSampler(seq, 3, "keep")) == 3
    with pytest.raises(ValueError, match="last_batch must be one of"):
        data.BatchSampler(seq, 3, "drop")


def test_dataset_filter_shard_take_sample():
    ds = data.SimpleDataset(list(range(10)))
    assert list(ds.filter(lambda x: x % 4 == 0)) == [0, 4, 8]
    assert list(ds.transform(lambda x: x * 3).filter(lambda x: x % 2 == 0)) == [0, 6, 12, 18, 24]
    shards = [list(ds.shard(4, i)) for i in range(4)]
    assert shards == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert list(ds.take(3)) == [0, 1, 2] and len(ds.take(None)) == 10 and len(ds.take(99)) == 10
    assert list(ds.sample(data.IntervalSampler(10, 5))) == [0, 5, 1, 6, 2, 7, 3, 8, 4, 9]
    with pytest.raises(ValueError, match="index must be in 0..3"):
        ds.shard(4, 4)


def test_dataloader_takes_samplers_and_refuses_conflicting_arguments():
    ds = data.ArrayDataset(np.arange(6, dtype=np.float32))
    batches = [b.asnumpy().tolist() for b in data.DataLoader(ds, 4, last_batch="discard")]
    assert batches == [[0, 1, 2, 3]]
    rev = data.DataLoader(ds, batch_size=2, sampler=[5, 4, 3, 2, 1, 0])
    assert [b.asnumpy().tolist() for b in rev] == [[5, 4], [3, 2], [1, 0]]
    pairs = data.DataLoader(ds, batch_sampler=[[0, 5], [1, 4]])
    assert [b.asnumpy().tolist() for b in pairs] == [[0, 5], [1, 4]]
    with pytest.raises(ValueError, match="must not be given together with batch_sampler"):
        data.DataLoader(ds, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="shuffle must not be given together with sampler"):
        data.DataLoader(ds, batch_size=2, shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="batch_size must be given"):
        data.DataLoader(ds)


def _net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(2))
    return net


def test_block_save_and_load_by_structure(tmp_path):
    net = _net()
    net.initialize()
    x = mx.nd.random.normal(shape=(3, 5))
    expected = net(x).asnumpy()
    net.save(str(tmp_path / "m"))
    other = _net()  # other names (dense2_, dense3_), never initialized
    other.load(str(tmp_path / "m"))
    np.testing.assert_allclose(other(x).asnumpy(), expected)
    different = mx.gluon.nn.HybridSequential()
    different.add(mx.gluon.nn.Dense(4))
    with pytest.raises(ValueError, match=r"saved HybridSequential\(Dense, Dense\)"):
        different.load(str(tmp_path / "m"))
