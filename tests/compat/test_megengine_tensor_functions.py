"""F.split's and F.full's MegEngine rules (upstream test_tensor.py's assertions), against
NumPy."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F


def test_split_into_a_count_of_uneven_parts():
    data = np.random.default_rng(0).random((10, 20)).astype(np.float32)
    x = mge.tensor(data)
    parts = F.split(x, 3, axis=-1)
    assert [p.shape for p in parts] == [(10, 7), (10, 7), (10, 6)]  # upstream's expectation
    for n, axis in ((3, -1), (4, 0), (7, 1), (2, 1)):
        got = F.split(x, n, axis=axis)
        want = np.array_split(data, n, axis=axis)  # the first size % n parts one longer
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    bounds = F.split(x, [6, 17], axis=-1)
    for g, w in zip(bounds, np.split(data, [6, 17], axis=-1)):
        np.testing.assert_array_equal(g.numpy(), w)


def test_split_refuses_bad_counts_and_decreasing_points():
    x = mge.tensor(np.zeros((2, 3, 4, 5), dtype=np.float32))
    with pytest.raises(ValueError, match="cannot be split into 4"):
        F.split(x, 4)  # axis 0 has 2
    with pytest.raises(ValueError, match="larger than 0"):
        F.split(x, 0)
    with pytest.raises(ValueError, match=r"Invalid nsplits_or_secions: \[3, 2, 5\]"):
        F.split(x, [3, 2, 5], axis=3)


def test_split_gradient_by_finite_differences():
    x = tg.tensor(np.random.default_rng(1).random((5, 4)), requires_grad=True)

    def f(t):
        a, b, c = F.split(t, 3, axis=0)  # rows 2, 2, 1
        return (a * 1.0).sum() + (b * 2.0).sum() + (c * 3.0).sum()

    assert tg.autograd.gradcheck(f, (x,))
    f(x).backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [1, 1, 2, 2, 3])


@pytest.mark.parametrize(("value", "dtype"), [(True, np.bool_), (4, np.int32), (5.0, np.float32)])
def test_full_takes_the_values_dtype(value, dtype):
    out = F.full((2, 3), value)
    assert out.dtype == dtype == mge.tensor(value).dtype
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), value))
    assert F.full((2,), 4, dtype="float32").dtype == np.float32  # an explicit dtype wins


def test_roll_swapaxes_diag_eye_tile_broadcast_to_against_numpy():
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = mge.tensor(data)
    np.testing.assert_array_equal(F.roll(x, 5).numpy(), np.roll(data, 5))
    np.testing.assert_array_equal(F.roll(x, -1, axis=2).numpy(), np.roll(data, -1, axis=2))
    np.testing.assert_array_equal(
        F.roll(x, (1, -2), axis=(0, 2)).numpy(), np.roll(data, (1, -2), axis=(0, 2))
    )
    np.testing.assert_array_equal(F.swapaxes(x, 0, 2).numpy(), np.swapaxes(data, 0, 2))
    m = data[0]
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(F.diag(mge.tensor(m), k=k).numpy(), np.diag(m, k))
        v = np.arange(3, dtype=np.float32)
        np.testing.assert_array_equal(F.diag(mge.tensor(v), k=k).numpy(), np.diag(v, k))
    np.testing.assert_array_equal(F.eye(3).numpy(), np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(F.eye(2, 4).numpy(), np.eye(2, 4))
    np.testing.assert_array_equal(F.eye((3, 2)).numpy(), np.eye(3, 2))
    assert F.eye(2, dtype="int32").dtype == np.int32 and type(F.eye(2)) is mge.Tensor
    np.testing.assert_array_equal(F.tile(x, (2, 1, 3)).numpy(), np.tile(data, (2, 1, 3)))
    np.testing.assert_array_equal(
        F.broadcast_to(mge.tensor(m[:1]), shape=(5, 4)).numpy(), np.broadcast_to(m[:1], (5, 4))
    )


def test_roll_gradient_by_finite_differences():
    x = tg.tensor(np.random.default_rng(2).random((3, 4)), requires_grad=True)
    w = tg.tensor(np.arange(12.0).reshape(3, 4))
    assert tg.autograd.gradcheck(lambda t: (F.roll(t, (1, 3), axis=(0, 1)) * w).sum(), (x,))
    assert tg.autograd.gradcheck(lambda t: (F.swapaxes(t, 0, 1) * w.T).sum(), (x,))
