"""Max pooling's backward over tiling windows (ops/pool.py `_tiled_max_pool_backward`), whose
last stage scatters into the result itself: every window's gradient at its first maximum in
row-major order, exact zeros elsewhere and in a remainder no window covers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck
from tapegrad.nn import functional as F
from tapegrad.ops import parallel, pool


def _first_max_scatter(g, x, kernel):
    """Window by window: g to the first maximum (row-major), by a Python loop."""
    dx = np.zeros(x.shape, dtype=g.dtype)
    for idx in itertools.product(*(range(s) for s in g.shape)):
        n, c, *o = idx
        box = tuple(slice(i * k, (i + 1) * k) for i, k in zip(o, kernel, strict=True))
        window = x[(n, c) + box]
        at = np.unravel_index(int(np.argmax(window)), window.shape)
        dx[(n, c) + tuple(i * k + a for i, k, a in zip(o, kernel, at, strict=True))] = g[idx]
    return dx


@pytest.mark.parametrize(
    "shape, kernel",
    [
        ((2, 3, 8, 6), (2, 2)),
        ((2, 2, 7, 9), (2, 2)),  # a remainder row and column
        ((1, 2, 9, 8), (3, 2)),
        ((3, 2, 11), (2,)),
        ((1, 2, 4, 5, 6), (2, 2, 3)),
        ((2, 2, 6, 4), (1, 2)),
    ],
)
def test_matches_a_first_maximum_loop(shape, kernel):
    rng = np.random.default_rng(0)
    # small integers: many ties inside windows, so the first-maximum rule is what is tested
    x = rng.integers(-2, 3, shape).astype(np.float32)
    x.flat[:3] = -np.inf
    out_shape = shape[:2] + tuple(s // k for s, k in zip(shape[2:], kernel, strict=True))
    g = rng.standard_normal(out_shape).astype(np.float32)
    dx = pool._tiled_max_pool_backward(np, g, x, kernel)
    want = _first_max_scatter(g, x, kernel)
    np.testing.assert_array_equal(dx, want)
    assert dx.dtype == np.float32 and dx.flags.c_contiguous


def test_a_batch_cut_into_slices_is_bitwise_the_whole(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, (7, 3, 9, 10)).astype(np.float64)
    g = rng.standard_normal((7, 3, 4, 5))
    whole = pool._tiled_max_pool_backward(np, g, x, (2, 2))
    chunks = []

    def cut(xp, n, body, elements):  # as the intra-op threads would: 3 slices of the batch
        bounds = np.linspace(0, n, 4).astype(int)
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            chunks.append((lo, hi))
            body(lo, hi)

    monkeypatch.setattr(parallel, "for_slices", cut)
    got = pool._tiled_max_pool_backward(np, g, x, (2, 2))
    assert len(chunks) == 3
    np.testing.assert_array_equal(got, whole)


def test_nan_windows_take_the_general_path_and_match_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    x[0, 0, 0, 1] = np.nan
    x[0, 1, 3, 2] = np.nan
    assert pool._tiled_max_pool_backward(np, np.ones((1, 2, 2, 2), np.float32), x, (2, 2)) is None
    xt = tg.tensor(x, requires_grad=True)
    F.max_pool2d(xt, 2).sum().backward()
    tt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tt, 2).sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), tt.grad.numpy())


def test_w3_sized_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    g = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    xt = tg.tensor(x, requires_grad=True)
    F.max_pool2d(xt, 2).backward(tg.tensor(g))
    tt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(tt, 2).backward(torch.from_numpy(g))
    np.testing.assert_array_equal(xt.grad.numpy(), tt.grad.numpy())


def test_finite_differences_float64():
    rng = np.random.default_rng(3)
    # distinct values (a permutation): no ties, so the max is differentiable everywhere
    x = tg.tensor(rng.permutation(2 * 2 * 5 * 7).reshape(2, 2, 5, 7) / 7.0, requires_grad=True)
    assert gradcheck(lambda x: F.max_pool2d(x, 2), (x,))
