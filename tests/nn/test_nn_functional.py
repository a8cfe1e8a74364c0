"""tg.nn.functional: softmax family, attention, normalize, one_hot, dropout, norms, gradchecks.

(Named test_nn_functional.py: tests/autograd/test_functional.py already owns the basename.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _t(a, grad=True):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


# ---------------------------------------------------------------- softmax family
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_match_torch(torch, dim):
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    for ours, theirs in ((F.softmax, torch.softmax), (F.log_softmax, torch.log_softmax)):
        np.testing.assert_allclose(
            ours(tg.tensor(x), dim=dim).numpy(),
            theirs(torch.from_numpy(x), dim).numpy(),
            rtol=1e-12,
        )
    np.testing.assert_allclose(
        F.softmax(tg.tensor(x), axis=dim).numpy(), tg.tensor(x).softmax(dim).numpy()
    )


def test_softmax_is_stable_for_large_inputs():
    x = tg.tensor([[1000.0, 1000.0, -1000.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = F.softmax(x, dim=1).numpy()
        lp = F.log_softmax(x, dim=1).numpy()
    np.testing.assert_allclose(p, [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(lp[0, :2], np.log(0.5), rtol=1e-6)
    assert np.isfinite(lp).all() or lp[0, 2] == pytest.approx(-2000 - np.log(2))


def test_softmax_second_order():
    x = _t(np.random.default_rng(1).standard_normal((2, 3)))
    assert gradgradcheck(lambda t: F.softmax(t, dim=1) * F.log_softmax(t, dim=0), (x,))


def test_softmax_dim_errors():
    with pytest.raises(IndexError, match="dim 2 is out of range"):
        F.softmax(tg.randn(2, 2), dim=2)


def test_softmax_without_dim_follows_torch(torch):
    import warnings as w

    for shape in [(5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        x = np.random.default_rng(0).standard_normal(shape)
        with w.catch_warnings():
            w.simplefilter("ignore")  # torch warns about the implicit dim
            ref = torch.nn.functional.softmax(torch.from_numpy(x)).numpy()
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            ours = F.softmax(tg.tensor(x))
        np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-12)


def test_softmax_dtype_argument():
    assert F.softmax(tg.randn(2, 3), dim=1, dtype=tg.float64).dtype == np.float64


# ---------------------------------------------------------------- one_hot
def test_one_hot(torch):
    idx = np.array([[0, 2], [1, 3]])
    np.testing.assert_array_equal(
        F.one_hot(tg.tensor(idx)).numpy(),
        torch.nn.functional.one_hot(torch.from_numpy(idx)).numpy(),
    )
    out = F.one_hot(tg.tensor([1, 0]), num_classes=4)
    assert out.dtype == np.int64 and out.shape == (2, 4) and not out.requires_grad
    with pytest.raises(RuntimeError, match=r"class values must be in \[0, 2\)"):
        F.one_hot(tg.tensor([0, 2]), num_classes=2)
    with pytest.raises(TypeError, match="integer tensor"):
        F.one_hot(tg.tensor([0.0]))


# ---------------------------------------------------------------- attention
@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_scaled_dot_product_attention_matches_torch(torch, mask):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4, 8)) for _ in range(3))
    kwargs_o, kwargs_t = {}, {}
    if mask == "bool":
        m = rng.random((4, 4)) > 0.3
        m[:, 0] = True  # every query sees at least one key
        kwargs_o, kwargs_t = {"attn_mask": tg.tensor(m)}, {"attn_mask": torch.from_numpy(m)}
    elif mask == "float":
        m = rng.standard_normal((4, 4))
        kwargs_o, kwargs_t = {"attn_mask": tg.tensor(m)}, {"attn_mask": torch.from_numpy(m)}
    elif mask == "causal":
        kwargs_o = kwargs_t = {"is_causal": True}
    ours = [_t(a) for a in (q, k, v)]
    theirs = [torch.from_numpy(a).requires_grad_() for a in (q, k, v)]
    out_o = F.scaled_dot_product_attention(*ours, **kwargs_o)
    out_t = torch.nn.functional.scaled_dot_product_attention(*theirs, **kwargs_t)
    np.testing.assert_allclose(
        out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    head = rng.standard_normal(out_t.shape)
    out_o.backward(tg.tensor(head))
    out_t.backward(torch.from_numpy(head))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_attention_gradcheck():
    rng = np.random.default_rng(1)
    q, k, v = (_t(rng.standard_normal((2, 3, 4))) for _ in range(3))
    assert gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), (q, k, v)
    )


# ---------------------------------------------------------------- normalize
@pytest.mark.parametrize("p,dim", [(2, 1), (1, 0), (3, -1)])
def test_normalize_matches_torch(torch, p, dim):
    x = np.random.default_rng(0).standard_normal((3, 4))
    x[0] = 0.0  # a zero row: no nan, as in PyTorch
    xo, xt = _t(x), torch.from_numpy(x).requires_grad_()
    out_o, out_t = F.normalize(xo, p=p, dim=dim), torch.nn.functional.normalize(xt, p=p, dim=dim)
    np.testing.assert_allclose(
        out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    out_o.sum().backward()
    out_t.sum().backward()
    if p == 2 or dim == 0:
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- layers as functions
def test_functional_dropout():
    x = tg.ones(100)
    assert F.dropout(x, 0.5, training=False) is x
    y = F.dropout(x, 0.5).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout(x, -0.1)


def test_functional_linear_gradcheck_3d():
    rng = np.random.default_rng(0)
    x, w, b = (
        _t(rng.standard_normal((2, 3, 4))),
        _t(rng.standard_normal((5, 4))),
        _t(rng.standard_normal(5)),
    )
    assert gradcheck(F.linear, (x, w, b))
    assert gradgradcheck(F.linear, (x, w, b))


def test_functional_linear_keeps_float32():
    x = tg.randn(3, 4)
    w = tg.randn(2, 4, requires_grad=True)
    out = F.linear(x, w)
    out.sum().backward()
    assert out.dtype == np.float32 and w.grad.dtype == np.float32


def test_functional_batch_norm_updates_running_stats_in_place(torch):
    x = np.random.default_rng(0).standard_normal((6, 3)) * 2 + 1
    rm_o, rv_o = tg.zeros(3, dtype=tg.float64), tg.ones(3, dtype=tg.float64)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    v0 = rm_o._version
    out_o = F.batch_norm(tg.tensor(x), rm_o, rv_o, training=True, momentum=0.2)
    out_t = torch.nn.functional.batch_norm(
        torch.from_numpy(x), rm_t, rv_t, training=True, momentum=0.2
    )
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-10)
    np.testing.assert_allclose(rm_o.numpy(), rm_t.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rv_o.numpy(), rv_t.numpy(), rtol=1e-12)
    assert rm_o._version == v0 + 1
    ev_o = F.batch_norm(tg.tensor(x), rm_o, rv_o)  # training=False: running statistics
    ev_t = torch.nn.functional.batch_norm(torch.from_numpy(x), rm_t, rv_t)
    np.testing.assert_allclose(ev_o.numpy(), ev_t.numpy(), rtol=1e-10)


def test_norm_gradchecks():
    rng = np.random.default_rng(0)
    x = _t(rng.standard_normal((4, 3, 2)))
    w, b = _t(rng.standard_normal(3)), _t(rng.standard_normal(3))
    assert gradcheck(lambda a, c, d: F.batch_norm(a, None, None, c, d, training=True), (x, w, b))
    assert gradcheck(lambda a, c, d: F.group_norm(a, 3, c, d), (x, w, b))
    lw, lb = _t(rng.standard_normal(2)), _t(rng.standard_normal(2))
    assert gradgradcheck(lambda a, c, d: F.layer_norm(a, (2,), c, d), (x, lw, lb))


def test_embedding_functional_errors():
    w = tg.randn(3, 2)
    with pytest.raises(IndexError, match=r"indices span \[-1, 1\]"):
        F.embedding(tg.tensor([-1, 1]), w)


# ---------------------------------------------------------------- issue 12 edge inputs
def test_embedding_of_an_empty_weight_with_a_padding_idx(torch):
    """padding_idx=0 on a weight of no rows: PyTorch takes it (no lookups, no gradient)."""
    weight = _t(np.zeros((0, 2)))
    idx = np.zeros((0, 3), dtype=np.int64)
    out = F.embedding(tg.tensor(idx), weight, padding_idx=0)
    ref = torch.nn.functional.embedding(torch.from_numpy(idx), torch.zeros(0, 2), padding_idx=0)
    assert out.shape == tuple(ref.shape) == (0, 3, 2)
    (g,) = tg.autograd.grad(out.sum(), [weight])
    assert g.shape == (0, 2)


def _pattern(a):
    return np.isnan(a), np.isposinf(a), np.isneginf(a)


@pytest.mark.parametrize("which", ["batch_norm", "batch_norm_eval", "group_norm"])
def test_norms_with_an_inf_weight_give_torchs_nan_pattern(torch, which):
    """An inf affine weight: x * (rstd w) + (b - mean rstd w), PyTorch's fused form, gives
    inf - inf = NaN where x is below the mean (and +-inf elsewhere), not -inf."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 4, 3))
    w = np.array([np.inf, 1.5, -np.inf, 0.7])
    b = rng.standard_normal(4)
    tf = torch.nn.functional
    if which == "group_norm":
        ours = F.group_norm(tg.tensor(x), 2, tg.tensor(w), tg.tensor(b))
        ref = tf.group_norm(torch.tensor(x), 2, torch.tensor(w), torch.tensor(b))
    else:
        training = which == "batch_norm"
        rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)
        ours = F.batch_norm(
            tg.tensor(x), tg.tensor(rm), tg.tensor(rv), tg.tensor(w), tg.tensor(b), training
        )
        ref = tf.batch_norm(*(torch.tensor(a) for a in (x, rm, rv, w, b)), training=training)
    ours, ref = ours.numpy(), ref.numpy()
    for a, r in zip(_pattern(ours), _pattern(ref), strict=True):
        np.testing.assert_array_equal(a, r)
    assert np.isnan(ref).any()  # the case is the one that matters
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-10, atol=1e-12)
