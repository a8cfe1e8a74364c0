"""F.ctc_loss / nn.CTCLoss: values and gradients against PyTorch, finite differences
through a log_softmax (first and second order), and the errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck


def _batch(rng, T=12, N=4, C=6, S=4, blank=0):
    x = rng.standard_normal((T, N, C))
    lp = x - np.log(np.exp(x).sum(2, keepdims=True))
    labels = [c for c in range(C) if c != blank]
    targets = rng.choice(labels, size=(N, S))
    targets[0, 1] = targets[0, 0]  # a repeated label needs a blank between the two
    in_len = rng.integers(S + 2, T + 1, size=N)
    in_len[0] = T
    tgt_len = rng.integers(1, S + 1, size=N)
    tgt_len[0] = S
    return lp, targets, in_len, tgt_len


def _torch_ctc(torch, lp, targets, in_len, tgt_len, **kw):
    t_lp = torch.tensor(lp, requires_grad=True)
    loss = torch.nn.functional.ctc_loss(
        t_lp, torch.tensor(targets), torch.tensor(in_len), torch.tensor(tgt_len), **kw
    )
    loss.sum().backward()
    return loss.detach().numpy(), t_lp.grad.numpy()


def _ours(lp, targets, in_len, tgt_len, **kw):
    x = tg.tensor(lp, requires_grad=True)
    loss = F.ctc_loss(x, tg.tensor(targets), tg.tensor(in_len), tg.tensor(tgt_len), **kw)
    loss.sum().backward()
    return loss.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("blank", [0, 3])
def test_matches_pytorch(reduction, blank):
    torch = pytest.importorskip("torch")
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(blank), blank=blank)
    want, want_g = _torch_ctc(torch, lp, targets, in_len, tgt_len, blank=blank, reduction=reduction)
    got, got_g = _ours(lp, targets, in_len, tgt_len, blank=blank, reduction=reduction)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # PyTorch's gradient for a leaf log_probs, exp(log_probs) term included (module docs)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-9, atol=1e-12)


def test_concatenated_targets_and_plain_length_lists():
    torch = pytest.importorskip("torch")
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(1))
    flat = np.concatenate([row[:n] for row, n in zip(targets, tgt_len)])
    want, want_g = _torch_ctc(torch, lp, flat, in_len, tgt_len, reduction="none")
    x = tg.tensor(lp, requires_grad=True)
    got = F.ctc_loss(x, tg.tensor(flat), list(in_len), tuple(tgt_len), reduction="none")
    got.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), want_g, rtol=1e-9, atol=1e-12)


def test_unbatched_input():
    torch = pytest.importorskip("torch")
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(2), N=1)
    t_lp = torch.tensor(lp[:, 0], requires_grad=True)
    want = torch.nn.functional.ctc_loss(
        t_lp, torch.tensor(targets[0]), (int(in_len[0]),), (int(tgt_len[0]),), reduction="sum"
    )
    want.backward()
    x = tg.tensor(lp[:, 0], requires_grad=True)
    got = F.ctc_loss(x, tg.tensor(targets[0]), int(in_len[0]), int(tgt_len[0]), reduction="sum")
    got.backward()
    assert got.shape == ()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), t_lp.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_empty_target_and_impossible_alignment():
    torch = pytest.importorskip("torch")
    lp, targets, _, _ = _batch(np.random.default_rng(3), T=6, N=3, S=4)
    lp = lp[:5]
    targets[2] = [1, 1, 1, 1]  # four repeats need 7 steps: 5 are too few
    in_len, tgt_len = np.array([5, 4, 5]), np.array([0, 2, 4])
    want, _ = _torch_ctc(torch, lp, targets, in_len, tgt_len, reduction="none")
    got, _ = _ours(lp, targets, in_len, tgt_len, reduction="none")
    assert np.isinf(want[2]) and np.isinf(got[2])
    np.testing.assert_allclose(got[:2], want[:2], rtol=1e-10)
    # zero_infinity: the impossible sample's loss and gradient are zero, the others as before
    want, want_g = _torch_ctc(
        torch, lp, targets, in_len, tgt_len, reduction="mean", zero_infinity=True
    )
    got, got_g = _ours(lp, targets, in_len, tgt_len, reduction="mean", zero_infinity=True)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-9, atol=1e-12)
    assert not got_g[:, 2].any()


def test_float32_matches_pytorch():
    torch = pytest.importorskip("torch")
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(4), T=40, N=3, C=10, S=12)
    lp = lp.astype(np.float32)
    want, want_g = _torch_ctc(torch, lp, targets, in_len, tgt_len)
    got, got_g = _ours(lp, targets, in_len, tgt_len)
    assert got.dtype == np.float32 and got_g.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-4, atol=1e-6)


def test_value_without_pytorch():
    # one blank-free label over two steps: paths "a a", "a _", "_ a" -> p = sum of products
    p = np.array([[0.5, 0.5], [0.25, 0.75]])  # per step: (blank, a)
    lp = tg.tensor(np.log(p)[:, None, :])
    loss = F.ctc_loss(lp, tg.tensor([[1]]), [2], [1], reduction="sum")
    want = 0.5 * 0.75 + 0.5 * 0.25 + 0.5 * 0.75
    np.testing.assert_allclose(loss.item(), -np.log(want), rtol=1e-12)


def test_gradients_through_log_softmax_by_finite_differences():
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(5), T=6, N=2, C=4, S=2)
    logits = tg.tensor(lp + 0.3, requires_grad=True)  # log_softmax takes the shift out

    def f(z):
        return F.ctc_loss(z.log_softmax(2), tg.tensor(targets), in_len, tgt_len)

    assert gradcheck(f, (logits,))
    assert gradgradcheck(f, (logits,))


def test_module():
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(6))
    module = tg.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    assert repr(module) == "CTCLoss()"
    args = (tg.tensor(lp), tg.tensor(targets), in_len, tgt_len)
    np.testing.assert_allclose(
        module(*args).item(), F.ctc_loss(*args, reduction="sum").item(), rtol=1e-12
    )


def test_bad_input():
    lp, targets, in_len, tgt_len = _batch(np.random.default_rng(7), T=8)
    x = tg.tensor(lp)
    t = tg.tensor(targets)
    with pytest.raises(ValueError, match="ctc_loss: input_lengths must be at most T = 8"):
        F.ctc_loss(x, t, in_len + 1, tgt_len)
    with pytest.raises(ValueError, match="ctc_loss: target_lengths must give one length per"):
        F.ctc_loss(x, t, in_len, tgt_len[:2])
    with pytest.raises(ValueError, match="ctc_loss: targets has 4 columns"):
        F.ctc_loss(x, t, in_len, np.full(4, 5))
    with pytest.raises(ValueError, match="target label 9 is not a class index"):
        F.ctc_loss(x, tg.tensor(np.full((4, 4), 9)), in_len, tgt_len)
    with pytest.raises(ValueError, match="blank must be a class index"):
        F.ctc_loss(x, t, in_len, tgt_len, blank=6)
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.ctc_loss(x, t, in_len, tgt_len, reduction="avg")
    with pytest.raises(TypeError, match="log_probs must be a floating-point Tensor"):
        F.ctc_loss(tg.tensor(targets), t, in_len, tgt_len)
    with pytest.raises(TypeError, match="targets must hold class indices"):
        F.ctc_loss(x, tg.tensor(targets.astype(float)), in_len, tgt_len)
    with pytest.raises(ValueError, match="concatenated targets hold 3 labels"):
        F.ctc_loss(x, tg.tensor([1, 2, 3]), in_len, tgt_len)
    with pytest.raises(ValueError, match="must not be negative"):
        F.ctc_loss(x, t, in_len, -tgt_len)
