"""The SVD: tg.linalg.svd / svdvals, the older tg.svd, and the singular-value matrix norms
(ord 2, -2, 'nuc'): values and gradients against PyTorch, finite differences, errors.

Singular vectors are defined up to a sign per pair (LAPACK builds choose differently), so
values are compared after turning PyTorch's signs to ours, and gradients only of losses that
do not depend on the signs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _leaf(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def _aligned(u, vh, ref_u, ref_vh):
    """PyTorch's U, Vh with each singular pair's sign turned to ours."""
    k = min(u.shape[-1], vh.shape[-2])
    sign = np.sign(np.sum(u[..., :k] * ref_u[..., :k], axis=-2))
    ref_u, ref_vh = ref_u.copy(), ref_vh.copy()
    ref_u[..., :k] *= sign[..., None, :]
    ref_vh[..., :k, :] *= sign[..., :, None]
    return ref_u, ref_vh


SHAPES = [(3, 3), (5, 3), (2, 4), (2, 4, 3), (2, 1, 3, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_values_match_torch(torch, rng, shape, full):
    a = rng.standard_normal(shape)
    u, s, vh = tg.linalg.svd(tg.tensor(a), full_matrices=full)
    ru, rs, rvh = (t.numpy() for t in torch.linalg.svd(torch.tensor(a), full_matrices=full))
    assert u.shape == ru.shape and s.shape == rs.shape and vh.shape == rvh.shape
    np.testing.assert_allclose(s.numpy(), rs, rtol=1e-12, atol=1e-12)
    ru, rvh = _aligned(u.numpy(), vh.numpy(), ru, rvh)
    k = min(shape[-2:])  # (full: the columns past k span the same space, not the same basis)
    np.testing.assert_allclose(u.numpy()[..., :k], ru[..., :k], atol=1e-10)
    np.testing.assert_allclose(vh.numpy()[..., :k, :], rvh[..., :k, :], atol=1e-10)
    # orthonormal, and a reconstruction of the input
    eye = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(u.numpy(), -1, -2) @ u.numpy(), eye, atol=1e-12)
    rec = (u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :]
    np.testing.assert_allclose(rec.numpy(), a, atol=1e-12)


def test_svd_result_is_named_and_float32_stays_float32(torch, rng):
    a = rng.standard_normal((4, 3)).astype(np.float32)
    out = tg.linalg.svd(tg.tensor(a))
    assert type(out).__name__ == "linalg_svd" and out.S is out[1]
    assert out.U.dtype == tg.float32 and out.Vh.dtype == tg.float32
    np.testing.assert_allclose(
        out.S.numpy(), torch.linalg.svdvals(torch.tensor(a)).numpy(), rtol=1e-5
    )


def _losses():
    w = np.random.default_rng(5).standard_normal((5, 5))  # one draw, for both frameworks
    return {
        "S": lambda u, s, vh, m: s.sum(),
        "S2": lambda u, s, vh, m: (s * s * m.tensor([3.0, 2.0, 1.0])[: s.shape[-1]]).sum(),
        "absU": lambda u, s, vh, m: u.abs().sum(),
        "absVh": lambda u, s, vh, m: vh.abs().sum(),
        "rebuilt": lambda u, s, vh, m: (
            ((u * s.unsqueeze(-2)) @ vh) * m.tensor(w[: u.shape[-2], : vh.shape[-1]])
        ).sum(),
        "all": lambda u, s, vh, m: u.abs().sum() + (s**2).sum() + (vh**3).abs().sum(),
    }


@pytest.mark.parametrize("loss", sorted(_losses()))
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (2, 4), (2, 4, 3)])
def test_svd_gradients_match_torch(torch, rng, loss, shape):
    a = rng.standard_normal(shape)
    f = _losses()[loss]
    x = _leaf(a)
    (g,) = tg.autograd.grad(f(*tg.linalg.svd(x, full_matrices=False), tg), [x])
    xt = torch.tensor(a, requires_grad=True)
    (gt,) = torch.autograd.grad(f(*torch.linalg.svd(xt, full_matrices=False), torch), [xt])
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3), (3, 5)])
def test_svd_full_matrices_gradient_ignores_the_extra_columns_as_torch(torch, rng, shape):
    a = rng.standard_normal(shape)
    x = _leaf(a)
    u, s, vh = tg.linalg.svd(x)  # full_matrices=True
    (g,) = tg.autograd.grad(u.abs().sum() + vh.abs().sum() + s.sum(), [x], retain_graph=True)
    xt = torch.tensor(a, requires_grad=True)
    ut, st, vht = torch.linalg.svd(xt)
    k = min(shape)
    # the columns past k differ between LAPACK builds: the sum of |.| over them would not;
    # PyTorch gives them no gradient either, so the loss over the first k is the same
    (gt,) = torch.autograd.grad(ut[:, :k].abs().sum() + vht[:k].abs().sum() + st.sum(), [xt])
    (gk,) = tg.autograd.grad(sum(t.sum() for t in (u[:, :k].abs(), vh[:k].abs(), s)), [x])
    np.testing.assert_allclose(gk.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)
    if shape[0] == shape[1]:
        np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3), (2, 3, 2)])
def test_svd_gradcheck_of_sign_free_losses(rng, shape):
    x = _leaf(rng.standard_normal(shape))

    def f(a):
        u, s, vh = tg.linalg.svd(a, full_matrices=False)
        return tg.stack(
            [u.abs().sum(), (s**2).sum(), vh.abs().sum(), ((u * s.unsqueeze(-2)) @ vh).sum()]
        )

    assert gradcheck(f, (x,))


def test_svd_of_s_alone_has_a_finite_gradient_at_repeated_singular_values(torch):
    a = np.eye(3) * 2.0  # all three singular values equal
    x = _leaf(a)
    tg.linalg.svdvals(x).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.linalg.svdvals(xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 2, 5)])
def test_svdvals_match_torch(torch, rng, shape):
    a = rng.standard_normal(shape)
    x = _leaf(a)
    s = tg.linalg.svdvals(x)
    xt = torch.tensor(a, requires_grad=True)
    st = torch.linalg.svdvals(xt)
    np.testing.assert_allclose(s.detach().numpy(), st.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal(s.shape)
    (s * tg.tensor(w)).sum().backward()
    (st * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("some", [True, False])
def test_legacy_svd_returns_v_as_torch(torch, rng, shape, some):
    a = rng.standard_normal(shape)
    u, s, v = tg.svd(tg.tensor(a), some=some)
    ru, rs, rv = (t.numpy() for t in torch.svd(torch.tensor(a), some=some))
    assert (u.shape, s.shape, v.shape) == (ru.shape, rs.shape, rv.shape)
    np.testing.assert_allclose(s.numpy(), rs, rtol=1e-12)
    k = min(shape[-2:])
    ru, rvh = _aligned(u.numpy(), np.swapaxes(v.numpy(), -1, -2), ru, np.swapaxes(rv, -1, -2))
    np.testing.assert_allclose(u.numpy()[..., :k], ru[..., :k], atol=1e-10)
    np.testing.assert_allclose(v.numpy()[..., :k], np.swapaxes(rvh, -1, -2)[..., :k], atol=1e-10)
    np.testing.assert_allclose(
        ((u[..., :k] * s.unsqueeze(-2)) @ v[..., :k].mT).numpy(), a, atol=1e-12
    )


def test_legacy_svd_without_uv_gives_zero_matrices_and_a_differentiable_s(torch, rng):
    a = rng.standard_normal((4, 3))
    x = _leaf(a)
    u, s, v = tg.svd(x, compute_uv=False)
    ru, rs, rv = torch.svd(torch.tensor(a), compute_uv=False)
    assert u.shape == tuple(ru.shape) == (4, 4) and v.shape == tuple(rv.shape) == (3, 3)
    assert not np.any(u.numpy()) and not np.any(v.numpy())
    s.sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.svd(xt, compute_uv=False).S.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


NORM_CASES = [
    ((4, 3), 2, (-2, -1), False),
    ((4, 3), -2, (-2, -1), False),
    ((4, 3), "nuc", (-2, -1), False),
    ((2, 3, 4), "nuc", (0, 2), True),
    ((2, 3, 4), 2, (2, 0), False),
    ((2, 3, 4), -2, (-1, -2), True),
    ((3, 2, 2), 2, (-2, -1), True),
]


@pytest.mark.parametrize("shape,ord,dim,keepdim", NORM_CASES)
def test_singular_value_matrix_norms_match_torch(torch, rng, shape, ord, dim, keepdim):
    a = rng.standard_normal(shape)
    x = _leaf(a)
    out = tg.linalg.matrix_norm(x, ord, dim, keepdim)
    xt = torch.tensor(a, requires_grad=True)
    ref = torch.linalg.matrix_norm(xt, ord, dim, keepdim)
    assert out.shape == tuple(ref.shape)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    w = rng.standard_normal(out.shape)
    (out * tg.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-10)
    # linalg.norm takes the same ord for a 2-D input or a 2-tuple dim
    np.testing.assert_allclose(
        tg.linalg.norm(x, ord, dim, keepdim).detach().numpy(), ref.detach().numpy(), rtol=1e-12
    )


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_matrix_norm_gradcheck(rng, ord):
    x = _leaf(rng.standard_normal((2, 4, 3)))
    assert gradcheck(lambda a: tg.linalg.matrix_norm(a, ord), (x,))


def test_norm_nuc_and_two_of_a_matrix_match_torch(torch, rng):
    a = rng.standard_normal((3, 4))
    np.testing.assert_allclose(
        tg.linalg.norm(tg.tensor(a), 2).numpy(), torch.linalg.norm(torch.tensor(a), 2).numpy()
    )
    np.testing.assert_allclose(
        tg.norm(tg.tensor(a), "nuc").numpy(), torch.norm(torch.tensor(a), "nuc").numpy()
    )
    b = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(
        tg.norm(tg.tensor(b), "nuc", dim=(1, 2)).numpy(),
        torch.norm(torch.tensor(b), "nuc", dim=(1, 2)).numpy(),
    )


def test_empty_matrices_as_torch(torch):
    for shape in [(0, 3), (2, 0, 3)]:
        out = tg.linalg.svd(tg.zeros(shape))
        ref = torch.linalg.svd(torch.zeros(shape))
        for a, b in zip(out, ref):
            assert a.shape == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.numpy())


def test_svd_errors_name_the_function():
    with pytest.raises(RuntimeError, match=r"linalg\.svd: .*at least 2 dimensions"):
        tg.linalg.svd(tg.ones(3))
    with pytest.raises(RuntimeError, match=r"linalg\.svd: .*at least 2 dimensions"):
        tg.linalg.svdvals(tg.ones(3))
    with pytest.raises(RuntimeError, match=r"^svd: .*at least 2 dimensions"):
        tg.svd(tg.ones(3))
    with pytest.raises(TypeError, match=r"linalg\.svd: expected a float32 or float64"):
        tg.linalg.svd(tg.ones(2, 2, dtype=tg.int64))
    with pytest.raises(TypeError, match=r"linalg\.svd: expected a Tensor"):
        tg.linalg.svd(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=r"matrix_norm: ord=3 is not supported"):
        tg.linalg.matrix_norm(tg.ones(2, 2), 3)
    with pytest.raises(RuntimeError, match=r"norm\(\): p='nuc' needs a 2-D input"):
        tg.norm(tg.ones(2, 2, 2), "nuc")


def test_the_torch_facade_has_them(torch, rng):
    import tapegrad.compat.torch as ttorch

    a = rng.standard_normal((3, 2))
    for name in ("svd", "svdvals", "matrix_norm", "norm"):
        assert getattr(ttorch.linalg, name) is getattr(tg.linalg, name)
    assert ttorch.svd is tg.svd
    np.testing.assert_allclose(
        ttorch.svd(ttorch.tensor(a)).S.numpy(), torch.svd(torch.tensor(a)).S.numpy()
    )
