"""The groups-1 conv forward in blocks of samples (ops/conv.py `_sample_blocks_forward`):
window rows per sample and per-sample GEMMs into the result. Its values against the
channel-major GEMM it replaced, against PyTorch, and by finite differences."""

from __future__ import annotations

from math import prod

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.nn import functional as F
from tapegrad.ops import conv


def _channel_major_forward(x, w, b, stride, padding, dilation):
    """The channel-major im2col + one GEMM per block (the path groups-1 convs took before)."""
    kernel = w.shape[2:]
    n, o = x.shape[0], w.shape[0]
    view, out_sizes = conv._window_matrix(np, x, kernel, stride, padding, dilation)
    out = np.empty((n, o) + tuple(out_sizes), dtype=x.dtype)
    wm = w.reshape(1, o, -1)
    for lo, hi in conv._batch_blocks(n, x.shape[1] * prod(kernel) * prod(out_sizes) * 4):
        res = conv._gemm(np, wm, conv._cols_block(np, view, lo, hi, 1))
        conv._from_acc(np, res.reshape((o, hi - lo) + tuple(out_sizes)), b, out[lo:hi])
    return out


# (x shape, w shape, stride, padding, dilation): W3's conv2, odd sizes, strides, dilation,
# asymmetric padding, 1-D and 3-D, an output of one position
_CASES = [
    ((64, 16, 14, 14), (32, 16, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((5, 8, 9, 7), (6, 8, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((3, 8, 11, 10), (4, 8, 3, 2), (2, 1), ((1, 0), (0, 2)), (1, 2)),
    ((4, 9, 13), (5, 9, 5), (2,), ((2, 1),), (1,)),
    ((2, 4, 5, 6, 5), (3, 4, 2, 3, 2), (1, 2, 1), ((1, 0), (0, 1), (1, 1)), (1, 1, 1)),
    ((3, 16, 3, 3), (8, 16, 3, 3), (1, 1), ((0, 0), (0, 0)), (1, 1)),
]


@pytest.mark.parametrize("block_bytes", [conv._BLOCK_BYTES, 4096])
@pytest.mark.parametrize("xs, ws, stride, padding, dilation", _CASES)
def test_matches_the_channel_major_gemm(xs, ws, stride, padding, dilation, block_bytes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    old = _channel_major_forward(x, w, b, stride, padding, dilation)
    conv_blocks, conv._BLOCK_BYTES = conv._BLOCK_BYTES, block_bytes  # 4096: many blocks
    try:
        new = conv._sample_blocks_forward(np, x, w, b, ws[2:], stride, padding, dilation)
        into = np.full_like(new, np.nan)
        again = conv._sample_blocks_forward(np, x, w, b, ws[2:], stride, padding, dilation, into)
    finally:
        conv._BLOCK_BYTES = conv_blocks
    assert new.dtype == np.float32 and new.flags.c_contiguous
    np.testing.assert_allclose(new, old, rtol=1e-5, atol=1e-5 * np.abs(old).max())
    assert again is into
    np.testing.assert_array_equal(again, new)


def test_w3_conv2_float32_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    w = (rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    got = F.conv2d(tg.tensor(x), tg.tensor(w), tg.tensor(b), padding=1).numpy()
    want = torch.nn.functional.conv2d(
        torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), padding=1
    ).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "kw", [dict(padding=1), dict(stride=2, padding=(0, 1)), dict(dilation=2, padding=2)]
)
def test_strided_dilated_forms_match_torch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 8, 9, 8)).astype(np.float32)
    w = rng.standard_normal((5, 8, 3, 3)).astype(np.float32)
    got = F.conv2d(tg.tensor(x), tg.tensor(w), **kw).numpy()
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kw).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_finite_differences_float64():
    rng = np.random.default_rng(4)
    x = tg.tensor(rng.standard_normal((3, 5, 5, 4)), requires_grad=True)  # 45 window rows
    w = tg.tensor(rng.standard_normal((2, 5, 3, 3)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(2), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, stride=(1, 2), padding=1)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(fn, (x, w, b))


def test_nan_and_inf_stay_where_the_gemm_puts_them():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 8, 5, 5)).astype(np.float32)
    x[0, 3, 2, 2] = np.nan
    x[1, 0, 0, 4] = np.inf
    w = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    p = ((1, 1), (1, 1))
    new = conv._sample_blocks_forward(np, x, w, None, (3, 3), (1, 1), p, (1, 1))
    old = _channel_major_forward(x, w, None, (1, 1), p, (1, 1))
    np.testing.assert_array_equal(np.isnan(new), np.isnan(old))
    np.testing.assert_array_equal(np.isinf(new), np.isinf(old))
    finite = np.isfinite(old)
    np.testing.assert_allclose(new[finite], old[finite], rtol=1e-5, atol=1e-5)


def test_empty_batch():
    x = np.zeros((0, 8, 5, 5), np.float32)
    w = np.ones((3, 8, 3, 3), np.float32)
    out = conv._sample_blocks_forward(np, x, w, None, (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1))
    assert out.shape == (0, 3, 5, 5)
