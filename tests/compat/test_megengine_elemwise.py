"""M.Elemwise's modes and the facade's elementwise comparisons, against NumPy."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
import tapegrad.compat.megengine.module as M

_X = np.array([0.5, 2.0, -1.5, 2.5], dtype=np.float32)
_Y = np.array([0.5, 1.0, 2.0, -2.0], dtype=np.float32)
_Z = np.array([1.0, -1.0, 0.25, 2.0], dtype=np.float32)


def _hswish(x):
    return x * np.clip(x + 3, 0, 6) / 6


@pytest.mark.parametrize(
    ("mode", "ref"),
    [
        ("add", lambda x, y: x + y),
        ("SUB", lambda x, y: x - y),
        ("mul", lambda x, y: x * y),
        ("true_div", lambda x, y: x / y),
        ("max", np.maximum),
        ("min", np.minimum),
        ("negate", lambda x: -x),
        ("exp", np.exp),
        ("relu", lambda x: np.maximum(x, 0)),
        ("h_swish", _hswish),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        ("lt", np.less),
        ("leq", np.less_equal),
        ("eq", np.equal),
        ("fuse_add_relu", lambda x, y: np.maximum(x + y, 0)),
        ("fuse_add_tanh", lambda x, y: np.tanh(x + y)),
        ("fuse_mul_add3", lambda x, y, z: x * y + z),
    ],
)
def test_elemwise_modes_against_numpy(mode, ref):
    n = ref.__code__.co_argcount if hasattr(ref, "__code__") else ref.nin
    args = (_X, _Y, _Z)[:n]
    got = M.Elemwise(mode)(*(mge.tensor(a) for a in args)).numpy()
    np.testing.assert_allclose(got, ref(*args), rtol=1e-6)


def test_elemwise_unknown_mode_names_the_choices():
    with pytest.raises(ValueError, match="Elemwise: mode 'nope'.*fuse_add_relu"):
        M.Elemwise("nope")


def test_elemwise_gradient_by_finite_differences():
    x = tg.tensor(_X.astype(np.float64), requires_grad=True)
    y = tg.tensor(_Y.astype(np.float64) + 0.1, requires_grad=True)  # away from relu's kink
    assert tg.autograd.gradcheck(lambda a, b: M.Elemwise("fuse_add_relu")(a, b).sum(), (x, y))
    assert tg.autograd.gradcheck(lambda a: M.Elemwise("h_swish")(a).sum(), (x,))


def test_comparisons_are_elementwise():
    # F.equal once mapped to tg.equal (PyTorch's torch.equal: one bool for the whole tensor)
    x, y = mge.tensor(_X), mge.tensor(np.where(_X > 1, _X, _Y))
    for op, ref in (
        (F.equal, np.equal),
        (F.not_equal, np.not_equal),
        (F.less, np.less),
        (F.less_equal, np.less_equal),
        (F.greater, np.greater),
        (F.greater_equal, np.greater_equal),
    ):
        out = op(x, y)
        assert type(out) is mge.Tensor and out.dtype == np.bool_
        np.testing.assert_array_equal(out.numpy(), ref(_X, y.numpy()))


def test_round_takes_halves_away_from_zero():
    # MegEngine's documented examples: round(1.5) = 2, round([1.5, 2.5, 3.5, 4.5]) = [2, 3, 4,
    # 5]; NumPy's and PyTorch's round go to the even neighbour (2.5 -> 2)
    x = np.array([1.5, 2.5, 3.5, 4.5, -0.5, -2.5, 0.49999997, -1.2, 7.0], dtype=np.float32)
    want = np.sign(x) * np.floor(np.abs(x.astype(np.float64)) + 0.5)
    np.testing.assert_array_equal(F.round(mge.tensor(x)).numpy(), want.astype(np.float32))
    np.testing.assert_array_equal(F.round(mge.tensor(x)).numpy()[:4], [2, 3, 4, 5])
    np.testing.assert_array_equal(F.round(mge.tensor([3, -4])).numpy(), [3, -4])  # ints as-is
    assert F.round(mge.tensor(x)).dtype == np.float32


def test_elemwise_names_take_python_numbers_and_match_numpy():
    np.testing.assert_allclose(F.abs(-3.0).numpy(), 3.0)
    np.testing.assert_allclose(F.mul(-3.0, -4.0).numpy(), 12.0)
    np.testing.assert_allclose(F.mul(4.0, mge.tensor([3.0, 4.0])).numpy(), [12.0, 16.0])
    x = np.random.default_rng(0).uniform(-0.9, 0.9, 20).astype(np.float32)
    y = np.random.default_rng(1).uniform(0.5, 3.0, 20).astype(np.float32)
    for name, ref in (
        ("acos", np.arccos),
        ("asin", np.arcsin),
        ("atan", np.arctan),
        ("asinh", np.arcsinh),
        ("atanh", np.arctanh),
        ("sinh", np.sinh),
        ("cosh", np.cosh),
        ("expm1", np.expm1),
        ("log1p", np.log1p),
    ):
        np.testing.assert_allclose(getattr(F, name)(mge.tensor(x)).numpy(), ref(x), rtol=2e-6)
    np.testing.assert_allclose(F.acosh(mge.tensor(y + 1)).numpy(), np.arccosh(y + 1), rtol=2e-6)
    np.testing.assert_allclose(F.atan2(mge.tensor(x), mge.tensor(y)).numpy(), np.arctan2(x, y))
    np.testing.assert_allclose(
        F.logaddexp(mge.tensor(x), mge.tensor(y)).numpy(), np.logaddexp(x, y), rtol=1e-6
    )
    a, b = np.array([True, False, True]), np.array([True, True, False])
    np.testing.assert_array_equal(F.logical_xor(mge.tensor(a), mge.tensor(b)).numpy(), a ^ b)
    ints = np.array([-7, -1, 0, 5, 12], dtype=np.int32)
    np.testing.assert_array_equal(F.left_shift(mge.tensor(ints), 2).numpy(), ints << 2)
    np.testing.assert_array_equal(F.right_shift(mge.tensor(ints), 1).numpy(), ints >> 1)
    with pytest.raises(TypeError, match="left_shift"):
        F.left_shift(mge.tensor([1.0]), 1)


def test_elemwise_gradients_by_finite_differences():
    x = tg.tensor(np.random.default_rng(2).uniform(-0.8, 0.8, 5), requires_grad=True)
    y = tg.tensor(np.random.default_rng(3).uniform(0.5, 2.0, 5), requires_grad=True)
    for fn in (F.acos, F.asinh, F.atanh, F.sinh, F.cosh, F.expm1, F.log1p):
        assert tg.autograd.gradcheck(lambda t, f=fn: f(t).sum(), (x,)), fn.__name__
    assert tg.autograd.gradcheck(lambda a, b: F.logaddexp(a, b).sum(), (x, y))
    assert tg.autograd.gradcheck(lambda a, b: F.atan2(a, b).sum(), (x, y))
