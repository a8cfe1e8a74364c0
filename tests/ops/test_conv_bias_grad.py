"""A conv's bias gradient (ops/conv.py `_bias_grad`): g summed over the batch and the
positions, by matrix-vector products on contiguous float NumPy arrays, `sum` otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.nn import functional as F
from tapegrad.ops import conv
from tapegrad.ops.xp import array_ns

_NS = array_ns(np)


@pytest.mark.parametrize(
    "shape", [(64, 16, 28, 28), (64, 32, 14, 14), (3, 5, 7), (2, 3, 4, 5, 6), (1, 1, 1, 1)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_equals_the_sum_to_rounding(shape, dtype):
    g = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got = conv._bias_grad(_NS, g)
    want = g.astype(np.float64).sum(axis=(0,) + tuple(range(2, g.ndim)))
    assert got.dtype == dtype and got.shape == (shape[1],)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.sqrt(g.size))


def test_other_layouts_and_dtypes_take_the_sum():
    rng = np.random.default_rng(1)
    strided = rng.standard_normal((4, 6, 5, 5))[:, ::2]
    half = rng.standard_normal((2, 3, 4, 4)).astype(np.float16)
    broadcast = np.broadcast_to(np.float32(2.0), (3, 2, 4, 4))
    for g in (strided, half, broadcast):
        np.testing.assert_array_equal(conv._bias_grad(_NS, g), g.sum(axis=(0, 2, 3)))
    empty = np.zeros((0, 3, 4, 4), np.float32)
    np.testing.assert_array_equal(conv._bias_grad(_NS, empty), np.zeros(3, np.float32))


def test_nan_and_inf_propagate_as_in_the_sum():
    g = np.ones((2, 4, 3, 3), np.float32)
    g[0, 1, 0, 0] = np.nan
    g[1, 2, 1, 1] = np.inf
    g[0, 3, 0, 0], g[1, 3, 2, 2] = np.inf, -np.inf
    with np.errstate(invalid="ignore"):  # inf - inf (backward runs rules so, engine/)
        got, want = conv._bias_grad(_NS, g), g.sum(axis=(0, 2, 3))
    np.testing.assert_array_equal(got, want)  # [18, nan, inf, nan]


def test_bias_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    w = (rng.standard_normal((16, 1, 3, 3)) * 0.1).astype(np.float32)
    b = np.zeros(16, np.float32)
    g = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    bt = tg.tensor(b, requires_grad=True)
    F.conv2d(tg.tensor(x), tg.tensor(w), bt, padding=1).backward(tg.tensor(g))
    bp = torch.tensor(b, requires_grad=True)
    tf = torch.nn.functional
    tf.conv2d(torch.from_numpy(x), torch.from_numpy(w), bp, padding=1).backward(torch.from_numpy(g))
    np.testing.assert_allclose(bt.grad.numpy(), bp.grad.numpy(), rtol=1e-4, atol=1e-3)
