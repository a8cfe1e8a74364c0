"""t.new_tensor / new_zeros / new_ones / new_empty / new_full and where(condition) alone,
as PyTorch defines them."""

import numpy as np
import pytest

import tapegrad as tg


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_new_constructors_take_this_tensors_dtype(torch, dtype):
    ours, theirs = tg.ones(2, dtype=dtype), torch.ones(2, dtype=getattr(torch, dtype))
    cases = [
        lambda t: t.new_tensor([1, 2, 3]),
        lambda t: t.new_zeros(2, 3),
        lambda t: t.new_zeros((2, 3)),
        lambda t: t.new_ones(4),
        lambda t: t.new_full((2,), 7),
        lambda t: t.new_empty(3, 1),
    ]
    for make in cases:
        a, b = make(ours), make(theirs)
        assert a.shape == tuple(b.shape) and a.dtype == b.numpy().dtype
        if make is not cases[-1]:
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_new_constructors_take_dtype_and_requires_grad():
    t = tg.ones(2)
    z = t.new_zeros(3, dtype=tg.float64, requires_grad=True)
    assert z.dtype == np.float64 and z.requires_grad and z.is_leaf
    assert t.new_tensor([1, 2], dtype=tg.int64).dtype == np.int64


def test_where_with_a_condition_alone_gives_the_indices(torch):
    cond = np.array([[True, False, True], [False, True, False]])
    ours, theirs = tg.where(tg.tensor(cond)), torch.where(torch.tensor(cond))
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(tg.where(cond)[1].numpy(), [0, 2, 1])
    with pytest.raises(TypeError, match="condition alone"):
        tg.where(tg.tensor(cond), tg.ones(2, 3))
