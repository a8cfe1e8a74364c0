"""MegEngine's reductions, sorts and their index results on the facade, against NumPy (the
assertions of upstream's test_math.py that it checks through its trace-dumping helper)."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F

_NAN = np.array([[[1, 2, np.nan, 4], [8, 6, 5, 2], [2, 3, 4, 5]]])
_REDUCTIONS = [
    (F.sum, np.sum),
    (F.prod, np.prod),
    (F.mean, np.mean),
    (F.var, np.var),  # MegEngine's var and std divide by N
    (F.std, np.std),
    (F.min, np.min),
    (F.max, np.max),
]


@pytest.mark.parametrize(("op", "ref"), _REDUCTIONS, ids=lambda f: getattr(f, "__name__", ""))
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_every_axis_against_numpy(op, ref, keepdims):
    rng = np.random.default_rng(0)
    for data in (rng.random((5, 6, 7)).astype(np.float32), _NAN):
        np.testing.assert_allclose(op(mge.tensor(data)).numpy(), ref(data), rtol=1e-5)
        for axis in range(-3, 3):
            got = op(mge.tensor(data), axis=axis, keepdims=keepdims).numpy()
            want = ref(data, axis=axis, keepdims=keepdims)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5)  # NaN where NumPy has NaN


def test_sum_of_negative_axis_tuples_and_a_repeated_axis():
    data = np.random.default_rng(1).random((2, 3)).astype(np.float32)
    for axis in (-1, -2, (-2, 1), (-1, 0)):
        np.testing.assert_allclose(
            F.sum(mge.tensor(data), axis=axis).numpy(), np.sum(data, axis=axis), rtol=1e-6
        )
    with pytest.raises(RuntimeError, match="sum"):  # -1 and 1 are one axis of a 2-D tensor
        F.sum(mge.tensor(data), axis=(-1, 1))


def test_integer_var_and_std_are_float32():
    x = mge.tensor(np.arange(1, 7, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(F.var(x, axis=-2).numpy(), np.float32([2.25] * 3))
    np.testing.assert_array_equal(F.std(x, axis=-2).numpy(), np.float32([1.5] * 3))


def test_argmin_argmax_against_numpy():
    data = np.random.default_rng(2).random((5, 6, 7)).astype(np.float32)
    for op, ref in ((F.argmin, np.argmin), (F.argmax, np.argmax)):
        np.testing.assert_array_equal(op(mge.tensor(data)).numpy(), ref(data))
        for axis in range(-3, 3):
            np.testing.assert_array_equal(
                op(mge.tensor(data), axis=axis).numpy(), ref(data, axis=axis)
            )


def test_sort_argsort_topk_indices_are_int32_mge_tensors():
    data = np.random.default_rng(3).random((4, 6)).astype(np.float32)
    x = mge.tensor(data)
    values, indices = F.sort(x)
    np.testing.assert_array_equal(values.numpy(), np.sort(data, axis=-1))
    np.testing.assert_array_equal(indices.numpy(), np.argsort(data, axis=-1))
    desc = F.argsort(x, descending=True)
    np.testing.assert_array_equal(desc.numpy(), np.argsort(-data, axis=-1))
    top_v, top_i = F.topk(x, 2, descending=True)
    np.testing.assert_array_equal(top_i.numpy(), np.argsort(-data, axis=-1)[:, :2])
    np.testing.assert_array_equal(top_v.numpy(), -np.sort(-data, axis=-1)[:, :2])
    _, kth = F.topk(x, 3, kth_only=True)
    np.testing.assert_array_equal(kth.numpy(), np.argsort(data, axis=-1)[:, 2])
    for out in (values, indices, desc, top_v, top_i, kth):
        assert type(out) is mge.Tensor  # not the core's plain tg.Tensor
    for out in (indices, desc, top_i, kth):
        assert out.dtype == np.int32


def test_sorted_values_carry_the_gradient():
    x64 = tg.tensor(np.random.default_rng(4).random((3, 5)), dtype="float64", requires_grad=True)
    w = tg.tensor(np.arange(5.0), dtype="float64")
    assert tg.autograd.gradcheck(lambda t: (F.sort(t)[0] * w).sum(), (x64,))
