"""Layers against PyTorch: same weights in, same outputs and gradients out; defaults; modes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _sync(ours, theirs):
    """Copy the PyTorch module's state into ours (float64 on both sides)."""
    theirs.double()
    ours.double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def _compare(torch, ours, theirs, x, rtol=1e-10, atol=1e-12):
    """Forward both on x (float64), backward a random head, compare outputs and all grads."""
    xt = torch.from_numpy(x).requires_grad_(x.dtype.kind == "f")
    xo = tg.tensor(x, requires_grad=x.dtype.kind == "f")
    out_t, out_o = theirs(xt), ours(xo)
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=rtol, atol=atol)
    head = np.random.default_rng(5).standard_normal(out_t.shape)
    out_t.backward(torch.from_numpy(head))
    out_o.backward(tg.tensor(head))
    if x.dtype.kind == "f":
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=atol)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=atol, err_msg=n)
    return out_o, out_t


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- Linear
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(torch, shape, bias):
    ours, theirs = nn.Linear(4, 3, bias=bias), torch.nn.Linear(4, 3, bias=bias)
    _sync(ours, theirs)
    _compare(torch, ours, theirs, _x(*shape))


def test_linear_defaults_match_torch(torch):
    ours, theirs = nn.Linear(20, 30), torch.nn.Linear(20, 30)
    assert [(n, p.shape) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()
    ]
    assert ours.weight.dtype == np.float32
    bound = 1 / math.sqrt(20)  # kaiming_uniform(a=sqrt(5)) and the bias both give 1/sqrt(fan_in)
    w, b = ours.weight.detach().numpy(), ours.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound  # actually spread over the range
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_linear_init_is_seeded():
    tg.manual_seed(3)
    a = nn.Linear(5, 5).weight.detach().numpy()
    tg.manual_seed(3)
    b = nn.Linear(5, 5).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)


def test_linear_feature_mismatch_error():
    with pytest.raises(RuntimeError, match=r"input has 5 features.*\(out_features, in_features\)"):
        nn.Linear(4, 3)(tg.randn(2, 5))


def test_lazy_linear_infers_in_features():
    lin = nn.Linear(None, 3)
    assert lin.in_features is None
    assert lin(tg.randn(2, 7)).shape == (2, 3)
    assert lin.in_features == 7 and lin.weight.shape == (3, 7)
    assert np.abs(lin.weight.detach().numpy()).max() <= 1 / math.sqrt(7)
    assert "in_features=7" in repr(lin)


def test_linear_gradients_only_where_needed():
    lin = nn.Linear(3, 2)
    x = tg.randn(4, 3)  # does not require grad: its gradient GEMM is skipped
    lin(x).sum().backward()
    assert x.grad is None and lin.weight.grad.shape == (2, 3)
    np.testing.assert_allclose(lin.bias.grad.numpy(), [4.0, 4.0])


def test_linear_second_order_matches_torch(torch):
    """A WGAN-GP style gradient penalty: d/dtheta of ||d critic / d x||."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3))
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    _sync(ours, theirs)
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.from_numpy(x).requires_grad_()
    (go,) = tg.autograd.grad(ours(xo).sum(), xo, create_graph=True)
    (gt,) = torch.autograd.grad(theirs(xt).sum(), xt, create_graph=True)
    ((go * go).sum(dim=1) - 1.0).sum().backward()
    ((gt * gt).sum(dim=1) - 1.0).sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        if q.grad is None:  # the last bias does not enter the penalty
            assert p.grad is None or not np.any(p.grad.numpy())
            continue
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------- simple layers
def test_identity_flatten_unflatten():
    x = tg.randn(2, 3, 4, 5)
    assert nn.Identity(1, k=2)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)


@pytest.mark.parametrize(
    "name,args",
    [
        ("ReLU", ()),
        ("LeakyReLU", (0.2,)),
        ("ELU", (0.7,)),
        ("GELU", ()),
        ("GELU", ("tanh",)),
        ("SiLU", ()),
        ("Sigmoid", ()),
        ("Tanh", ()),
        ("Softplus", (2.0, 5.0)),
        ("Softmax", (1,)),
        ("LogSoftmax", (-1,)),
    ],
)
def test_activations_match_torch(torch, name, args):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    _compare(torch, ours, theirs, _x(3, 4) * 3)
    assert repr(ours) == repr(theirs)


def test_softmax_without_dim_uses_torchs_legacy_choice():
    x = tg.randn(3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension"):  # PyTorch warns too
        np.testing.assert_allclose(nn.Softmax()(x).numpy().sum(axis=1), 1.0, rtol=1e-6)
        np.testing.assert_allclose(nn.Softmax()(tg.randn(5)).numpy().sum(), 1.0, rtol=1e-6)


# ---------------------------------------------------------------- Dropout
def test_dropout_train_and_eval():
    tg.manual_seed(0)
    d = nn.Dropout(0.25)
    x = tg.ones(20000, requires_grad=True)
    y = d(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75)  # the saved mask
    d.eval()
    assert d(x) is x


def test_dropout_edge_probabilities():
    x = tg.randn(10)
    assert nn.Dropout(0.0)(x) is x
    assert not np.any(nn.Dropout(1.0)(x).numpy())
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_is_seeded():
    tg.manual_seed(1)
    a = nn.Dropout()(tg.ones(50)).numpy()
    tg.manual_seed(1)
    np.testing.assert_array_equal(a, nn.Dropout()(tg.ones(50)).numpy())


# ---------------------------------------------------------------- BatchNorm
@pytest.mark.parametrize(
    "cls,shape",
    [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (4, 3, 5)), ("BatchNorm2d", (4, 3, 2, 5))],
)
def test_batchnorm_train_then_eval_matches_torch(torch, cls, shape):
    ours, theirs = getattr(nn, cls)(3, momentum=0.3), getattr(torch.nn, cls)(3, momentum=0.3)
    _sync(ours, theirs)
    for seed in range(3):  # three training steps: running statistics follow torch's
        for p in ours.parameters():
            p.grad = None
        theirs.zero_grad()
        _compare(torch, ours, theirs, _x(*shape, seed=seed) * 2 + 1)
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-12)
    assert int(ours.num_batches_tracked.item()) == 3
    ours.eval()
    theirs.eval()
    for p in ours.parameters():
        p.grad = None
    theirs.zero_grad()
    _compare(torch, ours, theirs, _x(*shape, seed=9))


def test_batchnorm_cumulative_average_and_no_tracking(torch):
    for kwargs in ({"momentum": None}, {"track_running_stats": False}, {"affine": False}):
        ours, theirs = nn.BatchNorm1d(3, **kwargs), torch.nn.BatchNorm1d(3, **kwargs)
        _sync(ours, theirs)
        for seed in range(2):
            ours.zero_grad()
            theirs.zero_grad()
            _compare(torch, ours, theirs, _x(5, 3, seed=seed))
        ours.eval()
        theirs.eval()
        out_o = ours(tg.tensor(_x(5, 3, seed=7))).detach().numpy()
        out_t = theirs(torch.from_numpy(_x(5, 3, seed=7))).detach().numpy()
        np.testing.assert_allclose(out_o, out_t, rtol=1e-10, atol=1e-12)


def test_batchnorm_defaults_and_errors():
    bn = nn.BatchNorm2d(4)
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert bn.running_var.tolist() == [1.0] * 4 and bn.momentum == 0.1 and bn.eps == 1e-5
    with pytest.raises(ValueError, match="expected 4D input, got 2D"):
        bn(tg.randn(3, 4))
    with pytest.raises(ValueError, match="has 5 channels"):
        bn(tg.randn(2, 5, 3, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(4)(tg.randn(1, 4))


def test_batchnorm_training_none_follows_record_scope():
    bn = nn.BatchNorm1d(2)
    bn.training = None  # as an MXNet facade Block: follow tg.autograd.is_training()
    x = tg.tensor([[1.0, 2.0], [3.0, 6.0]])
    np.testing.assert_allclose(bn(x).detach().numpy(), x.numpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    assert bn.running_mean.tolist() == [0.0, 0.0]  # predict mode: no statistics update
    with tg.autograd.record():
        out = bn(x).detach().numpy()
    np.testing.assert_allclose(out, [[-1, -1], [1, 1]], atol=1e-4)
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.2, 0.4], rtol=1e-6)
    with tg.autograd.train_mode():
        bn(x)
    assert int(bn.num_batches_tracked.item()) == 2
    with tg.autograd.record(train_mode=False):
        np.testing.assert_allclose(
            bn(x).detach().numpy(),
            (x.numpy() - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5),
            rtol=1e-6,
        )


def test_core_modules_ignore_the_record_scope_train_flag():
    d = nn.Dropout(0.5).eval()
    x = tg.ones(100)
    with tg.autograd.record():
        assert d(x) is x  # training=False wins over record()'s train mode
    d.train()
    assert d.is_training_now  # and True wins outside it


# ---------------------------------------------------------------- LayerNorm, GroupNorm
@pytest.mark.parametrize("shape,norm", [((4, 5), 5), ((2, 3, 4), (3, 4)), ((2, 3, 4), 4)])
def test_layernorm_matches_torch(torch, shape, norm):
    ours, theirs = nn.LayerNorm(norm), torch.nn.LayerNorm(norm)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    _sync(ours, theirs)
    _compare(torch, ours, theirs, _x(*shape))


def test_layernorm_without_affine(torch):
    ours = nn.LayerNorm(4, elementwise_affine=False)
    theirs = torch.nn.LayerNorm(4, elementwise_affine=False)
    _sync(ours, theirs)
    _compare(torch, ours, theirs, _x(3, 4))
    assert list(ours.parameters()) == []
    with pytest.raises(RuntimeError, match="doesn't match the trailing dims"):
        ours(tg.randn(3, 5))


@pytest.mark.parametrize("groups,shape", [(2, (3, 4, 5)), (3, (2, 6, 2, 2)), (1, (2, 4))])
def test_groupnorm_matches_torch(torch, groups, shape):
    ours, theirs = nn.GroupNorm(groups, shape[1]), torch.nn.GroupNorm(groups, shape[1])
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    _sync(ours, theirs)
    _compare(torch, ours, theirs, _x(*shape))
    assert repr(ours) == repr(theirs)


def test_groupnorm_errors():
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


# ---------------------------------------------------------------- Embedding
def test_embedding_matches_torch(torch):
    ours, theirs = nn.Embedding(6, 3, padding_idx=1), torch.nn.Embedding(6, 3, padding_idx=1)
    _sync(ours, theirs)
    idx = np.array([[0, 1, 2], [2, 2, 5]])  # a repeated index and the padding index
    _compare(torch, ours, theirs, idx)
    assert repr(ours) == repr(theirs)
    np.testing.assert_array_equal(ours.weight.grad.numpy()[1], 0)


def test_embedding_defaults_and_errors():
    tg.manual_seed(0)
    emb = nn.Embedding(1000, 8, padding_idx=-1)
    w = emb.weight.detach().numpy()
    assert emb.padding_idx == 999 and not np.any(w[999])
    assert abs(w.std() - 1.0) < 0.05 and abs(w.mean()) < 0.05
    with pytest.raises(IndexError, match=r"table has 1000 rows"):
        emb(tg.tensor([0, 1000]))
    with pytest.raises(TypeError, match="integers"):
        emb(tg.tensor([0.0, 1.0]))


def test_embedding_from_pretrained():
    w = tg.randn(4, 2)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(tg.tensor([3])).numpy(), w.numpy()[[3]])


# ---------------------------------------------------------------- a whole model
def test_mlp_training_step_matches_torch(torch):
    ours = nn.Sequential(
        nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.0), nn.LayerNorm(16), nn.Linear(16, 4)
    )
    theirs = torch.nn.Sequential(
        torch.nn.Linear(6, 16),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.0),
        torch.nn.LayerNorm(16),
        torch.nn.Linear(16, 4),
    )
    _sync(ours, theirs)
    x = _x(8, 6)
    y = np.random.default_rng(1).integers(0, 4, size=8)
    lo = nn.CrossEntropyLoss()(ours(tg.tensor(x)), tg.tensor(y))
    lt = torch.nn.CrossEntropyLoss()(theirs(torch.from_numpy(x)), torch.from_numpy(y))
    lo.backward()
    lt.backward()
    assert abs(lo.item() - lt.item()) < 1e-12
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12)
