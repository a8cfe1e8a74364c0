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
