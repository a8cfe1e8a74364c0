"""bilinear + Bilinear, pdist, channel_shuffle + ChannelShuffle, upsample_nearest /
upsample_bilinear, Softmax2d, NLLLoss2d: values and gradients against PyTorch, finite
differences, deprecation warnings, errors, reprs."""

from __future__ import annotations

import math
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


def _backward_both(torch, rng, out, ref):
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))


@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
@pytest.mark.parametrize("with_bias", [True, False])
def test_bilinear_matches_torch(torch, rng, lead, with_bias):
    x1, x2 = rng.standard_normal(lead + (3,)), rng.standard_normal(lead + (4,))
    w, b = rng.standard_normal((5, 3, 4)), rng.standard_normal(5)
    pairs = [_pair(torch, v) for v in (x1, x2, w, b)]
    mine = F.bilinear(*[p[0] for p in pairs[:3]], pairs[3][0] if with_bias else None)
    ref = torch.nn.functional.bilinear(
        *[p[1] for p in pairs[:3]], pairs[3][1] if with_bias else None
    )
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    _backward_both(torch, rng, mine, ref)
    for a, t in pairs[: 4 if with_bias else 3]:
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_bilinear_gradcheck_and_errors(rng):
    args = [
        tg.tensor(rng.standard_normal(s), requires_grad=True)
        for s in ((2, 3), (2, 4), (5, 3, 4), (5,))
    ]
    assert gradcheck(F.bilinear, tuple(args))
    with pytest.raises(
        RuntimeError,
        match="bilinear\\(\\): input2 size does not match weight size: got 4 but expected 3",
    ):
        F.bilinear(tg.ones(2, 3), tg.ones(2, 4), tg.ones(5, 3, 3))
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not match"):
        F.bilinear(tg.ones(2, 3), tg.ones(3, 4), tg.ones(5, 3, 4))
    with pytest.raises(RuntimeError, match="bilinear\\(\\): weight must be 3-D"):
        F.bilinear(tg.ones(2, 3), tg.ones(2, 4), tg.ones(3, 4))
    with pytest.raises(
        RuntimeError, match="bilinear\\(\\): bias must be a Tensor of shape \\(5,\\)"
    ):
        F.bilinear(tg.ones(2, 3), tg.ones(2, 4), tg.ones(5, 3, 4), tg.ones(4))


def test_bilinear_module_as_torch(torch, rng):
    mine, theirs = tg.nn.Bilinear(3, 4, 5), torch.nn.Bilinear(3, 4, 5)
    assert repr(mine) == repr(theirs)
    assert repr(tg.nn.Bilinear(3, 4, 5, bias=False)) == repr(torch.nn.Bilinear(3, 4, 5, bias=False))
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert mine.weight.shape == tuple(theirs.weight.shape) and mine.bias.shape == (5,)
    bound = 1 / math.sqrt(3)
    big = tg.nn.Bilinear(3, 40, 50)
    for p in (big.weight, big.bias):
        v = p.detach().numpy()
        assert v.min() >= -bound and v.max() <= bound and v.max() - v.min() > 1.5 * bound
    mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x1, x2 = (
        rng.standard_normal((6, 3)).astype(np.float32),
        rng.standard_normal((6, 4)).astype(np.float32),
    )
    np.testing.assert_allclose(
        mine(tg.tensor(x1), tg.tensor(x2)).detach().numpy(),
        theirs(torch.tensor(x1), torch.tensor(x2)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )


@pytest.mark.parametrize("p", [2, 1, 0, float("inf"), 0.5, 3, 1.5])
def test_pdist_matches_torch(torch, rng, p):
    x = np.round(rng.standard_normal((5, 3)), 1)
    x[1] = x[0]  # a zero distance
    x[3, 0] = x[2, 0]  # a zero component
    x[4] = x[2] + np.array([1.0, -1.0, 0.5])  # a tie for p = inf
    a, b = _pair(torch, x)
    out, ref = F.pdist(a, p), torch.nn.functional.pdist(b, p)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    _backward_both(torch, rng, out, ref)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_pdist_gradcheck_edge_sizes_and_errors(rng):
    x = tg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.pdist(t), (x,))
    assert gradcheck(lambda t: F.pdist(t, 3.0), (x,))
    assert F.pdist(tg.ones(1, 3)).shape == (0,)
    assert F.pdist(tg.ones(0, 3)).shape == (0,)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(tg.ones(3))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(tg.ones(3, 2), -1)


@pytest.mark.parametrize(
    "shape, groups", [((2, 6, 3, 3), 3), ((1, 4, 5), 2), ((2, 6, 2, 1, 2), 2), ((3, 5, 2), 1)]
)
def test_channel_shuffle_matches_torch(torch, rng, shape, groups):
    x = rng.standard_normal(shape)
    for name in ("channel_shuffle", "native_channel_shuffle"):
        a, b = _pair(torch, x)
        out = getattr(F, name)(a, groups)
        np.testing.assert_array_equal(
            out.detach().numpy(),
            getattr(torch.nn.functional, name)(b.detach(), groups).numpy(),
        )
        # PyTorch's native kernel has no derivative; ours is the channel_shuffle gradient
        ref = torch.nn.functional.channel_shuffle(b, groups)
        _backward_both(torch, rng, out, ref)
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    layer = tg.nn.ChannelShuffle(groups)
    assert repr(layer) == repr(torch.nn.ChannelShuffle(groups))
    np.testing.assert_array_equal(
        layer(tg.tensor(x)).numpy(), torch.nn.ChannelShuffle(groups)(torch.tensor(x)).numpy()
    )


def test_channel_shuffle_errors_as_torch():
    with pytest.raises(
        RuntimeError,
        match="Number of channels must be divisible by groups. Got 5 channels and 2 groups.",
    ):
        F.channel_shuffle(tg.ones(1, 5, 2), 2)
    with pytest.raises(
        RuntimeError,
        match=r"channel_shuffle expects input with > 2 dims, but got input with sizes \[1, 4\]",
    ):
        F.channel_shuffle(tg.ones(1, 4), 2)
    with pytest.raises(
        RuntimeError, match="Number of groups to divide channels in must be positive"
    ):
        F.native_channel_shuffle(tg.ones(1, 4, 2), 0)


def test_upsample_nearest_bilinear_warn_and_match_torch(torch, rng):
    x = rng.standard_normal((1, 2, 3, 4))
    for name, kw in (
        ("upsample_nearest", {"scale_factor": 2}),
        ("upsample_bilinear", {"size": (5, 7)}),
    ):
        a, b = _pair(torch, x)
        with pytest.warns(
            UserWarning,
            match=f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.",
        ):
            out = getattr(F, name)(a, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = getattr(torch.nn.functional, name)(b, **kw)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
        _backward_both(torch, rng, out, ref)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


def test_softmax2d_as_torch(torch, rng):
    for shape in ((2, 3, 4, 5), (3, 4, 5)):
        x = rng.standard_normal(shape)
        a, b = _pair(torch, x)
        out, ref = tg.nn.Softmax2d()(a), torch.nn.Softmax2d()(b)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
        _backward_both(torch, rng, out, ref)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    assert repr(tg.nn.Softmax2d()) == repr(torch.nn.Softmax2d()) == "Softmax2d()"
    with pytest.raises(
        ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"
    ):
        tg.nn.Softmax2d()(tg.ones(2, 2))


def test_nllloss2d_is_a_warning_alias(torch, rng):
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated. Please use `NLLLoss`"):
        loss = tg.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(loss, tg.nn.NLLLoss) and repr(loss) == "NLLLoss2d()"
    x = rng.standard_normal((2, 3, 4, 4))
    t = rng.integers(0, 3, (2, 4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.nn.NLLLoss2d(ignore_index=1)(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(loss(tg.tensor(x), tg.tensor(t)).numpy(), ref.numpy(), rtol=1e-12)


def test_facade_reaches_the_new_names():
    from tapegrad.compat import torch as ttorch

    for name in ("Bilinear", "ChannelShuffle", "Softmax2d", "NLLLoss2d"):
        assert getattr(ttorch.nn, name) is getattr(tg.nn, name)
    for name in (
        "bilinear",
        "pdist",
        "channel_shuffle",
        "native_channel_shuffle",
        "upsample_nearest",
        "upsample_bilinear",
    ):
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)
