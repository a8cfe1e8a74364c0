"""unfold / fold, adaptive max pooling, pairwise distance and cosine similarity, with their
layers: values and gradients against PyTorch, finite differences, errors, reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck

_GEOMETRIES = [
    {"kernel_size": 2},
    {"kernel_size": (2, 3), "stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)},
    {"kernel_size": 3, "padding": 1, "stride": 2},
]


def _t(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize("shape", [(2, 3, 6, 7), (3, 5, 5)])
@pytest.mark.parametrize("kw", _GEOMETRIES, ids=str)
def test_unfold_and_fold_match_torch(rng, shape, kw):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(shape)
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cols, ref = F.unfold(a, **kw), torch.nn.functional.unfold(b, **kw)
    np.testing.assert_array_equal(cols.detach().numpy(), ref.detach().numpy())
    g = rng.standard_normal(cols.shape)
    cols.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    y = rng.standard_normal(cols.shape)
    a, b = tg.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    img, ref = F.fold(a, shape[-2:], **kw), torch.nn.functional.fold(b, shape[-2:], **kw)
    np.testing.assert_allclose(img.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    g = rng.standard_normal(img.shape)
    img.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


def test_unfold_known_layout_and_fold_counts():
    x = tg.tensor(np.arange(9.0).reshape(1, 1, 3, 3))
    cols = F.unfold(x, 2)
    np.testing.assert_array_equal(
        cols.numpy()[0], [[0, 1, 3, 4], [1, 2, 4, 5], [3, 4, 6, 7], [4, 5, 7, 8]]
    )
    counts = F.fold(tg.ones(1, 4, 4, dtype=tg.float64), (3, 3), 2).numpy()[0, 0]
    np.testing.assert_array_equal(counts, [[1, 2, 1], [2, 4, 2], [1, 2, 1]])


def test_unfold_fold_gradcheck(rng):
    x = _t(rng.standard_normal((1, 2, 4, 4)))
    kw = {"kernel_size": 2, "padding": 1, "stride": 2, "dilation": 1}
    assert gradcheck(lambda t: F.unfold(t, **kw), (x,))
    y = _t(rng.standard_normal((1, 8, 9)))
    assert gradcheck(lambda t: F.fold(t, (4, 4), **kw), (y,))
    assert gradgradcheck(lambda t: F.fold(t, (4, 4), **kw) ** 2, (y,))


def test_unfold_fold_errors():
    x = tg.randn(1, 2, 5, 5)
    with pytest.raises(RuntimeError, match="kernel size should be greater than zero"):
        F.unfold(x, 0)
    with pytest.raises(RuntimeError, match="stride should be greater than zero"):
        F.unfold(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="padding should be non-negative"):
        F.unfold(x, 2, padding=-1)
    with pytest.raises(RuntimeError, match="dilation should be greater than zero"):
        F.unfold(x, 2, dilation=0)
    with pytest.raises(RuntimeError, match="kernel_size equals to 2, but got size 3"):
        F.unfold(x, (2, 2, 2))
    with pytest.raises(RuntimeError, match=r"calculated shape of the array of sliding blocks"):
        F.unfold(tg.randn(1, 2, 2, 2), 3)
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.unfold(tg.randn(5, 5), 3)
    with pytest.raises(RuntimeError, match=r"divisible by the product of kernel_size.*=7"):
        F.fold(tg.randn(1, 7, 9), (4, 4), 2)
    with pytest.raises(RuntimeError, match=r"sliding blocks 3 \* 3 = 9, but got input.size\(2\)=8"):
        F.fold(tg.randn(1, 8, 8), (4, 4), 2)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D"):
        F.fold(tg.randn(9), (4, 4), 2)
    with pytest.raises(RuntimeError, match="output_size equals to 2"):
        F.fold(tg.randn(1, 8, 9), (4, 4, 4), 2)


def test_unfold_fold_layers():
    assert repr(tg.nn.Unfold(3)) == "Unfold(kernel_size=3, dilation=1, padding=0, stride=1)"
    assert repr(tg.nn.Unfold((2, 3), stride=(1, 2))) == (
        "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=(1, 2))"
    )
    assert repr(tg.nn.Fold((4, 5), 2, padding=1)) == (
        "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=1, stride=1)"
    )
    x = tg.randn(2, 3, 4, 5)
    cols = tg.nn.Unfold(2, padding=1)(x)
    assert cols.shape == (2, 12, 30)
    back = tg.nn.Fold((4, 5), 2, padding=1)(cols)
    np.testing.assert_allclose(back.numpy(), x.numpy() * 4, rtol=1e-6)  # every pixel in 4 blocks


# ---------------------------------------------------------------- adaptive max pooling
@pytest.mark.parametrize(
    ("nd", "shape", "size"),
    [
        (1, (2, 3, 7), 3),
        (1, (2, 3, 7), 7),
        (1, (2, 3, 7), 10),
        (1, (3, 7), 1),
        (2, (2, 3, 5, 7), 3),
        (2, (2, 3, 5, 7), (2, None)),
        (2, (2, 3, 5, 7), (5, 9)),
        (2, (3, 6, 6), 4),
    ],
)
def test_adaptive_max_pool_matches_torch(rng, nd, shape, size):
    torch = pytest.importorskip("torch")
    x = rng.integers(0, 4, shape).astype(np.float64)  # many ties: the first maximum wins
    ours, theirs = (
        (F.adaptive_max_pool1d, torch.nn.functional.adaptive_max_pool1d)
        if nd == 1
        else (F.adaptive_max_pool2d, torch.nn.functional.adaptive_max_pool2d)
    )
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, idx = ours(a, size, return_indices=True)
    ref, ref_idx = theirs(b, size, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    assert idx.dtype == np.int64
    g = rng.standard_normal(out.shape)
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())


def test_adaptive_max_pool_values_nan_and_gradcheck(rng):
    out, idx = F.adaptive_max_pool1d(tg.tensor([[1.0, 5.0, 2.0, 7.0, 3.0]]), 3, True)
    np.testing.assert_array_equal(out.numpy(), [[5, 7, 7]])
    np.testing.assert_array_equal(idx.numpy(), [[1, 3, 3]])
    nan = F.adaptive_max_pool1d(tg.tensor([[[1.0, np.nan, 3.0, np.nan, 0.0]]]), 2, True)
    assert np.isnan(nan[0].numpy()).all()
    np.testing.assert_array_equal(nan[1].numpy(), [[[1, 3]]])  # the last NaN of each window
    x = _t(rng.permutation(30).reshape(1, 2, 3, 5) / 7.0)  # distinct values: a smooth max
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (2, 3)), (x,))
    assert F.adaptive_max_pool2d(tg.randn(1, 5, 5), 0).shape == (1, 0, 0)
    assert F.adaptive_max_pool2d(tg.randn(0, 3, 4, 4), 2).shape == (0, 3, 2, 2)


def test_adaptive_max_pool_errors_and_layers():
    with pytest.raises(RuntimeError, match=r"Expected 3D or 4D tensor, but got: \[5, 5\]"):
        F.adaptive_max_pool2d(tg.randn(5, 5), 2)
    with pytest.raises(RuntimeError, match="dimension 1 being empty"):
        F.adaptive_max_pool2d(tg.randn(1, 0, 5), 2)
    with pytest.raises(ValueError, match="an int or a pair"):
        F.adaptive_max_pool2d(tg.randn(1, 5, 5), (2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions, but got 4-dimensional"):
        F.adaptive_max_pool1d(tg.randn(2, 3, 5, 4), 3)
    with pytest.raises(RuntimeError, match="should contain one int"):
        F.adaptive_max_pool1d(tg.randn(2, 5), (3, 3))
    assert repr(tg.nn.AdaptiveMaxPool2d((3, None))) == "AdaptiveMaxPool2d(output_size=(3, None))"
    layer = tg.nn.AdaptiveMaxPool1d(3, return_indices=True)
    assert repr(layer) == "AdaptiveMaxPool1d(output_size=3)"
    out, idx = layer(tg.randn(2, 3, 7))
    assert out.shape == idx.shape == (2, 3, 3)
    assert tg.nn.AdaptiveMaxPool2d(1)(tg.randn(2, 3, 4, 4)).shape == (2, 3, 1, 1)


# ---------------------------------------------------------------- distances
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf"), -1.0])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance_matches_torch(rng, p, keepdim):
    torch = pytest.importorskip("torch")
    x1, x2 = rng.standard_normal((4, 5)), rng.standard_normal(5)
    a, b = tg.tensor(x1, requires_grad=True), torch.tensor(x1, requires_grad=True)
    out = F.pairwise_distance(a, tg.tensor(x2), p=p, keepdim=keepdim)
    ref = torch.nn.functional.pairwise_distance(b, torch.tensor(x2), p=p, keepdim=keepdim)
    assert out.shape == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    if p == 0:  # a count: PyTorch records no gradient, ours is zeros
        assert b.grad is None and not a.grad.numpy().any()
    else:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    layer = tg.nn.PairwiseDistance(p=p, keepdim=keepdim)
    np.testing.assert_allclose(
        layer(tg.tensor(x1), tg.tensor(x2)).numpy(), ref.detach().numpy(), rtol=1e-12
    )


def test_pairwise_distance_values_gradcheck_errors(rng):
    d = F.pairwise_distance(tg.tensor([[0.0, 0.0]]), tg.tensor([[3.0, 4.0]]), eps=0.0)
    np.testing.assert_allclose(d.numpy(), [5.0])
    same = F.pairwise_distance(tg.tensor([[1.0, 2.0]]), tg.tensor([[1.0, 2.0]]))
    np.testing.assert_allclose(same.numpy(), [np.sqrt(2) * 1e-6], rtol=1e-5)
    x1, x2 = _t(rng.standard_normal((3, 4))), _t(rng.standard_normal((3, 4)))
    assert gradcheck(lambda a, b: F.pairwise_distance(a, b), (x1, x2))
    assert F.pairwise_distance(tg.randn(4), tg.randn(4)).shape == ()
    with pytest.raises(ValueError, match="could not be broadcast"):
        F.pairwise_distance(tg.randn(3, 4), tg.randn(3, 5))
    with pytest.raises(TypeError, match="x2 must be a Tensor"):
        F.pairwise_distance(tg.randn(3, 4), [1.0, 2.0, 3.0, 4.0])
    assert repr(tg.nn.PairwiseDistance()) == "PairwiseDistance()"


def test_cosine_similarity_layer_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x1, x2 = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 4, 2))
    for dim in (1, -1):
        ours = tg.nn.CosineSimilarity(dim=dim)(tg.tensor(x1), tg.tensor(x2))
        ref = torch.nn.CosineSimilarity(dim=dim)(torch.tensor(x1), torch.tensor(x2))
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)
    assert repr(tg.nn.CosineSimilarity()) == "CosineSimilarity()"


def test_torch_facade_reaches_patch_layers():
    from tapegrad.compat import torch as ttorch

    for name in ("Unfold", "Fold", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"):
        assert getattr(ttorch.nn, name) is getattr(tg.nn, name)
    assert ttorch.nn.PairwiseDistance is tg.nn.PairwiseDistance
    assert ttorch.nn.CosineSimilarity is tg.nn.CosineSimilarity
    for name in ("unfold", "fold", "adaptive_max_pool1d", "adaptive_max_pool2d"):
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)
    assert ttorch.nn.functional.pairwise_distance is F.pairwise_distance
