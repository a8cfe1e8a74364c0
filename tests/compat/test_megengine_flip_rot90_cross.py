"""MegEngine 1.13's `F.vision.flip(inp, vertical, horizontal)` and
`F.vision.rot90(inp, clockwise)` (NHWC images) and `F.cross(a, b, axisa, axisb, axisc,
axis)`: values against NumPy's flip / rot90 / cross, gradients by finite differences in
float64, and errors that say what to do."""

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F

RNG = np.random.default_rng(5)


def _gradcheck(fn, *arrays):
    inputs = tuple(tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays)
    assert tg.autograd.gradcheck(lambda *xs: fn(*xs), inputs)


@pytest.mark.parametrize(
    ("vertical", "horizontal", "axes"),
    [(True, True, (1, 2)), (True, False, (1,)), (False, True, (2,)), (False, False, ())],
)
def test_flip_matches_numpy(vertical, horizontal, axes):
    x = RNG.standard_normal((2, 3, 4, 2)).astype(np.float32)
    got = F.vision.flip(mge.tensor(x), vertical=vertical, horizontal=horizontal)
    assert isinstance(got, mge.Tensor)
    np.testing.assert_array_equal(got.numpy(), np.flip(x, axes) if axes else x)
    _gradcheck(lambda t: F.vision.flip(t, vertical, horizontal) * t.sin(), x.astype(np.float64))


@pytest.mark.parametrize(("clockwise", "k"), [(True, -1), (False, 1)])
def test_rot90_matches_numpy(clockwise, k):
    x = RNG.standard_normal((2, 3, 4, 2)).astype(np.float32)  # H != W: the result is NWHC
    got = F.vision.rot90(mge.tensor(x), clockwise=clockwise)
    assert got.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(got.numpy(), np.rot90(x, k, axes=(1, 2)))
    w = RNG.standard_normal((2, 4, 3, 2))
    _gradcheck(lambda t: (F.vision.rot90(t, clockwise) * tg.tensor(w)).tanh(), x.astype(float))


def test_megengine_docstring_examples():
    x = mge.tensor(np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1))
    assert F.vision.flip(x).numpy().ravel().tolist() == [3, 2, 1, 0]
    assert F.vision.rot90(x).numpy().ravel().tolist() == [2, 0, 3, 1]
    out = F.cross(mge.tensor([1.0, 2.0, 3.0]), mge.tensor([4.0, 5.0, 6.0]))
    assert out.numpy().tolist() == [-3.0, 6.0, -3.0]


@pytest.mark.parametrize(
    ("sa", "sb", "kw"),
    [
        ((4, 3), (4, 3), {}),
        ((3, 5), (5, 3), {"axisa": 0, "axisb": 1, "axisc": 0}),
        ((2, 3, 4), (3, 4), {"axis": -2}),
        ((2, 1, 3), (5, 3), {"axisc": 0}),
        ((3,), (2, 3), {"axisc": -2}),
    ],
)
def test_cross_matches_numpy(sa, sb, kw):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    got = F.cross(mge.tensor(a, dtype="float64"), mge.tensor(b, dtype="float64"), **kw)
    np.testing.assert_allclose(got.numpy(), np.cross(a, b, **kw), rtol=1e-12, atol=1e-14)
    _gradcheck(lambda x, y: F.cross(x, y, **kw), a, b)


def test_cross_pads_a_one_dimensional_two_vector():
    a, b = np.array([1.0, 2.0]), np.array([4.0, 5.0, 6.0])
    got = F.cross(mge.tensor(a), mge.tensor(b))
    np.testing.assert_allclose(got.numpy(), np.cross([1.0, 2.0, 0.0], b), rtol=1e-6)
    _gradcheck(F.cross, a, b)


def test_errors_name_the_function_and_the_fix():
    with pytest.raises(ValueError, match=r"F\.vision\.flip: expected a 4-D NHWC.*x\[None\]"):
        F.vision.flip(mge.tensor(np.ones((2, 2, 1))))
    with pytest.raises(ValueError, match=r"F\.vision\.rot90: expected a 4-D NHWC"):
        F.vision.rot90(mge.tensor(np.ones((2, 2))))
    with pytest.raises(ValueError, match=r"F\.cross: a has 4 components.*need 3"):
        F.cross(mge.tensor(np.ones((2, 4))), mge.tensor(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"F\.cross: axisb=2 is out of range"):
        F.cross(mge.tensor(np.ones(3)), mge.tensor(np.ones((2, 3))), axisb=2)
    with pytest.raises(ValueError, match=r"F\.cross: the shapes \(2,\) and \(4,\).*broadcast"):
        F.cross(mge.tensor(np.ones((2, 3))), mge.tensor(np.ones((4, 3))))
    with pytest.raises(ValueError, match=r"F\.cross: axisc=3 is out of range"):
        F.cross(mge.tensor(np.ones(3)), mge.tensor(np.ones(3)), axisc=3)
