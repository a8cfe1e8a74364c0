"""The stride-1 transposed conv's flat grid (ops/conv.py `_flat_transpose`) holds one GEMM
column per grid position: it is taken only where the grid is at most twice the input, so a
kernel large against its input (MXNet's gluon tests: a 28 GiB product) goes col2im's way."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.nn import functional as F
from tapegrad.ops import conv


def test_a_kernel_large_against_its_input_skips_the_flat_grid(monkeypatch):
    calls = []
    original = conv._flat_transpose
    monkeypatch.setattr(
        conv, "_flat_transpose", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((2, 3, 4, 4)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((5, 3, 9, 9)), requires_grad=True)
    y = F.conv2d(x, w, padding=4)  # input gradient: a 9x9 kernel over a 4x4 g (grid 12x12)
    y.sum().backward()
    assert calls == []
    gx = x.grad.numpy()
    # reference: d(sum conv)/dx[n, c, i, j] = sum over outputs (o, p, q) of w[o, c, i-p+4, j-q+4]
    ref = np.zeros_like(gx)
    wn = w.detach().numpy()
    for i in range(4):
        for j in range(4):
            for p in range(4):
                for q in range(4):
                    ref[:, :, i, j] += wn[:, :, i - p + 4, j - q + 4].sum(axis=0)
    np.testing.assert_allclose(gx, ref, rtol=1e-12)


@pytest.mark.parametrize(
    "in_sizes, kernel, padding, fits",
    [((14, 14), (3, 3), ((1, 1), (1, 1)), True), ((4, 4), (9, 9), ((4, 4), (4, 4)), False)],
)
def test_which_shapes_take_the_flat_grid(in_sizes, kernel, padding, fits):
    out_shape = in_sizes  # same-size convolutions' input gradients
    assert conv._flat_fits(in_sizes, kernel, (1, 1), padding, (1, 1), out_shape) is fits
    assert not conv._flat_fits(in_sizes, kernel, (2, 2), padding, (1, 1), out_shape)
