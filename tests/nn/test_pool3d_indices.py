"""3-D convolution-transpose and pooling, and pooling indices: values, indices and gradients
against PyTorch, finite differences, errors, module reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _both(torch, a):
    return tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _check_vs_torch(torch, rng, name, x, *args, **kw):
    """Forward (and indices where returned) and the input gradient equal torch's."""
    a, b = _both(torch, x)
    out, ref = getattr(F, name)(a, *args, **kw), getattr(torch.nn.functional, name)(b, *args, **kw)
    if isinstance(ref, tuple):
        np.testing.assert_array_equal(out[1].numpy(), ref[1].numpy())
        assert out[1].dtype == tg.int64
        out, ref = out[0], ref[0]
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


_POOL3D = [
    {"kernel_size": 2},
    {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": (1, 1, 0)},
    {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 2, "stride": 1, "dilation": (2, 1, 2)},
]


@pytest.mark.parametrize("kw", _POOL3D, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 5, 6, 7), (3, 5, 6, 7)])
def test_max_pool3d_and_indices_match_torch(torch, rng, kw, shape):
    x = rng.standard_normal(shape)
    _check_vs_torch(torch, rng, "max_pool3d", x, **kw)
    _check_vs_torch(torch, rng, "max_pool3d", x, return_indices=True, **kw)
    _check_vs_torch(torch, rng, "max_pool3d_with_indices", x, **kw)


@pytest.mark.parametrize("nd", [1, 2])
def test_max_pool_with_indices_1d_2d_match_torch(torch, rng, nd):
    x = rng.standard_normal((2, 3) + (7,) * nd)
    name = f"max_pool{nd}d_with_indices"
    _check_vs_torch(torch, rng, name, x, 3, stride=2, padding=1)
    _check_vs_torch(torch, rng, name, x, 2, ceil_mode=True)
    # ties: the first maximum, as PyTorch
    _check_vs_torch(torch, rng, name, np.round(x), 3, stride=1)
    out = getattr(F, name)(tg.tensor(x), 2)
    assert isinstance(out, tuple) and len(out) == 2


_AVG3D = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": (2, 3, 3), "stride": 2, "padding": (1, 1, 0), "ceil_mode": True},
    {"kernel_size": 2, "divisor_override": 3},
]


@pytest.mark.parametrize("kw", _AVG3D, ids=str)
def test_avg_pool3d_matches_torch(torch, rng, kw):
    _check_vs_torch(torch, rng, "avg_pool3d", rng.standard_normal((2, 3, 5, 6, 7)), **kw)
    _check_vs_torch(torch, rng, "avg_pool3d", rng.standard_normal((3, 5, 6, 7)), **kw)


@pytest.mark.parametrize("size", [1, 2, (3, 2, 4), (None, 2, 5), (4, 4, 4)])
def test_adaptive_pool3d_match_torch(torch, rng, size):
    x = rng.standard_normal((2, 3, 5, 6, 7))
    _check_vs_torch(torch, rng, "adaptive_avg_pool3d", x, size)
    _check_vs_torch(torch, rng, "adaptive_max_pool3d", x, size)
    _check_vs_torch(torch, rng, "adaptive_max_pool3d", x, size, return_indices=True)
    _check_vs_torch(torch, rng, "adaptive_max_pool3d_with_indices", x[0], size)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_adaptive_max_pool_with_indices_match_torch(torch, rng, nd):
    x = np.round(rng.standard_normal((2, 3) + (5, 7, 6)[:nd]))  # ties included
    _check_vs_torch(torch, rng, f"adaptive_max_pool{nd}d_with_indices", x, 3)
    x[0, 0].flat[3] = np.nan
    a = tg.tensor(x)
    out, idx = getattr(F, f"adaptive_max_pool{nd}d_with_indices")(a, 2)
    ref, ridx = getattr(torch.nn.functional, f"adaptive_max_pool{nd}d_with_indices")(
        torch.tensor(x), 2
    )
    np.testing.assert_array_equal(idx.numpy(), ridx.numpy())
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize(
    "kw",
    [
        {"stride": 2},
        {"stride": (1, 2, 2), "padding": (1, 0, 1), "output_padding": (0, 1, 1)},
        {"stride": 2, "dilation": 2, "output_padding": 1},
        {"groups": 2},
    ],
    ids=str,
)
def test_conv_transpose3d_matches_torch(torch, rng, kw):
    x = rng.standard_normal((2, 4, 3, 4, 3))
    w = rng.standard_normal((4, 3, 2, 3, 2))
    bias = rng.standard_normal(3 * kw.get("groups", 1))
    (a, ta), (b, tb), (c, tc) = (_both(torch, v) for v in (x, w, bias))
    out = F.conv_transpose3d(a, b, c, **kw)
    ref = torch.nn.functional.conv_transpose3d(ta, tb, tc, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    for mine, theirs in ((a, ta), (b, tb), (c, tc)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-10)
    unbatched = F.conv_transpose3d(tg.tensor(x[0]), tg.tensor(w), None, **kw)
    np.testing.assert_allclose(
        unbatched.numpy(),
        torch.nn.functional.conv_transpose3d(torch.tensor(x[0]), torch.tensor(w), **kw).numpy(),
        atol=1e-12,
    )


def test_gradcheck_3d(rng):
    x = tg.tensor(rng.standard_normal((1, 2, 4, 4, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((2, 2, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda t, u: F.conv_transpose3d(t, u, stride=2), (x, w))
    assert gradcheck(lambda t: F.max_pool3d(t, 2, stride=1, padding=1), (x,))
    assert gradcheck(lambda t: F.avg_pool3d(t, 3, 2, 1, count_include_pad=False), (x,))
    assert gradcheck(lambda t: F.adaptive_avg_pool3d(t, (3, 2, 2)), (x,))
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (3, 2, 2)), (x,))


def test_modules_match_torch_and_reprs(torch, rng):
    x = rng.standard_normal((2, 4, 5, 6, 5))
    pairs = [
        (tg.nn.MaxPool3d(2, stride=1, padding=1), torch.nn.MaxPool3d(2, stride=1, padding=1)),
        (tg.nn.AvgPool3d(3, stride=2), torch.nn.AvgPool3d(3, stride=2)),
        (tg.nn.AdaptiveAvgPool3d((2, None, 3)), torch.nn.AdaptiveAvgPool3d((2, None, 3))),
        (tg.nn.AdaptiveMaxPool3d(2), torch.nn.AdaptiveMaxPool3d(2)),
    ]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
        np.testing.assert_allclose(
            mine(tg.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), atol=1e-12
        )
    out, idx = tg.nn.MaxPool3d(2, return_indices=True)(tg.tensor(x))
    _, ridx = torch.nn.MaxPool3d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx.numpy(), ridx.numpy())
    out, idx = tg.nn.AdaptiveMaxPool3d(3, return_indices=True)(tg.tensor(x))
    _, ridx = torch.nn.AdaptiveMaxPool3d(3, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(idx.numpy(), ridx.numpy())
    mine = tg.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=2, padding=1, output_padding=1)
    theirs = torch.nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=2, padding=1, output_padding=1)
    assert repr(mine) == repr(theirs)
    assert mine.weight.shape == tuple(theirs.weight.shape)
    mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    xf = x.astype(np.float32)
    np.testing.assert_allclose(
        mine(tg.tensor(xf)).detach().numpy(),
        theirs(torch.tensor(xf)).detach().numpy(),
        rtol=1e-4,
        atol=1e-5,
    )
    out = mine(tg.tensor(xf), output_size=(9, 12, 9))
    assert out.shape == tuple(theirs(torch.tensor(xf), output_size=(9, 12, 9)).shape)


def test_facade_reaches_the_new_names():
    from tapegrad.compat import torch as ttorch

    for name in ("ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d"):
        assert getattr(ttorch.nn, name) is getattr(tg.nn, name)
    assert ttorch.nn.AdaptiveMaxPool3d is tg.nn.AdaptiveMaxPool3d
    for name in [
        "conv_transpose3d",
        "max_pool3d",
        "avg_pool3d",
        "adaptive_avg_pool3d",
        "adaptive_max_pool3d",
        "max_pool1d_with_indices",
        "max_pool2d_with_indices",
        "max_pool3d_with_indices",
        "adaptive_max_pool1d_with_indices",
        "adaptive_max_pool2d_with_indices",
        "adaptive_max_pool3d_with_indices",
    ]:
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)


def test_errors_name_the_function():
    with pytest.raises(ValueError, match="max_pool3d: expected input with 5 dims"):
        F.max_pool3d(tg.ones(2, 3, 4), 2)
    with pytest.raises(ValueError, match="avg_pool3d: expected input with 5 dims"):
        F.avg_pool3d(tg.ones(4, 4), 2)
    with pytest.raises(ValueError, match="conv_transpose3d: expected input with 5 dims"):
        F.conv_transpose3d(tg.ones(1, 2, 3), tg.ones(2, 2, 2, 2, 2))
    with pytest.raises(ValueError, match="conv_transpose3d: expected weight with 5 dims"):
        F.conv_transpose3d(tg.ones(1, 2, 3, 3, 3), tg.ones(2, 2, 2, 2))
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool3d\(\): Expected 4D or 5D"):
        F.adaptive_max_pool3d(tg.ones(2, 3, 4), 2)
    with pytest.raises(
        ValueError, match="adaptive_max_pool3d: output_size must be an int or a triple"
    ):
        F.adaptive_max_pool3d(tg.ones(1, 2, 3, 4, 5), (2, 2))
    with pytest.raises(ValueError, match="adaptive_avg_pool3d: output_size must be an int or"):
        F.adaptive_avg_pool3d(tg.ones(1, 2, 3, 4, 5), (2, 2))
    with pytest.raises(ValueError, match="max_pool3d_with_indices: padding"):
        F.max_pool3d_with_indices(tg.ones(1, 1, 4, 4, 4), 2, padding=2)
