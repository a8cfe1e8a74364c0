"""Max pooling where a window's maximum is -inf: the padding (also -inf) must never be the
window's argmax. It was: return_indices gave negative indices into the padding and the
gradient of such a window was dropped (PyTorch gives both to the window's first real -inf).
Expected values are PyTorch 2.13's."""

from __future__ import annotations

import numpy as np

import tapegrad as tg

NEG = -np.inf


def _pool(x, **kw):
    xt = tg.tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    fn = tg.nn.functional.max_pool1d if xt.ndim == 3 else tg.nn.functional.max_pool2d
    out, idx = fn(xt, return_indices=True, **kw)
    out.sum().backward()
    return out.detach().numpy(), idx.numpy(), xt.grad.numpy()


def test_neginf_window_next_to_padding_takes_the_real_element():
    out, idx, grad = _pool([[[NEG, 1, NEG, NEG, NEG, 2]]], kernel_size=2, stride=1, padding=1)
    np.testing.assert_array_equal(out.ravel(), [NEG, 1, 1, NEG, NEG, 2, 2])
    np.testing.assert_array_equal(idx.ravel(), [0, 1, 1, 2, 3, 5, 5])
    np.testing.assert_array_equal(grad.ravel(), [1, 2, 1, 1, 0, 2])


def test_all_neginf_2d_with_padding_matches_torch():
    out, idx, grad = _pool(np.full((1, 1, 3, 3), NEG), kernel_size=2, stride=1, padding=1)
    assert np.all(out == NEG)
    np.testing.assert_array_equal(idx.ravel(), [0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8])
    np.testing.assert_array_equal(grad.ravel(), [4, 2, 2, 2, 1, 1, 2, 1, 1])


def test_neginf_with_nan_windows_and_ceil_mode_padding():
    out, idx, grad = _pool([[[NEG, np.nan, NEG, NEG, NEG, 2]]], kernel_size=2, stride=1, padding=1)
    np.testing.assert_array_equal(idx.ravel(), [0, 1, 1, 2, 3, 5, 5])
    np.testing.assert_array_equal(grad.ravel(), [1, 2, 1, 1, 0, 2])
    # ceil_mode's extra right padding is padding too: the last window holds one real -inf
    out, idx, grad = _pool([[[1.0, NEG, NEG]]], kernel_size=2, stride=2, ceil_mode=True)
    np.testing.assert_array_equal(idx.ravel(), [0, 2])
    np.testing.assert_array_equal(grad.ravel(), [1, 0, 1])
