"""The Gluon losses beyond the regression and classification ones (test_mxnet_facade.py):
values from the formulas in MXNet 1.9.1's documentation, in float64, and gradients from
PyTorch's equivalents where one exists."""

import math

import numpy as np
import pytest

from tapegrad.compat import mxnet as mx
from tapegrad.compat.mxnet import autograd, gluon

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


def _arr(a):
    return mx.nd.array(a, dtype="float64")


def _value_and_grad(loss_fn, x, *rest):
    xs = _arr(x)
    xs.attach_grad()
    with autograd.record():
        out = loss_fn(xs, *rest)
    out.backward()
    return out.asnumpy(), xs.grad.asnumpy()


def test_hinge_and_squared_hinge():
    pred, label = RNG.normal(size=(5, 3)), np.sign(RNG.normal(size=(5, 3)))
    hinge = np.maximum(0, 1.5 - pred * label)
    out = gluon.loss.HingeLoss(margin=1.5)(_arr(pred), _arr(label))
    np.testing.assert_allclose(out.asnumpy(), hinge.mean(axis=1), rtol=1e-12)
    out = gluon.loss.SquaredHingeLoss(margin=1.5)(_arr(pred), _arr(label))
    np.testing.assert_allclose(out.asnumpy(), (hinge**2).mean(axis=1), rtol=1e-12)


def test_logistic_loss_signed_and_binary():
    pred, label01 = RNG.normal(size=(6, 2)) * 5, RNG.integers(0, 2, (6, 2)).astype(float)
    ref = np.log1p(np.exp(-pred * (2 * label01 - 1))).mean(axis=1)
    signed = gluon.loss.LogisticLoss()(_arr(pred), _arr(2 * label01 - 1))
    binary = gluon.loss.LogisticLoss(label_format="binary")(_arr(pred), _arr(label01))
    np.testing.assert_allclose(signed.asnumpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(binary.asnumpy(), ref, rtol=1e-12)
    with pytest.raises(ValueError, match="label_format must be"):
        gluon.loss.LogisticLoss(label_format="zero_one")


def test_kl_div_loss_against_torch():
    logits, target = RNG.normal(size=(4, 5)), RNG.dirichlet(np.ones(5), size=4)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    t_logp = torch.tensor(logp, requires_grad=True)
    ref = torch.nn.functional.kl_div(t_logp, torch.tensor(target), reduction="none").mean(1)
    ref.sum().backward()
    value, grad = _value_and_grad(gluon.loss.KLDivLoss(), logp, _arr(target))
    np.testing.assert_allclose(value, ref.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad, t_logp.grad.numpy(), rtol=1e-12)
    # from_logits=False applies log_softmax first
    out = gluon.loss.KLDivLoss(from_logits=False)(_arr(logits), _arr(target))
    np.testing.assert_allclose(out.asnumpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_triplet_loss_sums_squared_distances_per_sample():
    a, p, n = (RNG.normal(size=(4, 3, 2)) for _ in range(3))
    ref = np.maximum(0, ((p - a) ** 2 - (n - a) ** 2).sum(axis=(1, 2)) + 0.7)
    out = gluon.loss.TripletLoss(margin=0.7)(_arr(a), _arr(p), _arr(n))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-12)


def test_poisson_nll_loss_against_torch():
    pred, target = RNG.uniform(0.5, 3, (3, 4)), RNG.uniform(0, 5, (3, 4))
    for from_logits in (True, False):
        for full in (False, True):
            t_pred = torch.tensor(pred, requires_grad=True)
            ref = torch.nn.functional.poisson_nll_loss(
                t_pred, torch.tensor(target), log_input=from_logits, full=full, eps=1e-8
            )
            ref.backward()
            loss = gluon.loss.PoissonNLLLoss(from_logits=from_logits, compute_full=full)
            value, grad = _value_and_grad(loss, pred, _arr(target))
            assert value.shape == ()  # the mean over everything, as MXNet's
            np.testing.assert_allclose(value, ref.item(), rtol=1e-9)
            np.testing.assert_allclose(grad, t_pred.grad.numpy(), rtol=1e-9)


def test_cosine_embedding_loss_against_torch():
    x1, x2 = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    label = np.array([1, -1, 1, -1, -1], dtype=float)
    t1 = torch.tensor(x1, requires_grad=True)
    ref = torch.nn.functional.cosine_embedding_loss(
        t1, torch.tensor(x2), torch.tensor(label), margin=0.2, reduction="none"
    )
    ref.sum().backward()
    loss = gluon.loss.CosineEmbeddingLoss(margin=0.2)
    value, grad = _value_and_grad(loss, x1, _arr(x2), _arr(label))
    assert value.shape == (5, 1)  # MXNet keeps a column
    np.testing.assert_allclose(value[:, 0], ref.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad, t1.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_sdml_loss_is_kl_to_a_smoothed_identity():
    x1, x2, s = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), 0.3
    d = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=2)
    logp = -d - np.log(np.exp(-d).sum(axis=1, keepdims=True))
    target = np.where(np.eye(4) > 0, 1 - s, s / 3)
    ref = (target * (np.log(target + 1e-12) - logp)).sum(axis=1)
    out = gluon.loss.SDMLLoss(smoothing_parameter=s)(_arr(x1), _arr(x2))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-9)


@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_ctc_loss_against_torch(layout):
    t, n, c = 12, 3, 5  # class 4 is the blank (MXNet's "last")
    scores = RNG.normal(size=(t, n, c))
    labels = np.array([[1, 0, 2, -1], [3, 3, -1, -1], [0, 1, 0, 1]])  # -1 pads
    frames = np.array([12, 9, 10])
    lengths = np.array([3, 2, 4])
    t_scores = torch.tensor(scores, requires_grad=True)
    ref = torch.nn.functional.ctc_loss(
        torch.log_softmax(t_scores, 2),
        torch.tensor(np.where(labels < 0, 0, labels)),
        torch.tensor(frames),
        torch.tensor(lengths),
        blank=c - 1,
        reduction="none",
    )
    ref.sum().backward()
    x = scores if layout == "TNC" else scores.transpose(1, 0, 2)
    loss = gluon.loss.CTCLoss(layout=layout)
    value, grad = _value_and_grad(loss, x, _arr(labels), _arr(frames))  # lengths from -1
    np.testing.assert_allclose(value, ref.detach().numpy(), rtol=1e-9)
    expected = t_scores.grad.numpy()
    np.testing.assert_allclose(grad, expected if layout == "TNC" else expected.transpose(1, 0, 2))


def test_ctc_loss_label_lengths_and_an_impossible_alignment():
    loss = gluon.loss.CTCLoss(label_layout="TN")
    scores = mx.nd.ones((2, 4, 3))
    labels = _arr([[0, 1], [0, 0], [1, 1]])  # TN: sample 0 is [0, 0, 1], sample 1 [1, 0, 1]
    out = loss(scores, labels, None, _arr([2, 3])).asnumpy()
    # uniform scores: -log(number of alignments / 3**4); [0, 0] has 5 in 4 frames
    # (0b0b 0b00 00b0 0bb0 b0b0, b the blank)
    assert out[0] == pytest.approx(-math.log(5 / 3**4), rel=1e-6)
    # [1, 0, 1] needs 3 frames, gets 1: no alignment
    short = loss(scores, labels, _arr([4, 1]), _arr([2, 3])).asnumpy()
    assert np.isinf(short[1])
    with pytest.raises(IndexError, match="outside"):
        loss(scores, _arr([[0], [5]]).reshape((1, 2)))
