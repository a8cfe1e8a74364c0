"""Losses against PyTorch, every reduction: values and gradients of input (and target)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn

REDUCTIONS = ["none", "mean", "sum"]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _pair(torch, a, grad=True):
    g = grad and a.dtype.kind == "f"
    return tg.tensor(a, requires_grad=g), torch.from_numpy(a).requires_grad_(g)


def _check(torch, ours_fn, theirs_fn, *arrays, rtol=1e-10, atol=1e-12):
    pairs = [_pair(torch, a) for a in arrays]
    lo = ours_fn(*[p[0] for p in pairs])
    lt = theirs_fn(*[p[1] for p in pairs])
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=rtol, atol=atol)
    head = np.random.default_rng(3).standard_normal(lt.shape)
    lo.backward(tg.tensor(head))
    lt.backward(torch.from_numpy(head))
    for o, t in pairs:
        if t.requires_grad:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- regression losses
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"])
def test_regression_losses(torch, name, reduction):
    _check(
        torch,
        getattr(nn, name)(reduction=reduction),
        getattr(torch.nn, name)(reduction=reduction),
        _x(4, 3) * 2,
        _x(4, 3, seed=1),
    )


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_smooth_l1_beta(torch, beta):
    _check(
        torch,
        lambda a, b: F.smooth_l1_loss(a, b, beta=beta),
        lambda a, b: torch.nn.functional.smooth_l1_loss(a, b, beta=beta),
        _x(5) * 2,
        _x(5, seed=1),
    )


def test_regression_shape_mismatch_warns_like_torch():
    with pytest.warns(UserWarning, match="different to the input size"):
        F.mse_loss(tg.randn(4, 1), tg.randn(4))


# ---------------------------------------------------------------- cross-entropy and NLL
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"label_smoothing": 0.15},
        {"ignore_index": 1},
        {"weight": True},
        {"weight": True, "label_smoothing": 0.2, "ignore_index": 0},
    ],
)
def test_cross_entropy(torch, reduction, kwargs):
    x, t = _x(7, 4) * 3, np.random.default_rng(2).integers(0, 4, size=7)
    w = np.random.default_rng(4).uniform(0.5, 2, size=4)
    kw = dict(kwargs, reduction=reduction)
    if kw.pop("weight", None):
        ours_fn = nn.CrossEntropyLoss(weight=tg.tensor(w), **kw)
        theirs_fn = torch.nn.CrossEntropyLoss(weight=torch.from_numpy(w), **kw)
    else:
        ours_fn, theirs_fn = nn.CrossEntropyLoss(**kw), torch.nn.CrossEntropyLoss(**kw)
    _check(torch, ours_fn, theirs_fn, x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_targets(torch, reduction):
    x, t = _x(2, 3, 4, 5), np.random.default_rng(2).integers(0, 3, size=(2, 4, 5))
    t[0, 0, :2] = -100
    _check(
        torch,
        lambda a, b: F.cross_entropy(a, b, reduction=reduction, label_smoothing=0.1),
        lambda a, b: torch.nn.functional.cross_entropy(
            a, b, reduction=reduction, label_smoothing=0.1
        ),
        x,
        t,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probability_targets(torch, reduction, smoothing):
    x = _x(5, 4)
    p = np.random.default_rng(1).dirichlet(np.ones(4), size=5)
    w = np.random.default_rng(4).uniform(0.5, 2, size=4)
    _check(
        torch,
        lambda a, b: F.cross_entropy(
            a, b, weight=tg.tensor(w), reduction=reduction, label_smoothing=smoothing
        ),
        lambda a, b: torch.nn.functional.cross_entropy(
            a, b, weight=torch.from_numpy(w), reduction=reduction, label_smoothing=smoothing
        ),
        x,
        p,
    )


def test_cross_entropy_unbatched(torch):
    _check(
        torch,
        lambda a, b: F.cross_entropy(a, b),
        lambda a, b: torch.nn.functional.cross_entropy(a, b),
        _x(5),
        np.array(2),
    )


def test_cross_entropy_is_stable_for_huge_logits():
    x = tg.tensor([[1000.0, -1000.0, 0.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.cross_entropy(x, tg.tensor([1]))
        loss.backward()
    assert loss.item() == pytest.approx(2000.0)
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, -1.0, 0.0]], atol=1e-6)


def test_cross_entropy_float32_stays_float32():
    x = tg.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, tg.tensor([0, 1, 2, 0]))
    loss.backward()
    assert loss.dtype == np.float32 and x.grad.dtype == np.float32


def test_cross_entropy_all_ignored_is_nan_like_torch():
    loss = F.cross_entropy(tg.randn(2, 3), tg.tensor([-100, -100]))
    assert np.isnan(loss.item())


def test_cross_entropy_errors():
    x = tg.randn(4, 3)
    with pytest.raises(IndexError, match=r"class indices in \[0, 3\).*got values in \[0, 3\]"):
        F.cross_entropy(x, tg.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match=r"target shape \(3,\) doesn't match input shape \(4, 3\)"):
        F.cross_entropy(x, tg.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.cross_entropy(x, tg.tensor([0, 1, 2, 1]), reduction="avg")
    with pytest.raises(ValueError, match="probability targets must have the input's shape"):
        F.cross_entropy(x, tg.randn(4, 2))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, tg.tensor([0, 1, 2, 1]), label_smoothing=1.5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(torch, reduction):
    logp = torch.log_softmax(torch.from_numpy(_x(6, 5)), 1).detach().numpy()
    t = np.array([0, 4, 2, -100, 1, 1])
    w = np.linspace(0.5, 2, 5)
    _check(
        torch,
        nn.NLLLoss(weight=tg.tensor(w), reduction=reduction),
        torch.nn.NLLLoss(weight=torch.from_numpy(w), reduction=reduction),
        logp,
        t,
    )


def test_log_softmax_then_nll_equals_cross_entropy():
    x, t = tg.randn(5, 4, dtype=tg.float64), tg.tensor([0, 3, 1, 1, 2])
    a = F.nll_loss(F.log_softmax(x, dim=1), t).item()
    assert a == pytest.approx(F.cross_entropy(x, t).item(), rel=1e-12)


# ---------------------------------------------------------------- binary losses
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce(torch, reduction):
    p = np.random.default_rng(0).uniform(0.05, 0.95, size=(4, 3))
    y = np.random.default_rng(1).uniform(0, 1, size=(4, 3))
    w = np.random.default_rng(2).uniform(0.5, 2, size=(4, 3))
    _check(
        torch,
        nn.BCELoss(weight=tg.tensor(w), reduction=reduction),
        torch.nn.BCELoss(weight=torch.from_numpy(w), reduction=reduction),
        p,
        y,
    )


def test_bce_at_exact_zero_and_one_is_finite(torch):
    p = np.array([0.0, 1.0, 0.5])
    y = np.array([1.0, 0.0, 1.0])
    lo = F.binary_cross_entropy(tg.tensor(p), tg.tensor(y), reduction="none").numpy()
    lt = torch.nn.functional.binary_cross_entropy(
        torch.from_numpy(p), torch.from_numpy(y), reduction="none"
    ).numpy()
    np.testing.assert_allclose(lo, lt)


def test_bce_rejects_non_probabilities():
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits"):
        F.binary_cross_entropy(tg.tensor([1.5]), tg.tensor([1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_with_logits(torch, reduction, weighted):
    x = _x(4, 3) * 4
    y = np.random.default_rng(1).uniform(0, 1, size=(4, 3))
    kw_o, kw_t = {}, {}
    if weighted:
        w = np.random.default_rng(2).uniform(0.5, 2, size=(3,))
        pw = np.array([0.5, 2.0, 3.0])
        kw_o = {"weight": tg.tensor(w), "pos_weight": tg.tensor(pw)}
        kw_t = {"weight": torch.from_numpy(w), "pos_weight": torch.from_numpy(pw)}
    _check(
        torch,
        nn.BCEWithLogitsLoss(reduction=reduction, **kw_o),
        torch.nn.BCEWithLogitsLoss(reduction=reduction, **kw_t),
        x,
        y,
    )


def test_bce_with_logits_is_stable():
    x = tg.tensor([800.0, -800.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.binary_cross_entropy_with_logits(x, tg.tensor([0.0, 1.0]), reduction="sum")
        loss.backward()
    assert loss.item() == pytest.approx(1600.0)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0])


# ---------------------------------------------------------------- KL divergence
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(torch, reduction, log_target):
    x = torch.log_softmax(torch.from_numpy(_x(4, 5)), 1).numpy()
    t = np.random.default_rng(1).dirichlet(np.ones(5), size=4)
    if log_target:
        t = np.log(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that 'mean' is not the KL mean
        _check(
            torch,
            nn.KLDivLoss(reduction=reduction, log_target=log_target),
            torch.nn.KLDivLoss(reduction=reduction, log_target=log_target),
            x,
            t,
        )


def test_kl_div_zero_target_contributes_nothing():
    loss = F.kl_div(tg.tensor([-1.0, -2.0]), tg.tensor([0.0, 1.0]), reduction="sum")
    assert loss.item() == pytest.approx(2.0)


def test_loss_module_reduction_validation_and_repr():
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss(reduction="batchmean")
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.L1Loss(reduction="sum")) == "L1Loss(reduction='sum')"


# ---------------------------------------------------------------- finite differences
@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: F.mse_loss(a, b),
        lambda a, b: F.l1_loss(a, b, reduction="sum"),
        lambda a, b: F.smooth_l1_loss(a, b, beta=0.7),
        lambda a, b: F.huber_loss(a, b, reduction="none", delta=0.5),
        lambda a, b: F.cross_entropy(a, F.softmax(b, dim=1), label_smoothing=0.1),
        lambda a, b: F.kl_div(F.log_softmax(a, dim=1), F.softmax(b, dim=1), reduction="batchmean"),
        lambda a, b: F.binary_cross_entropy_with_logits(a, F.sigmoid(b)),
    ],
)
def test_losses_gradcheck(fn):
    from tapegrad.autograd import gradcheck

    rng = np.random.default_rng(0)
    a = tg.tensor(rng.standard_normal((3, 4)) * 2, requires_grad=True)
    b = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(fn, (a, b))


@pytest.mark.parametrize("name", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
def test_table_bce_ops_check_target_and_weight_shapes(name, torch):
    """The internal ops check shapes as PyTorch does (a weight may broadcast to the input's
    shape, never grow it), not only the public functions (issue 12)."""
    from tapegrad.ops.registry import OPS

    op = OPS[name]
    x, y = tg.tensor(0.3), tg.tensor(0.6)
    with pytest.raises(RuntimeError, match=rf"{name}: weight of shape \(3, 4\)"):
        op(x, y, weight=np.ones((3, 4)), reduction="none")
    with pytest.raises(RuntimeError):
        getattr(torch.nn.functional, name)(
            torch.tensor(0.3), torch.tensor(0.6), weight=torch.ones(3, 4), reduction="none"
        )
    with pytest.raises(ValueError, match=rf"{name}: target shape \(2,\)"):
        op(x, tg.tensor([0.1, 0.2]))
    ok = op(tg.tensor([0.3, 0.4]), tg.tensor([0.6, 0.1]), weight=np.array(2.0))
    assert np.isfinite(ok.item())


def test_huber_loss_refuses_a_non_positive_delta_and_warns_on_broadcasting():
    # delta = 0 gave a silent all-zero loss (PyTorch refuses it); a broadcast target warned in
    # mse/l1/smooth_l1 but not in huber (PyTorch warns in all four)
    x, y = tg.tensor(np.ones((3, 2))), tg.tensor(np.zeros((3, 2)))
    for delta in (0.0, -1.0):
        with pytest.raises(ValueError, match="huber_loss: delta must be positive"):
            F.huber_loss(x, y, delta=delta)
    with pytest.warns(UserWarning, match="huber_loss: using a target size"):
        F.huber_loss(x, tg.tensor(np.zeros((1, 2))))


def test_functional_embedding_refuses_what_it_does_not_do():
    # max_norm & co. went into *args/**kwargs: the renormalisation was silently skipped
    w = tg.tensor(np.arange(12.0).reshape(4, 3))
    for kw in ({"max_norm": 1.0}, {"scale_grad_by_freq": True}, {"sparse": True}):
        with pytest.raises(NotImplementedError, match="embedding: max_norm"):
            F.embedding(tg.tensor([0, 2]), w, **kw)
    assert F.embedding(tg.tensor([2]), w, None, None, 2.0).tolist() == [[6.0, 7.0, 8.0]]


def test_functional_pad_is_torchs():
    x = tg.tensor(np.arange(6.0).reshape(2, 3))
    assert F.pad(x, (1, 0), value=-1.0).tolist() == [[-1.0, 0.0, 1.0, 2.0], [-1.0, 3.0, 4.0, 5.0]]
    assert F.pad is tg.pad
