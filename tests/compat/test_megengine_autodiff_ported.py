"""The assertions of MegEngine 1.13's unit/core/test_autodiff.py, on the public API.

Upstream drives its internal `Grad` with `apply(Elemwise(...))`; here the same
computations run through `GradManager` and `F`, and the same values are asserted
(gradients worked out by hand), including which intermediates are freed.
"""

import gc
import weakref

import numpy as np
import pytest

import tapegrad.compat.megengine as mge
import tapegrad.compat.megengine.functional as F
from tapegrad.compat.megengine.autodiff import GradManager


def _grad_of(x, f, dy=None, callbacks=None):
    gm = GradManager().attach(x, callbacks=callbacks)
    with gm:
        y = f(x)
        gm.backward(y, F.ones_like(y) if dy is None else dy)
    return x.grad


@pytest.fixture
def x_np(rng):
    return rng.random(10).astype("float32")


def test_cos_and_fourth_power(x_np):
    np.testing.assert_allclose(_grad_of(mge.Tensor(x_np), F.cos).numpy(), -np.sin(x_np), rtol=1e-6)

    def fourth(x):
        y = x * x
        return y * y

    np.testing.assert_allclose(_grad_of(mge.Tensor(x_np), fourth).numpy(), 4 * x_np**3, rtol=1e-5)


def test_second_derivative_by_nesting(x_np):
    x = mge.Tensor(x_np)
    outer, inner = GradManager().attach(x), GradManager().attach(x)
    with outer:
        with inner:
            inner.backward(F.cos(x), F.ones_like(x))
        z = x.grad
        x.grad = None
        outer.backward(z, F.ones_like(z))
    np.testing.assert_allclose(x.grad.numpy(), -np.cos(x_np), rtol=1e-5)


def test_gradient_of_an_intermediate_attached_while_recording(x_np):
    x = mge.Tensor(x_np)
    seen = {}
    gm = GradManager().attach(x, callbacks=lambda t, g: seen.setdefault("dx", g))
    with gm:
        y = x * x
        gm.attach(y, callbacks=lambda t, g: seen.setdefault("dy", g))
        gm.backward(y * y, F.ones_like(y))
    np.testing.assert_allclose(seen["dx"].numpy(), 4 * x_np**3, rtol=1e-5)
    np.testing.assert_allclose(seen["dy"].numpy(), 2 * x_np**2, rtol=1e-5)


@pytest.mark.parametrize("in_path", [False, True])
def test_a_copy_off_the_path_gets_no_gradient(x_np, in_path):
    x = mge.Tensor(x_np)
    seen = {}
    gm = GradManager()
    if in_path:
        gm.attach(x)
    with gm:
        y = x * x
        gm.attach(mge.Tensor(y.numpy()), callbacks=lambda t, g: seen.setdefault("dy", g))
        gm.backward(y * y, F.ones_like(y))
    assert not seen


def test_repeated_recordings_leave_no_garbage():
    x = mge.Tensor([0.0])

    def count(step):
        gc.collect()
        sizes = []
        for _ in range(8):
            step()
            gc.collect()
            sizes.append(len(gc.get_objects()))
        # a step that leaks keeps at least one object more per step: 4 or more over the
        # last four; another thread of the process (a pytest-xdist channel, a pool) may add
        # one or two of its own meanwhile
        assert sizes[-1] - sizes[-5] < 4, sizes

    gm = GradManager().attach(x)

    def full():
        with gm:
            gm.backward(x * x)

    def empty():
        with gm:
            pass

    def released():
        with gm:
            _ = x * x

    for step in (full, empty, released):
        count(step)


def test_inplace_operator_rebinds_under_a_manager(x_np):
    def f(x):
        y = x * x
        y *= y
        return y

    np.testing.assert_allclose(_grad_of(mge.Tensor(x_np), f).numpy(), 4 * x_np**3, rtol=1e-5)


def test_identity_passes_dy(rng):
    x = mge.Tensor(rng.random(10).astype("float32"))
    dy = rng.random(10).astype("float32")
    np.testing.assert_array_equal(_grad_of(x, F.copy, mge.Tensor(dy)).numpy(), dy)


def test_add_with_broadcast_frees_what_backward_does_not_need(rng):
    x_np, y_np = rng.random(10).astype("float32"), rng.random((10, 10)).astype("float32")
    dz = rng.random((10, 10)).astype("float32")
    x, y = mge.Tensor(x_np), mge.Tensor(y_np)
    refs = {}

    def f(x, y):
        doubled = x * 2
        refs["doubled"], refs["y"] = weakref.ref(doubled), weakref.ref(y)
        return doubled + y

    gm = GradManager().attach(x)
    with gm:
        z = f(x, y)
        del y
        assert all(r() is None for r in refs.values())
        gm.backward(z, mge.Tensor(dz))
    np.testing.assert_allclose(x.grad.numpy(), 2 * dz.sum(0), rtol=1e-5)


def test_relu():
    x = mge.Tensor([1.0, -1.0])
    np.testing.assert_array_equal(_grad_of(x, lambda t: F.relu(t * 2)).numpy(), [2.0, 0.0])


@pytest.mark.parametrize(
    "f, shape, expected",
    [
        (lambda t: (t * 1).reshape(5, 2), (2, 5), np.ones((2, 5))),
        (lambda t: (t * 1)[1:-1, :2], (3, 3), [[0, 0, 0], [1, 1, 0], [0, 0, 0]]),
        (lambda t: (t * 1)[[0, 0, 2, 1], [2, 2, 1, 0]], (3, 3), [[0, 0, 2], [1, 0, 0], [0, 1, 0]]),
        (lambda t: F.squeeze(F.expand_dims(t * 1, 2), 0), (1, 5), np.ones((1, 5))),
        (lambda t: F.broadcast_to(t, (3, 3, 10)), (3, 3, 1), np.full((3, 3, 1), 10.0)),
        (lambda t: t.sum(axis=0), (3, 3), np.ones((3, 3))),
        (lambda t: t.mean(axis=0), (3, 3), np.full((3, 3), 1 / 3)),
        (lambda t: F.expand_dims(t * 1, [2, 3]), (3, 3), np.ones((3, 3))),
        (lambda t: F.squeeze(t * 1, [2, 3]), (3, 3, 1, 1), np.ones((3, 3, 1, 1))),
    ],
    ids=[
        "reshape",
        "subtensor",
        "multi-axis-index",
        "axis-add-remove",
        "broadcast",
        "sum",
        "mean",
        "add-axes",
        "remove-axes",
    ],
)
def test_shape_ops(rng, f, shape, expected):
    x = mge.Tensor(rng.random(shape).astype("float32"))
    np.testing.assert_allclose(_grad_of(x, f).numpy(), expected, rtol=1e-6)


def test_bilinear_halving_spreads_a_quarter(rng):
    x = mge.Tensor(rng.random((3, 3, 32, 32)).astype("float32"))
    grad = _grad_of(x, lambda t: F.vision.interpolate(t, size=(16, 16), mode="bilinear"))
    np.testing.assert_allclose(grad.numpy(), np.full(x.shape, 0.25), rtol=1e-6)


def test_dot_of_matmul(rng):
    x = mge.Tensor(rng.random((2, 2)).astype("float32"))
    u, v = F.ones((2,)), F.ones((2,))
    grad = _grad_of(x, lambda t: F.dot(u, F.matmul(t, v)))
    np.testing.assert_array_equal(grad.numpy(), np.ones((2, 2)))


def test_pixel_shuffle_square(rng):
    x = mge.Tensor(rng.random((2, 3, 16, 3, 4)).astype("float32"))
    grad = _grad_of(x, lambda t: F.pixel_shuffle(t, 2) * F.pixel_shuffle(t, 2))
    np.testing.assert_allclose(grad.numpy(), 2 * x.numpy(), rtol=1e-6)


_MATMUL_CASES = [
    (xd, yd, ta, tb)
    for xd in (1, 2, 3, 4)
    for yd in (1, 2, 3, 4)
    for ta in (False, True)
    for tb in (False, True)
    if not (xd == 1 and ta) and not (yd == 1 and tb)
]  # a vector: no transpose


@pytest.mark.parametrize("xdim, ydim, ta, tb", _MATMUL_CASES)
def test_matmul(rng, xdim, ydim, ta, tb):
    xs = (1, 4) if xdim == 1 else (2,) * (xdim - 2) + (3, 4)
    ys = (4, 1) if ydim == 1 else (2,) * (ydim - 2) + (4, 5)
    a, b = rng.random(xs), rng.random(ys)
    g = rng.random((a @ b).shape)
    da, db = g @ np.swapaxes(b, -1, -2), np.swapaxes(a, -1, -2) @ g
    while da.shape != a.shape:
        da = da.sum(0)
    while db.shape != b.shape:
        db = db.sum(0)
    if ta:
        a, da = np.swapaxes(a, -1, -2), np.swapaxes(da, -1, -2)
    if tb:
        b, db = np.swapaxes(b, -1, -2), np.swapaxes(db, -1, -2)
    x = mge.Tensor(a.squeeze(), dtype="float64")
    y = mge.Tensor(b.squeeze(), dtype="float64")
    gm = GradManager().attach([x, y])
    with gm:
        z = F.matmul(x, y, transpose_a=ta, transpose_b=tb)
        gm.backward(z, mge.Tensor(g.squeeze(), dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), da.squeeze(), rtol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), db.squeeze(), rtol=1e-10)


def test_indexing_one_hot():
    x = mge.Tensor([[1.0, 2.0]])
    grad = _grad_of(x, lambda t: F.indexing_one_hot(t, mge.Tensor([0]), -1))
    np.testing.assert_array_equal(grad.numpy(), [[1.0, 0.0]])
