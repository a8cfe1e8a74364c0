"""Margin, embedding and likelihood losses: values and gradients vs PyTorch (every reduction),
finite differences in float64, errors for bad input, module options and reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn
from tapegrad.autograd import gradcheck

REDUCTIONS = ["none", "mean", "sum"]
R = np.random.default_rng(0)


def _r(*shape):
    return R.standard_normal(shape)


def _sign(*shape):
    return np.where(R.random(shape) < 0.5, -1.0, 1.0)


def _pos(*shape):
    return R.random(shape) + 0.1


MLM_TARGET = np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [-1, 2, 0, 0, 0], [0, 1, 2, 3, 4]])

# (name, arrays, kwargs, indices of the arrays that are constants)
CASES = [
    ("margin_ranking_loss", [_r(5), _r(5), _sign(5)], {"margin": 0.3}, ()),
    ("margin_ranking_loss", [_r(3, 4), _r(3, 4), _sign(3, 4)], {}, ()),
    ("triplet_margin_loss", [_r(4, 5), _r(4, 5), _r(4, 5)], {}, ()),
    ("triplet_margin_loss", [_r(4, 5), _r(4, 5), _r(4, 5)], {"p": 1.0}, ()),
    ("triplet_margin_loss", [_r(4, 5), _r(4, 5), _r(4, 5)], {"p": 3.0, "swap": True}, ()),
    ("triplet_margin_loss", [_r(4, 5), _r(4, 5), _r(4, 5)], {"eps": 1e-3, "margin": 2.0}, ()),
    ("triplet_margin_loss", [_r(5), _r(5), _r(5)], {}, ()),
    ("triplet_margin_loss", [_r(2, 3, 5), _r(2, 3, 5), _r(2, 3, 5)], {}, ()),
    ("triplet_margin_with_distance_loss", [_r(4, 5), _r(4, 5), _r(4, 5)], {"swap": True}, ()),
    ("cosine_embedding_loss", [_r(4, 5), _r(4, 5), _sign(4)], {"margin": 0.2}, (2,)),
    ("cosine_embedding_loss", [_r(5), _r(5), np.array(-1.0)], {"margin": -0.5}, (2,)),
    ("hinge_embedding_loss", [_r(4, 5), _sign(4, 5)], {"margin": 0.5}, (1,)),
    ("soft_margin_loss", [_r(4, 5), _sign(4, 5)], {}, (1,)),
    ("poisson_nll_loss", [_r(4, 5), R.poisson(2, (4, 5)) * 1.0], {}, ()),
    ("poisson_nll_loss", [_r(4, 5), R.poisson(2, (4, 5)) * 1.0], {"full": True}, (1,)),
    ("poisson_nll_loss", [_pos(4, 5), R.poisson(2, (4, 5)) * 1.0], {"log_input": False}, ()),
    (
        "poisson_nll_loss",
        [_pos(4, 5), R.poisson(2, (4, 5)) * 1.0],
        {"log_input": False, "full": True, "eps": 1e-3},
        (1,),
    ),
    ("gaussian_nll_loss", [_r(4, 5), _r(4, 5), _pos(4, 5)], {"full": True}, ()),
    ("gaussian_nll_loss", [_r(4, 5), _r(4, 5), _pos(4)], {}, ()),
    ("gaussian_nll_loss", [_r(4, 5), _r(4, 5), _pos(4, 1)], {}, ()),
    ("gaussian_nll_loss", [_r(2, 3, 4), _r(2, 3, 4), _pos(2, 1, 4)], {}, ()),
    ("gaussian_nll_loss", [_r(4, 5), _r(4, 5), R.random((4, 5)) * 1e-6], {"eps": 1e-5}, ()),
    ("multilabel_soft_margin_loss", [_r(4, 5), (R.random((4, 5)) < 0.5) * 1.0], {}, ()),
    ("multilabel_margin_loss", [_r(4, 5), MLM_TARGET], {}, (1,)),
    ("multilabel_margin_loss", [_r(5), MLM_TARGET[0]], {}, (1,)),
    ("multi_margin_loss", [_r(4, 5), np.array([0, 4, 2, 2])], {}, (1,)),
    ("multi_margin_loss", [_r(4, 5), np.array([0, 4, 2, 2])], {"p": 2, "margin": 0.5}, (1,)),
    ("multi_margin_loss", [_r(5), np.array(3)], {}, (1,)),
]


def _id(case):
    return case[0] + "-" + "-".join(f"{k}={v}" for k, v in case[2].items())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_values_and_gradients_vs_torch(case, reduction):
    torch = pytest.importorskip("torch")
    name, arrays, kwargs, constants = case
    ours = [tg.tensor(a, requires_grad=i not in constants) for i, a in enumerate(arrays)]
    theirs = [torch.from_numpy(a).requires_grad_(i not in constants) for i, a in enumerate(arrays)]
    lo = getattr(F, name)(*ours, reduction=reduction, **kwargs)
    lt = getattr(torch.nn.functional, name)(*theirs, reduction=reduction, **kwargs)
    assert lo.shape == tuple(lt.shape)
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-10, atol=1e-12)
    head = np.random.default_rng(3).standard_normal(lo.shape)
    lo.backward(tg.tensor(head))
    lt.backward(torch.from_numpy(head))
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        if i not in constants:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)


# below eps the variance is clamped for the value only (PyTorch's straight-through gradient),
# which finite differences cannot see: that case is checked by name below
_CLAMPED = "gaussian_nll_loss-eps=1e-05"


@pytest.mark.parametrize("case", [c for c in CASES if _id(c) != _CLAMPED], ids=_id)
def test_gradcheck(case):
    name, arrays, kwargs, constants = case
    ins = [tg.tensor(a, requires_grad=i not in constants) for i, a in enumerate(arrays)]
    assert gradcheck(lambda *xs: getattr(F, name)(*xs, reduction="sum", **kwargs), tuple(ins))


def test_custom_distance_and_weights_vs_torch():
    torch = pytest.importorskip("torch")
    a, p, n = _r(4, 5), _r(4, 5), _r(4, 5)
    ours = F.triplet_margin_with_distance_loss(
        *map(tg.tensor, (a, p, n)), distance_function=lambda x, y: 1 - F.cosine_similarity(x, y)
    )
    theirs = torch.nn.functional.triplet_margin_with_distance_loss(
        *map(torch.tensor, (a, p, n)),
        distance_function=lambda x, y: 1 - torch.nn.functional.cosine_similarity(x, y),
    )
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    x, w = _r(4, 5), R.random(5)
    for name, t in [
        ("multi_margin_loss", np.array([0, 1, 2, 4])),
        ("multilabel_soft_margin_loss", (R.random((4, 5)) < 0.5) * 1.0),
    ]:
        for red in REDUCTIONS:
            o = getattr(F, name)(tg.tensor(x), tg.tensor(t), weight=tg.tensor(w), reduction=red)
            th = getattr(torch.nn.functional, name)(
                torch.tensor(x), torch.tensor(t), weight=torch.tensor(w), reduction=red
            )
            np.testing.assert_allclose(o.numpy(), th.numpy(), rtol=1e-12)


def test_known_values():
    x = tg.tensor([0.1, 0.2, 0.4, 0.8])
    # targets 3 and 0 against the others 1 and 2: (0.4 + 0.6 + 1.1 + 1.3) / 4
    assert F.multilabel_margin_loss(x, tg.tensor([3, 0, -1, 1])).item() == pytest.approx(0.85)
    # (1 - 0.7) + (1 - 0.6) + (1 - 0.4), over 4 classes
    assert F.multi_margin_loss(x.reshape(1, 4), tg.tensor([3])).item() == pytest.approx(0.325)
    assert F.poisson_nll_loss(tg.tensor([0.0]), tg.tensor([2.0])).item() == pytest.approx(1.0)
    got = F.hinge_embedding_loss(tg.tensor([0.3, 2.0]), tg.tensor([1.0, -1.0]))
    assert got.item() == pytest.approx(0.15)
    got = F.margin_ranking_loss(tg.tensor([1.0]), tg.tensor([0.0]), tg.tensor([1.0]), margin=2.0)
    assert got.item() == pytest.approx(1.0)
    assert F.gaussian_nll_loss(tg.ones(3), tg.ones(3), 1.0).item() == 0.0
    d = F.pairwise_distance(tg.zeros(2, 3), tg.ones(2, 3), eps=0.0)
    np.testing.assert_allclose(d.numpy(), [3**0.5] * 2)


def test_gaussian_var_clamp_passes_gradient():
    # var below eps is clamped for the value; its gradient is taken at the clamped value
    var = tg.tensor([1e-9, 4.0], dtype=tg.float64, requires_grad=True)
    zeros, target = tg.zeros(2, dtype=tg.float64), tg.tensor([1.0, 2.0], dtype=tg.float64)
    loss = F.gaussian_nll_loss(zeros, target, var, eps=1e-3, reduction="sum")
    assert loss.item() == pytest.approx(0.5 * (np.log(1e-3) + 1e3 + np.log(4.0) + 1.0))
    loss.backward()
    # d/dv 0.5 (log v + d^2 / v) = 0.5 (1/v - d^2/v^2) at v = 1e-3 and v = 4
    np.testing.assert_allclose(var.grad.numpy(), [0.5 * (1e3 - 1e6), 0.5 * (0.25 - 0.25)])


def test_modules_match_functional_and_repr():
    x, y = tg.tensor(_r(4, 5)), tg.tensor(_sign(4, 5))
    cases = [
        (nn.HingeEmbeddingLoss(margin=0.5, reduction="sum"), (x, y), F.hinge_embedding_loss),
        (nn.SoftMarginLoss(reduction="none"), (x, y), F.soft_margin_loss),
        (nn.PoissonNLLLoss(full=True, eps=1e-4), (x, y.abs()), F.poisson_nll_loss),
        (
            nn.MultiMarginLoss(p=2, weight=[1.0, 2.0, 1.0, 1.0, 3.0]),
            (x, tg.tensor([0, 1, 4, 2])),
            F.multi_margin_loss,
        ),
    ]
    for module, args, fn in cases:
        opts = {k: getattr(module, k) for k in ("margin", "full", "eps", "p") if hasattr(module, k)}
        if getattr(module, "weight", None) is not None:
            opts["weight"] = module.weight
        expect = fn(*args, reduction=module.reduction, **opts)
        np.testing.assert_allclose(module(*args).numpy(), expect.numpy())
    assert repr(nn.TripletMarginLoss(margin=0.5, reduction="sum")) == "TripletMarginLoss()"
    assert repr(nn.GaussianNLLLoss(full=True)) == "GaussianNLLLoss()"
    assert nn.MultiLabelSoftMarginLoss(weight=[1.0, 2.0]).weight.shape == (2,)
    assert nn.MarginRankingLoss(size_average=False).reduction == "sum"
    assert nn.CosineEmbeddingLoss(reduce=False).reduction == "none"


def test_torch_facade_names():
    from tapegrad.compat import torch as ttorch

    for name in ["MarginRankingLoss", "TripletMarginWithDistanceLoss", "MultiLabelMarginLoss"]:
        assert getattr(ttorch.nn, name) is getattr(nn, name)
    for name in ["triplet_margin_loss", "gaussian_nll_loss", "pairwise_distance"]:
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)


def _raises(exc, match, fn, *args, **kwargs):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_errors():
    x = tg.tensor(_r(3, 4))
    _raises(ValueError, "reduction must be one of", F.soft_margin_loss, x, x, reduction="avg")
    _raises(
        ValueError, "margin_ranking_loss: reduction", F.margin_ranking_loss, x, x, x, reduction="x"
    )
    _raises(RuntimeError, "same number of dimensions", F.margin_ranking_loss, x, x, tg.ones(3))
    _raises(RuntimeError, "don't broadcast", F.hinge_embedding_loss, x, tg.ones(3, 5))
    _raises(
        RuntimeError,
        "anchor 2D, positive 2D, and negative 1D",
        F.triplet_margin_loss,
        x,
        x,
        tg.ones(4),
    )
    _raises(ValueError, "margin must be greater than 0", F.triplet_margin_loss, x, x, x, margin=0)
    _raises(
        ValueError, "margin must be greater than 0", nn.TripletMarginWithDistanceLoss, margin=-1.0
    )
    _raises(
        TypeError,
        "distance_function must be a callable",
        F.triplet_margin_with_distance_loss,
        x,
        x,
        x,
        distance_function=3,
    )
    _raises(
        RuntimeError, "multi-target not supported", F.cosine_embedding_loss, x, x, tg.ones(3, 1)
    )
    _raises(
        RuntimeError,
        "1-D target tensor expects 2-D input",
        F.cosine_embedding_loss,
        x,
        tg.ones(3),
        tg.ones(3),
    )
    _raises(
        ValueError,
        "var of shape \\(3, 5\\) is of incorrect size",
        F.gaussian_nll_loss,
        x,
        x,
        tg.ones(3, 5),
    )
    _raises(ValueError, "var has negative entries", F.gaussian_nll_loss, x, x, -tg.ones(3, 4))
    _raises(ValueError, "var has negative entries", F.gaussian_nll_loss, x, x, -1.0)
    _raises(ValueError, "only p == 1 and p == 2", F.multi_margin_loss, x, tg.tensor([0, 1, 2]), p=3)
    _raises(ValueError, "only p == 1 and p == 2", nn.MultiMarginLoss, p=3)
    _raises(
        ValueError,
        "weight must be one-dimensional",
        F.multi_margin_loss,
        x,
        tg.tensor([0, 1, 2]),
        weight=tg.ones(2, 2),
    )
    _raises(
        RuntimeError,
        "inconsistent weight size, expected 4",
        F.multi_margin_loss,
        x,
        tg.tensor([0, 1, 2]),
        weight=tg.ones(3),
    )
    _raises(
        RuntimeError, "class indices in \\[0, 4\\)", F.multi_margin_loss, x, tg.tensor([0, 5, 1])
    )
    _raises(
        RuntimeError,
        "expected size \\(3,\\) but got \\(2,\\)",
        F.multi_margin_loss,
        x,
        tg.tensor([0, 1]),
    )
    _raises(RuntimeError, "target.long\\(\\)", F.multi_margin_loss, x, tg.tensor([0.0, 1.0, 2.0]))
    _raises(
        RuntimeError,
        "\\(C,\\) vector or \\(N, C\\) matrix",
        F.multi_margin_loss,
        tg.ones(2, 3, 4),
        tg.tensor([0, 1]),
    )
    _raises(
        RuntimeError,
        "inconsistent target size \\(2, 4\\)",
        F.multilabel_margin_loss,
        x,
        tg.tensor([[0, 1, -1, 0]] * 2),
    )
    _raises(RuntimeError, "or -1", F.multilabel_margin_loss, x, tg.tensor([[0, 5, -1, 0]] * 3))
    _raises(TypeError, "input must be a Tensor", F.soft_margin_loss, [1.0], x)
