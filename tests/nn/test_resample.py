"""F.interpolate, F.pixel_shuffle / pixel_unshuffle and their layers: values and gradients
against PyTorch, finite-difference gradients, errors, reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck

_CASES = [
    (1, "nearest"),
    (2, "nearest"),
    (3, "nearest"),
    (2, "nearest-exact"),
    (1, "linear"),
    (2, "bilinear"),
    (3, "trilinear"),
    (2, "bicubic"),
    (1, "area"),
    (2, "area"),
]
_SIZES = [
    {"size": 7},
    {"size": 2},
    {"scale_factor": 2.5},
    {"scale_factor": 2},
    {"scale_factor": 1.7, "recompute_scale_factor": True},
    {"scale_factor": 0.6},
]


def _corners(mode):
    return [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]


@pytest.mark.parametrize(("nd", "mode"), _CASES)
@pytest.mark.parametrize("kw", _SIZES, ids=str)
def test_interpolate_matches_torch_values_and_gradients(rng, nd, mode, kw):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3) + (4,) * nd)
    for ac in _corners(mode):
        ours = tg.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        out = F.interpolate(ours, mode=mode, align_corners=ac, **kw)
        ref = torch.nn.functional.interpolate(theirs, mode=mode, align_corners=ac, **kw)
        assert out.shape == tuple(ref.shape)
        got = out.detach().numpy()
        np.testing.assert_allclose(got, ref.detach().numpy(), rtol=1e-12, atol=1e-12)
        g = rng.standard_normal(out.shape)
        out.backward(tg.tensor(g))
        ref.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_interpolate_float32_scale_rules_match_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((1, 2, 6, 4)).astype(np.float32)
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        for sf in ((1.01, 2.0), (0.9, 1.3), (2.02, 2.02)):
            ac = None if "nearest" in mode else False
            out = F.interpolate(tg.tensor(x), scale_factor=sf, mode=mode, align_corners=ac)
            ref = torch.nn.functional.interpolate(
                torch.tensor(x), scale_factor=sf, mode=mode, align_corners=ac
            )
            np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
            assert out.dtype == np.float32


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic"])
@pytest.mark.parametrize("ac", [False, True])
def test_interpolate_non_finite_stays_local_as_torch(mode, ac):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((1, 1, 5, 6))
    x[0, 0, 2, 3], x[0, 0, 0, 0], x[0, 0, 4, 1] = np.inf, np.nan, -np.inf
    x = x[:, :, 0] if mode == "linear" else x
    for size in ((9, 11), (3, 4)):
        size = size[:1] if mode == "linear" else size
        out = F.interpolate(tg.tensor(x), size=size, mode=mode, align_corners=ac).numpy()
        ref = torch.nn.functional.interpolate(
            torch.tensor(x), size=size, mode=mode, align_corners=ac
        ).numpy()
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
        np.testing.assert_allclose(out, ref, rtol=1e-12)  # infinities where PyTorch has them
        assert size[0] == 3 or np.isfinite(out).any()  # bad values spread to their taps only


def test_interpolate_known_values():
    x = tg.tensor(np.array([[[0.0, 1.0, 2.0]]]))
    lin = F.interpolate(x, size=5, mode="linear", align_corners=True)
    np.testing.assert_allclose(lin.numpy(), [[[0.0, 0.5, 1.0, 1.5, 2.0]]])
    near = F.interpolate(x, scale_factor=2)
    np.testing.assert_array_equal(near.numpy(), [[[0, 0, 1, 1, 2, 2]]])
    half = F.interpolate(x, size=6, mode="linear")  # half-pixel centres, clamped at the ends
    np.testing.assert_allclose(half.numpy(), [[[0, 0.25, 0.75, 1.25, 1.75, 2]]])


@pytest.mark.parametrize(
    ("nd", "mode", "kw"),
    [
        (1, "linear", {"size": 5}),
        (2, "bilinear", {"scale_factor": 1.5, "align_corners": True}),
        (2, "bicubic", {"size": (5, 3)}),
        (3, "trilinear", {"size": 3}),
        (2, "nearest", {"scale_factor": 2}),
        (2, "area", {"size": (2, 3)}),
    ],
)
def test_interpolate_gradcheck(rng, nd, mode, kw):
    x = tg.tensor(rng.standard_normal((1, 2) + (3,) * nd), requires_grad=True)
    assert gradcheck(lambda t: F.interpolate(t, mode=mode, **kw), (x,))
    assert gradgradcheck(lambda t: F.interpolate(t, mode=mode, **kw) ** 2, (x,))


def test_interpolate_errors():
    x = tg.randn(1, 2, 3, 3)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match="scale_factor of shape"):
        F.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(TypeError, match="expected size to be one of int"):
        F.interpolate(x, size=(2, 2.5))
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=2, recompute_scale_factor=True)
    with pytest.raises(RuntimeError, match=r"greater than 0.*\(H: 0, W: 0\)"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(NotImplementedError, match="got 1D"):
        F.interpolate(tg.randn(3), size=2)
    with pytest.raises(NotImplementedError, match=r"got foo"):
        F.interpolate(x, size=2, mode="foo")
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(tg.randn(1, 2, 3), size=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="got bicubic"):
        F.interpolate(tg.randn(1, 1, 2, 2, 2), size=2, mode="bicubic")
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, size=2, antialias=True)
    with pytest.raises(NotImplementedError, match="antialias=True is not supported"):
        F.interpolate(x, size=2, mode="bilinear", antialias=True)
    with pytest.raises(RuntimeError, match="floating-point input"):
        F.interpolate(tg.tensor(np.ones((1, 1, 2), dtype=np.int64)), size=3, mode="linear")
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.interpolate(np.ones((1, 1, 2)), size=3)


def test_upsample_alias_warns_and_resizes():
    x = tg.randn(1, 1, 2, 2)
    with pytest.warns(UserWarning, match="upsample is deprecated"):
        out = F.upsample(x, scale_factor=2)
    np.testing.assert_array_equal(out.numpy(), F.interpolate(x, scale_factor=2).numpy())


def test_upsample_layers_repr_and_forward(rng):
    up = tg.nn.Upsample(scale_factor=2)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert up.scale_factor == 2.0 and up.size is None and up.align_corners is None
    assert repr(tg.nn.Upsample(size=(3, 4), mode="bilinear")) == (
        "Upsample(size=(3, 4), mode='bilinear')"
    )
    assert tg.nn.Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)
    assert repr(tg.nn.UpsamplingNearest2d(scale_factor=2)) == (
        "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    )
    bil = tg.nn.UpsamplingBilinear2d(size=3)
    assert repr(bil) == "UpsamplingBilinear2d(size=3, mode='bilinear')"
    assert bil.align_corners is True
    x = tg.tensor(rng.standard_normal((1, 2, 2, 2)))
    np.testing.assert_allclose(
        bil(x).numpy(), F.interpolate(x, size=3, mode="bilinear", align_corners=True).numpy()
    )
    assert list(bil.state_dict()) == []
    with pytest.raises(ValueError, match="either size or scale_factor"):
        tg.nn.Upsample()(x)


def test_upsampling_bilinear2d_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((1, 2, 3, 4))
    ours = tg.nn.UpsamplingBilinear2d(scale_factor=2)(tg.tensor(x)).numpy()
    ref = torch.nn.UpsamplingBilinear2d(scale_factor=2)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


# ---------------------------------------------------------------- pixel shuffle
def test_pixel_shuffle_matches_torch_and_round_trips(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((2, 3, 8, 4, 6))
    ours = F.pixel_shuffle(tg.tensor(x), 2).numpy()
    np.testing.assert_array_equal(ours, torch.nn.functional.pixel_shuffle(torch.tensor(x), 2))
    back = F.pixel_unshuffle(tg.tensor(ours), 2).numpy()
    np.testing.assert_array_equal(back, x)
    np.testing.assert_array_equal(
        F.pixel_unshuffle(tg.tensor(x), 2).numpy(),
        torch.nn.functional.pixel_unshuffle(torch.tensor(x), 2).numpy(),
    )


def test_pixel_shuffle_known_layout_and_gradcheck(rng):
    x = tg.tensor(np.arange(4.0).reshape(1, 4, 1, 1))
    np.testing.assert_array_equal(F.pixel_shuffle(x, 2).numpy(), [[[[0, 1], [2, 3]]]])
    t = tg.tensor(rng.standard_normal((1, 8, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.pixel_shuffle(a, 2), (t,))
    u = tg.tensor(rng.standard_normal((1, 2, 4, 6)), requires_grad=True)
    assert gradcheck(lambda a: F.pixel_unshuffle(a, 2), (u,))


def test_pixel_shuffle_errors_and_layers():
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=5 is not divisible by 4"):
        F.pixel_shuffle(tg.randn(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(tg.randn(5, 2), 2)
    with pytest.raises(RuntimeError, match="positive upscale_factor, but got 0"):
        F.pixel_shuffle(tg.randn(4, 2, 2), 0)
    with pytest.raises(RuntimeError, match=r"height to be divisible.*input.size\(-2\)=3"):
        F.pixel_unshuffle(tg.randn(1, 1, 3, 4), 2)
    with pytest.raises(RuntimeError, match=r"width to be divisible.*input.size\(-1\)=3"):
        F.pixel_unshuffle(tg.randn(1, 1, 4, 3), 2)
    assert repr(tg.nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(tg.nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert tg.nn.PixelUnshuffle(2)(tg.randn(1, 1, 4, 4)).shape == (1, 4, 2, 2)


def test_torch_facade_reaches_resampling():
    from tapegrad.compat import torch as ttorch

    assert ttorch.nn.functional.interpolate is F.interpolate
    assert ttorch.nn.Upsample is tg.nn.Upsample
    assert ttorch.nn.PixelShuffle is tg.nn.PixelShuffle
