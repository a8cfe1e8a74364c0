"""F.embedding_bag and nn.EmbeddingBag: values and gradients against PyTorch (ties, padding,
empty bags, per-sample weights), finite differences, errors, repr, state_dict keys."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck

_FLAT = np.array([0, 1, 2, 3, 5, 5, 1])
_CASES = [
    (_FLAT, np.array([0, 2, 2, 5]), {}),  # an empty bag in the middle
    (_FLAT, np.array([0, 2, 2, 5, 7]), {"include_last_offset": True}),
    (_FLAT, np.array([0, 2, 2, 5]), {"padding_idx": 5}),
    (_FLAT, np.array([0, 3, 7]), {"padding_idx": -1}),  # the last bag empty
    (np.array([[0, 1, 2], [3, 5, 5]]), None, {}),
    (np.array([[5, 5, 5], [3, 5, 5]]), None, {"padding_idx": 5}),  # a bag of only padding
]


@pytest.mark.parametrize(("idx", "offsets", "kw"), _CASES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_bag_matches_torch(rng, idx, offsets, kw, mode, weighted):
    torch = pytest.importorskip("torch")
    if weighted and mode != "sum":
        pytest.skip("per_sample_weights is for mode='sum' only")
    table = rng.integers(0, 3, (6, 4)).astype(np.float64)  # small integers: ties in "max"
    a, b = tg.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    psw = rng.standard_normal(idx.shape) if weighted else None
    pa = None if psw is None else tg.tensor(psw, requires_grad=True)
    pb = None if psw is None else torch.tensor(psw, requires_grad=True)
    ours = F.embedding_bag(
        tg.tensor(idx),
        a,
        None if offsets is None else tg.tensor(offsets),
        mode=mode,
        per_sample_weights=pa,
        **kw,
    )
    ref = torch.nn.functional.embedding_bag(
        torch.tensor(idx),
        b,
        None if offsets is None else torch.tensor(offsets),
        mode=mode,
        per_sample_weights=pb,
        **kw,
    )
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    g = rng.standard_normal(ours.shape)
    ours.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)
    if weighted:
        np.testing.assert_allclose(pa.grad.numpy(), pb.grad.numpy(), atol=1e-12)


def test_embedding_bag_known_values():
    w = tg.tensor(np.arange(12.0).reshape(4, 3))
    idx, off = tg.tensor([0, 1, 2, 3]), tg.tensor([0, 1])
    np.testing.assert_array_equal(F.embedding_bag(idx, w, off).numpy(), [[0, 1, 2], [6, 7, 8]])
    np.testing.assert_array_equal(
        F.embedding_bag(idx, w, tg.tensor([0, 4]), mode="max").numpy(), [[9, 10, 11], [0, 0, 0]]
    )
    weighted = F.embedding_bag(
        idx, w, off, mode="sum", per_sample_weights=tg.tensor([1.0, 2.0, 3.0, 4.0])
    )
    np.testing.assert_array_equal(weighted.numpy(), [[0, 1, 2], [60, 69, 78]])


def test_embedding_bag_gradcheck(rng):
    w = tg.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    psw = tg.tensor(rng.standard_normal(6), requires_grad=True)
    idx, off = tg.tensor([0, 4, 2, 2, 1, 3]), tg.tensor([0, 2, 5])
    assert gradcheck(lambda t: F.embedding_bag(idx, t, off), (w,))
    assert gradcheck(lambda t: F.embedding_bag(idx, t, off, mode="max"), (w,))
    assert gradcheck(
        lambda t, p: F.embedding_bag(idx, t, off, mode="sum", per_sample_weights=p), (w, psw)
    )


def test_embedding_bag_errors():
    w = tg.randn(4, 3)
    idx = tg.tensor([0, 1, 2, 3])
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(tg.tensor([[0, 1], [2, 3]]), w, tg.tensor([0, 1]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx, w)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(idx, w, tg.tensor([[0]]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx, w, tg.tensor([0]), mode="foo")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(idx, w, tg.tensor([0]), per_sample_weights=tg.ones(4))
    with pytest.raises(ValueError, match="must have the same shape as the input"):
        F.embedding_bag(idx, w, tg.tensor([0]), mode="sum", per_sample_weights=tg.ones(3))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx, w, tg.tensor([1, 3]))
    with pytest.raises(RuntimeError, match="can not be greater than input's length 4"):
        F.embedding_bag(idx, w, tg.tensor([0, 5]))
    with pytest.raises(IndexError, match="index out of range"):
        F.embedding_bag(tg.tensor([0, 7]), w, tg.tensor([0]))
    with pytest.raises(RuntimeError, match="must be integers"):
        F.embedding_bag(tg.tensor([0.0, 1.0]), w, tg.tensor([0]))
    with pytest.raises(RuntimeError, match="-4 through 3, but got 4"):
        F.embedding_bag(idx, w, tg.tensor([0]), padding_idx=4)
    with pytest.raises(NotImplementedError, match="max_norm"):
        F.embedding_bag(idx, w, tg.tensor([0]), max_norm=1.0)
    with pytest.raises(ValueError, match="padding_idx 4 must be within num_embeddings"):
        tg.nn.EmbeddingBag(4, 3, padding_idx=4)


def test_embedding_bag_layer(rng):
    torch = pytest.importorskip("torch")
    for kw in ({}, {"mode": "sum", "padding_idx": 0}, {"mode": "max"}):
        ours, theirs = tg.nn.EmbeddingBag(10, 3, **kw), torch.nn.EmbeddingBag(10, 3, **kw)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
    layer = tg.nn.EmbeddingBag(10, 3, padding_idx=-1)
    assert layer.padding_idx == 9 and not layer.weight.detach().numpy()[9].any()
    table = rng.standard_normal((10, 3)).astype(np.float32)
    ours = tg.nn.EmbeddingBag.from_pretrained(tg.tensor(table), mode="sum")
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), mode="sum")
    assert not ours.weight.requires_grad
    idx, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 4]
    np.testing.assert_allclose(
        ours(tg.tensor(idx), tg.tensor(off)).numpy(),
        theirs(torch.tensor(idx), torch.tensor(off)).numpy(),
        rtol=1e-6,
    )


def test_torch_facade_reaches_embedding_bag():
    from tapegrad.compat import torch as ttorch

    assert ttorch.nn.EmbeddingBag is tg.nn.EmbeddingBag
    assert ttorch.nn.functional.embedding_bag is F.embedding_bag
