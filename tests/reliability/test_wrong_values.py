"""Regression tests for the wrong values and gradients of issue 12: each checks real values,
against PyTorch where installed and by finite differences in float64."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck

F = tg.nn.functional


def _torch():
    return pytest.importorskip("torch")


def _grad(fn, *arrays):
    """Value and gradients of sum(fn(*tensors)) in tapegrad, float64."""
    xs = [tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*xs)
    out.sum().backward()
    return out.detach().numpy(), [x.grad.numpy() for x in xs]


def _torch_grad(torch, fn, *arrays):
    xs = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    out = fn(*xs)
    out.sum().backward()
    return out.detach().numpy(), [x.grad.numpy() for x in xs]


def _fd(fn, a, eps=1e-6):
    """Central finite differences of sum(fn(a)) in float64, on arrays."""
    a = np.asarray(a, dtype=np.float64)
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        grad[i] = (np.sum(fn(hi)) - np.sum(fn(lo))) / (2 * eps)
    return grad


# ------------------------------------------------------------ class-index losses
@pytest.mark.parametrize(
    "loss,kw",
    [
        ("cross_entropy", {}),
        ("cross_entropy", {"weight": np.ones(4)}),
        ("cross_entropy", {"label_smoothing": 0.1}),
        ("nll_loss", {}),
        ("nll_loss", {"weight": np.ones(4)}),
    ],
)
def test_every_target_ignored_gives_nan_loss_and_zero_gradient(loss, kw, rng):
    x = tg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    target = tg.tensor(np.array([-100, -100, -100]))
    params = {k: tg.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    out = getattr(F, loss)(x, target, **params)
    out.backward()
    assert np.isnan(out.item())
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))


def test_every_target_ignored_matches_torch(rng):
    torch = _torch()
    x = rng.standard_normal((3, 4))
    t = np.array([-100, -100, -100])
    for loss in ("cross_entropy", "nll_loss"):
        ours = _grad(lambda a, fn=loss: getattr(F, fn)(a, tg.tensor(t)), x)
        theirs = _torch_grad(
            torch, lambda a, fn=loss: getattr(torch.nn.functional, fn)(a, torch.tensor(t)), x
        )
        np.testing.assert_array_equal(np.isnan(ours[0]), np.isnan(theirs[0]))
        np.testing.assert_array_equal(ours[1][0], theirs[1][0])


def test_log_probabilities_of_minus_inf_at_other_classes_keep_nll_finite():
    with np.errstate(divide="ignore"):  # -inf for the masked classes
        logp = np.log(np.array([[0.5, 0.5, 0.0], [0.0, 0.25, 0.75]]))
    x = tg.tensor(logp, requires_grad=True)
    loss = F.nll_loss(x, tg.tensor(np.array([0, 2])), reduction="sum")
    loss.backward()
    assert loss.item() == pytest.approx(-np.log(0.5) - np.log(0.75))
    np.testing.assert_array_equal(x.grad.numpy(), [[-1, 0, 0], [0, 0, -1]])


@pytest.mark.parametrize(
    "loss",
    [
        "mse_loss",
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
    ],
)
def test_mean_loss_over_an_empty_batch_is_nan(loss):
    x = tg.tensor(np.zeros((0, 3)), requires_grad=True)
    out = getattr(F, loss)(x, tg.tensor(np.zeros((0, 3))))
    assert np.isnan(out.item())
    out.backward()
    assert x.grad.shape == (0, 3)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_loss_over_an_empty_batch_is_nan(loss):
    x = tg.tensor(np.zeros((0, 4)), requires_grad=True)
    out = getattr(F, loss)(x, tg.tensor(np.zeros(0, dtype=np.int64)))
    assert np.isnan(out.item())
    out.backward()
    assert x.grad.shape == (0, 4)


def test_kl_div_mean_gradient_divides_by_the_broadcast_size(rng):
    x, t = rng.standard_normal(4), rng.uniform(0.1, 1.0, (3, 4))
    _, (g,) = _grad(lambda a: F.kl_div(a, tg.tensor(t), reduction="mean"), x)
    np.testing.assert_allclose(g, -t.sum(axis=0) / t.size)  # d/dx of mean(t log t - t x)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch: 'mean' is not the KL mean
        _, (h,) = _torch_grad(
            torch, lambda a: torch.nn.functional.kl_div(a, torch.tensor(t), reduction="mean"), x
        )
    np.testing.assert_allclose(g, h, rtol=1e-12)


# ------------------------------------------------------------ reductions, shapes, dtypes
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_keepdim_without_dim_keeps_every_dimension(fn, rng):
    x = rng.standard_normal((2, 3))
    out = getattr(tg.tensor(x), fn)(keepdim=True)
    assert out.shape == (1, 1)
    assert out.item() == getattr(np, fn)(x)
    assert getattr(tg.tensor(np.float64(2.0)), fn)(keepdim=True).shape == ()


def test_bool_square_and_pow_are_int64():
    b = tg.tensor([True, False])
    assert b.square().dtype == tg.int64 and b.square().tolist() == [1, 0]
    assert (b**2).dtype == tg.int64 and (b**0).tolist() == [1, 1]
    assert (b**2.0).dtype == tg.get_default_dtype()
    with pytest.raises(TypeError, match="bool \\*\\* bool"):
        b**b  # noqa: B018


@pytest.mark.parametrize(
    "n,chunks", [(0, 2), (0, 1), (5, 3), (6, 4), (7, 4), (1, 3), (10, 4), (13, 5), (3, 5)]
)
def test_chunk_counts_match_torch(n, chunks):
    torch = _torch()
    ours = [p.shape for p in tg.arange(n).chunk(chunks)]
    assert ours == [tuple(p.shape) for p in torch.arange(n).chunk(chunks)]


def test_pow_zero_has_a_zero_gradient_at_zero():
    x = tg.tensor([0.0, 1.0, -2.0], requires_grad=True)
    (x**0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])
    x.grad = None
    (x ** tg.tensor([0.0, 0.0, 2.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, -4])


@pytest.mark.parametrize(
    "v",
    [
        [np.inf, 0.0, 2.0],
        [np.inf, 1.0, 2.0],
        [np.inf, 0.0, 0.0],
        [np.nan, 1.0, 2.0],
        [0.0, 0.0, 3.0],
        [np.inf, -np.inf, 2.0],
        [1.5, 0.0, 3.0],
    ],
)
def test_prod_with_inf_and_zero_matches_torch(v):
    torch = _torch()
    ours = _grad(lambda a: a.prod(), v)
    theirs = _torch_grad(torch, lambda a: a.prod(), v)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1][0], theirs[1][0])


def test_prod_gradient_beside_one_zero_by_finite_differences():
    a = np.array([[1.5, 0.0, 2.0], [0.3, -0.7, 3.0]])
    _, (g,) = _grad(lambda t: t.prod(1), a)
    np.testing.assert_allclose(g, _fd(lambda z: z.prod(axis=1), a), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "a",
    [
        [[1.0, 2.0], [2.0, 4.0]],  # rank 1: the cofactor is not zero
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],  # rank 2
        [[0.0, 0.0], [0.0, 0.0]],
        [[2.0, 1.0], [0.5, 3.0]],
    ],
)
def test_det_gradient_is_the_cofactor_matrix_also_when_singular(a):
    a = np.array(a)
    _, (g,) = _grad(tg.linalg.det, a)
    np.testing.assert_allclose(g, _fd(np.linalg.det, a), atol=1e-6)


def test_det_gradient_of_a_batch_matches_torch(rng):
    torch = _torch()
    a = rng.standard_normal((3, 4, 4))
    np.testing.assert_allclose(
        _grad(tg.linalg.det, a)[1][0], _torch_grad(torch, torch.linalg.det, a)[1][0], rtol=1e-10
    )


def test_det_second_order_by_gradcheck(rng):
    from tapegrad.autograd import gradgradcheck

    x = tg.tensor(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True)
    assert gradgradcheck(tg.linalg.det, (x,))


@pytest.mark.parametrize(
    "eq,sa,sb",
    [
        ("ij,jk->ik", (2, 1), (3, 4)),
        ("ij,ij->", (1, 3), (4, 3)),
        ("bij,bjk->bik", (1, 2, 3), (5, 3, 2)),
    ],
)
def test_einsum_broadcasting_a_size_one_label(eq, sa, sb, rng):
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    assert gradcheck(
        lambda x, y: tg.einsum(eq, x, y),
        (tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)),
    )
    torch = pytest.importorskip("torch")
    ours = _grad(lambda x, y: tg.einsum(eq, x, y), a, b)
    theirs = _torch_grad(torch, lambda x, y: torch.einsum(eq, x, y), a, b)
    for g, h in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-12)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_float16_gelu_does_not_overflow(approximate):
    v = np.array([100.0, 60000.0, -60000.0, 3.0, -3.0], np.float16)
    out = F.gelu(tg.tensor(v), approximate=approximate).numpy()
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[:2], v[:2])
    torch = pytest.importorskip("torch")
    ref = torch.nn.functional.gelu(torch.tensor(v), approximate=approximate).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-3)


def test_flatten_of_an_empty_batch():
    x = tg.zeros(0, 2, 3)
    assert x.flatten(1).shape == (0, 6)
    assert tg.nn.Flatten()(x).shape == (0, 6)
    assert tg.zeros(2, 0, 3).flatten().shape == (0,)


# ------------------------------------------------------------ attention with nothing to attend
def test_sdpa_fully_masked_row_gives_zeros_and_finite_gradients(rng):
    torch = _torch()
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q = rng.standard_normal((1, 2, 3, 4))
    keep = np.ones((3, 3), bool)
    keep[0] = False
    for mask in (keep, np.where(keep, 0.0, -np.inf)):
        out, (g,) = _grad(
            lambda t, m=mask: F.scaled_dot_product_attention(t, t, t, attn_mask=tg.tensor(m)), q
        )
        np.testing.assert_array_equal(out[:, :, 0], 0)
        assert np.isfinite(g).all()
        torch_mask = torch.tensor(mask)
        ref, (h,) = _torch_grad(torch, lambda t, m=torch_mask: sdpa(t, t, t, attn_mask=m), q)
        np.testing.assert_allclose(out, ref, atol=1e-12)
        np.testing.assert_allclose(g, h, atol=1e-12)


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_all_padding_key_mask_follows_torch(need_weights, rng):
    torch = _torch()
    theirs = torch.nn.MultiheadAttention(4, 2, batch_first=True).double()
    ours = tg.nn.MultiheadAttention(4, 2, batch_first=True).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((2, 3, 4))
    pad = np.zeros((2, 3), bool)
    pad[0] = True  # the first sequence is all padding
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, _ = ours(xo, xo, xo, key_padding_mask=tg.tensor(pad), need_weights=need_weights)
    ref, _ = theirs(xt, xt, xt, key_padding_mask=torch.tensor(pad), need_weights=need_weights)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    if not need_weights:  # PyTorch 2.x: zero attention, finite gradients everywhere
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), atol=1e-12)
        assert np.isfinite(ours.in_proj_weight.grad.numpy()).all()


# ------------------------------------------------------------ PyTorch's NaN conventions
def test_nan_conventions_match_torch():
    torch = _torch()
    v = [np.nan, np.inf, -np.inf, 0.0, 1.0]
    other = [np.nan, 1.0, np.nan, 2.0, np.inf]
    cases = [
        (lambda a: a.abs(), lambda a: a.abs()),
        (lambda a: F.elu(a), lambda a: torch.nn.functional.elu(a)),
        (lambda a: F.relu(a), lambda a: torch.relu(a)),
        (
            lambda a: tg.maximum(a, tg.tensor(other)),
            lambda a: torch.maximum(a, torch.tensor(other, dtype=torch.float64)),
        ),
        (
            lambda a: tg.minimum(a, tg.tensor(other)),
            lambda a: torch.minimum(a, torch.tensor(other, dtype=torch.float64)),
        ),
        (
            lambda a: tg.lerp(a, tg.tensor(other), 0.6),
            lambda a: torch.lerp(a, torch.tensor(other, dtype=torch.float64), 0.6),
        ),
        (lambda a: a.cumsum(0), lambda a: a.cumsum(0)),
    ]
    for ours_fn, torch_fn in cases:
        ours, theirs = _grad(ours_fn, v), _torch_grad(torch, torch_fn, v)
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1][0], theirs[1][0])
    np.testing.assert_array_equal(tg.tensor(v).sign().numpy(), torch.tensor(v).sign().numpy())


def test_max_pool_gradient_goes_to_the_window_nan_torch_picks(rng):
    torch = _torch()
    x = rng.standard_normal((1, 2, 5, 5))
    x[rng.random(x.shape) < 0.3] = np.nan
    for kw in ({"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}):
        ours = _grad(lambda a, k=kw: F.max_pool2d(a, **k), x)
        theirs = _torch_grad(torch, lambda a, k=kw: torch.nn.functional.max_pool2d(a, **k), x)
        np.testing.assert_array_equal(ours[0], theirs[0])
        np.testing.assert_array_equal(ours[1][0], theirs[1][0])


def test_adaptive_avg_pool_keeps_an_inf_in_its_own_window():
    torch = _torch()
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    x[0, 0, 0, 0] = np.inf
    ours = F.adaptive_avg_pool2d(tg.tensor(x), 2).numpy()
    ref = torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x), 2).numpy()
    np.testing.assert_array_equal(ours, ref)
    assert np.isfinite(ours[0, 0, 1]).all()


def test_kl_div_non_positive_targets_match_torch():
    torch = _torch()
    t = np.array([0.0, -1.0, np.nan, np.inf, 2.0, -np.inf])
    x = np.full(6, -1.0)
    ours = _grad(lambda a, b: F.kl_div(a, b, reduction="none"), x, t)
    theirs = _torch_grad(
        torch, lambda a, b: torch.nn.functional.kl_div(a, b, reduction="none"), x, t
    )
    for a, b in zip([ours[0], *ours[1]], [theirs[0], *theirs[1]], strict=True):
        np.testing.assert_array_equal(a, b)


def test_encoder_layer_with_an_all_padding_sequence_stays_finite(rng):
    torch = _torch()
    theirs = torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).double()
    ours = tg.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((2, 3, 4))
    pad = np.zeros((2, 3), bool)
    pad[1] = True
    xo, xt = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = ours(xo, src_key_padding_mask=tg.tensor(pad))
    ref = theirs(xt, src_key_padding_mask=torch.tensor(pad))  # training mode: no fast path
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-10)
    out.sum().backward()
    ref.sum().backward()
    assert np.isfinite(xo.grad.numpy()).all()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), atol=1e-10)


def test_slogdet_gradient_at_a_singular_matrix_is_infinite_not_an_error(rng):
    x = tg.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.linalg.slogdet(x)[1].backward()
    assert np.isinf(x.grad.numpy()).all()  # PyTorch: +-inf too (the sign follows rounding)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)  # invertible: inv(x)^T exactly
    _, (g,) = _grad(lambda t: tg.linalg.slogdet(t)[1], a)
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-10)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_in_place_inf_minus_inf_is_nan_without_a_warning(requires_grad):
    # the in-place path runs the op's forward itself; it too computes with warnings off
    x = tg.tensor([np.inf, 1.0], requires_grad=requires_grad)
    y = x * 1 if requires_grad else x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y -= float("inf")
        z = tg.tensor([-np.inf]) + np.inf  # the out-of-place path as well
    values = y.detach().numpy()
    assert np.isnan(values[0]) and values[1] == -np.inf
    assert np.isnan(z.numpy()).all()
