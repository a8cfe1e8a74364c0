"""The stride-1 transposed conv's flat grid (ops/conv.py `_flat_transpose`) on its tight
plane (`_tight_plane`): products that run past a row's (or a sample's) end land on cropped
positions only, in blocks of any number of samples."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tapegrad.ops import conv


def _scatter_reference(y, w, padding, dilation, out_shape):
    """Transposed conv at stride 1 by scattering every kernel offset (float64)."""
    n, cin = y.shape[:2]
    kernel = w.shape[2:]
    cout = w.shape[1]
    full = tuple(
        max(s + d * (k - 1), lo + o)
        for s, k, d, (lo, _), o in zip(
            y.shape[2:], kernel, dilation, padding, out_shape, strict=True
        )
    )
    acc = np.zeros((n, cout) + full)
    for ks in itertools.product(*(range(k) for k in kernel)):
        at = tuple(
            slice(k * d, k * d + s) for k, d, s in zip(ks, dilation, y.shape[2:], strict=True)
        )
        acc[(slice(None), slice(None)) + at] += np.einsum(
            "ni...,io->no...", y, w[(slice(None), slice(None)) + ks]
        )
    return acc[
        (slice(None), slice(None))
        + tuple(slice(lo, lo + o) for (lo, _), o in zip(padding, out_shape, strict=True))
    ]


_CASES = [  # y shape, w shape, padding, dilation, out_shape
    ((3, 4, 14, 14), (4, 3, 3, 3), ((1, 1), (1, 1)), (1, 1), (14, 14)),
    ((3, 4, 6, 5), (4, 2, 3, 2), ((0, 0), (1, 0)), (1, 1), (8, 5)),
    ((2, 3, 5, 7), (3, 2, 2, 3), ((1, 0), (0, 2)), (2, 1), (6, 7)),
    ((2, 3, 4, 4), (3, 3, 3, 3), ((2, 2), (2, 2)), (1, 1), (4, 4)),
    ((2, 2, 5, 5), (2, 2, 3, 3), ((1, 1), (1, 1)), (1, 1), (6, 6)),  # an output past the windows
    ((3, 3, 9), (3, 2, 4), ((2, 1),), (1,), (10,)),
    ((2, 2, 3, 4, 3), (2, 2, 2, 3, 2), ((1, 0), (1, 1), (0, 1)), (1, 1, 2), (4, 4, 4)),
]


@pytest.mark.parametrize("block_bytes", [conv._FLAT_BLOCK_BYTES, 1])  # 1: a sample a block
@pytest.mark.parametrize("ys, ws, padding, dilation, out_shape", _CASES)
def test_matches_a_scatter(ys, ws, padding, dilation, out_shape, block_bytes, monkeypatch):
    rng = np.random.default_rng(0)
    y, w = rng.standard_normal(ys), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1])
    monkeypatch.setattr(conv, "_FLAT_BLOCK_BYTES", block_bytes)
    got = conv._flat_transpose(np, y, w, b, padding, dilation, 1, out_shape)
    want = _scatter_reference(y, w, padding, dilation, out_shape)
    want += b.reshape((-1,) + (1,) * len(out_shape))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_grouped_matches_a_scatter_per_group():
    rng = np.random.default_rng(1)
    y, w = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((4, 3, 3, 3))
    padding, dilation, out_shape = ((1, 1), (0, 2)), (1, 1), (5, 4)
    got = conv._flat_transpose(np, y, w, None, padding, dilation, 2, out_shape)
    for g in range(2):
        want = _scatter_reference(
            y[:, 2 * g : 2 * g + 2], w[2 * g : 2 * g + 2], padding, dilation, out_shape
        )
        np.testing.assert_allclose(got[:, 3 * g : 3 * g + 3], want, rtol=1e-12, atol=1e-12)


def test_w3_conv2_plane_is_tight():
    # 14x14 input, 3x3, padding 1: one position fewer per axis than the full 16x16 window span
    assert conv._tight_plane((14, 14), (3, 3), ((1, 1), (1, 1)), (1, 1), (14, 14)) == (15, 15)
    # no padding: the windows' whole span is needed (a product at the last row lands on a
    # kept output of the next row otherwise)
    assert conv._tight_plane((14, 14), (3, 3), ((0, 0), (0, 0)), (1, 1), (16, 16)) == (16, 16)
