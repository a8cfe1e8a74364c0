"""affine_grid and grid_sample: values and gradients (input, grid, theta) against PyTorch for
every mode (bicubic 4-D only, as PyTorch's), padding mode, align_corners and 4-D / 5-D input;
finite differences; warnings, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _pair(torch, a):
    return tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(mine, theirs, tol=1e-12):
    np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=tol, atol=tol)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("align", [True, False])
def test_affine_grid_matches_torch(torch, rng, nd, align):
    for spatial in ((4, 5, 6)[:nd], (1, 3, 2)[:nd]):
        size = (2, 3) + spatial
        theta = rng.standard_normal((2, nd, nd + 1))
        a, b = _pair(torch, theta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the unit-size warning, tested below
            out = F.affine_grid(a, size, align_corners=align)
            ref = torch.nn.functional.affine_grid(b, size, align_corners=align)
        assert out.shape == tuple(ref.shape)
        _close(out.detach().numpy(), ref.detach().numpy())
        g = rng.standard_normal(tuple(ref.shape))
        out.backward(tg.tensor(g))
        ref.backward(torch.tensor(g))
        _close(a.grad.numpy(), b.grad.numpy())


_CASES = [
    (nd, mode, pm, align)
    for nd in (2, 3)
    for mode in ("bilinear", "nearest", "bicubic")
    for pm in ("zeros", "border", "reflection")
    for align in (True, False)
    if not (mode == "bicubic" and nd == 3)  # 4-D only, as PyTorch's: its error is tested below
]


@pytest.mark.parametrize("nd, mode, padding_mode, align", _CASES)
def test_grid_sample_matches_torch(torch, rng, nd, mode, padding_mode, align):
    x = rng.standard_normal((2, 3) + (4, 5, 3)[:nd])
    grid = rng.uniform(-2.6, 2.6, (2,) + (3, 4, 2)[:nd] + (nd,))  # far outside too: folds
    (xa, xb), (ga, gb) = _pair(torch, x), _pair(torch, grid)
    out = F.grid_sample(xa, ga, mode, padding_mode, align)
    ref = torch.nn.functional.grid_sample(xb, gb, mode, padding_mode, align)
    assert out.shape == tuple(ref.shape)
    _close(out.detach().numpy(), ref.detach().numpy())
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    _close(xa.grad.numpy(), xb.grad.numpy())
    _close(ga.grad.numpy(), gb.grad.numpy(), 1e-10)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [True, False])
def test_grid_sample_on_pixel_centres_edges_and_unit_sizes(torch, rng, padding_mode, align):
    # grid points exactly on pixel centres, on the +-1 edges and on the clip limits
    x = rng.standard_normal((1, 2, 3, 1))  # W = 1: a unit-size dim
    ticks = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, -1.5, 1.5, 1.0 / 3, -2.0])
    grid = np.stack(np.meshgrid(ticks, ticks, indexing="xy"), -1)[None]
    for mode in ("bilinear", "nearest", "bicubic"):
        (xa, xb), (ga, gb) = _pair(torch, x), _pair(torch, grid)
        out = F.grid_sample(xa, ga, mode, padding_mode, align)
        ref = torch.nn.functional.grid_sample(xb, gb, mode, padding_mode, align)
        _close(out.detach().numpy(), ref.detach().numpy())
        g = rng.standard_normal(tuple(ref.shape))
        out.backward(tg.tensor(g))
        ref.backward(torch.tensor(g))
        _close(xa.grad.numpy(), xb.grad.numpy())
        _close(ga.grad.numpy(), gb.grad.numpy(), 1e-10)


def test_identity_grid_reproduces_input_float32(torch, rng):
    x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    theta = np.tile(np.eye(2, 3, dtype=np.float32), (2, 1, 1))
    for align in (True, False):
        grid = F.affine_grid(tg.tensor(theta), (2, 3, 5, 7), align_corners=align)
        out = F.grid_sample(tg.tensor(x), grid, align_corners=align)
        assert out.dtype == tg.float32
        np.testing.assert_allclose(out.numpy(), x, atol=1e-5)
        ref = torch.nn.functional.grid_sample(
            torch.tensor(x), torch.tensor(grid.numpy()), align_corners=align
        )
        np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-6)


def test_gradcheck_input_grid_and_theta(rng):
    x = tg.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    grid = tg.tensor(rng.uniform(-1.8, 1.8, (1, 3, 2, 2)), requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        for mode in ("bilinear", "bicubic"):
            assert gradcheck(
                lambda a, b, pm=pm, mode=mode: F.grid_sample(a, b, mode, pm, False), (x, grid)
            )
    x3 = tg.tensor(rng.standard_normal((1, 1, 3, 3, 4)), requires_grad=True)
    g3 = tg.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b: F.grid_sample(a, b, align_corners=True), (x3, g3))
    theta = tg.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    img = tg.tensor(rng.standard_normal((2, 1, 4, 4)))

    def transform(t):
        return F.grid_sample(img, F.affine_grid(t, (2, 1, 3, 3), False), align_corners=False)

    assert gradcheck(transform, (theta,))


def test_align_corners_none_warns_as_torch(torch):
    x, theta = tg.ones(1, 1, 2, 2), tg.tensor([[[1.0, 0, 0], [0, 1.0, 0]]])
    with pytest.warns(
        UserWarning, match="Default grid_sample and affine_grid behavior has changed"
    ):
        grid = F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.warns(
        UserWarning, match="Default grid_sample and affine_grid behavior has changed"
    ):
        F.grid_sample(x, grid)
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size grids"):
        F.affine_grid(theta, (1, 1, 1, 2), align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.nn.functional.affine_grid(torch.tensor(theta.numpy()), (1, 1, 2, 2))
    _close(grid.numpy(), ref.numpy())


def test_errors_name_the_function():
    x, grid = tg.ones(1, 1, 3, 3), tg.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="grid_sample\\(\\): expected mode to be 'bilinear'"):
        F.grid_sample(x, grid, mode="cubic", align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sample: bicubic interpolation only supports 4D"):
        F.grid_sample(
            tg.ones(1, 1, 2, 2, 2), tg.zeros(1, 1, 1, 1, 3), "bicubic", align_corners=False
        )
    with pytest.raises(ValueError, match="expected padding_mode to be 'zeros', 'border', or"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sample: expected 4D or 5D input and grid"):
        F.grid_sample(tg.ones(1, 3, 3), grid, align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sample: expected grid to have size 2 in last"):
        F.grid_sample(x, tg.zeros(1, 2, 2, 3), align_corners=False)
    with pytest.raises(
        RuntimeError, match="grid_sample: expected grid and input to have same batch"
    ):
        F.grid_sample(x, tg.zeros(2, 2, 2, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="grid_sample: expected input and grid to be floating"):
        F.grid_sample(x, tg.zeros(1, 2, 2, 2, dtype=tg.float64), align_corners=False)
    with pytest.raises(NotImplementedError, match="affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(tg.zeros(1, 2, 3), (1, 1, 3), align_corners=False)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(tg.zeros(1, 3, 4), (1, 1, 3, 3), align_corners=False)
    with pytest.raises(ValueError, match="Expected non-zero, positive output size"):
        F.affine_grid(tg.zeros(1, 2, 3), (1, 1, 0, 3), align_corners=False)
    with pytest.raises(ValueError, match="Expected theta to have floating point type"):
        F.affine_grid(tg.zeros(1, 2, 3, dtype=tg.int64), (1, 1, 3, 3), align_corners=False)


def test_facade_reaches_the_new_names():
    from tapegrad.compat import torch as ttorch

    assert ttorch.nn.functional.affine_grid is F.affine_grid
    assert ttorch.nn.functional.grid_sample is F.grid_sample
