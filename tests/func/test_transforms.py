"""tg.func: values against finite differences (float64) and torch.func where installed;
compositions; vmap results and errors; per-sample gradients equal the loop over samples."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import func as F


def _t(x, **kw):
    return tg.tensor(np.asarray(x, dtype=np.float64), **kw)


def _f(x, y):
    return (x.sin() * y).sum() + (x * x * y.exp()).mean()


def _vec(x):
    return (x.tanh() * x[::-1]) ** 2


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.func's jit import
    return torch


def _fd_jacobian(f, x, eps=1e-6):
    x = x.astype(np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(cols[0]) + x.shape)


def test_jacobians_and_hessian_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4)
    fd = _fd_jacobian(lambda a: _vec(_t(a)).numpy(), x)
    np.testing.assert_allclose(F.jacrev(_vec)(_t(x)).numpy(), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(F.jacfwd(_vec)(_t(x)).numpy(), fd, rtol=1e-6, atol=1e-8)
    y = _t(rng.standard_normal(4))
    g = lambda a: F.grad(_f)(_t(a), y).numpy()  # noqa: E731
    h_fd = _fd_jacobian(g, x)
    h = F.hessian(_f)(_t(x), y)
    assert not h.requires_grad  # a top-level Hessian is a plain tensor, as in torch.func
    np.testing.assert_allclose(h.detach().numpy(), h_fd, rtol=1e-5, atol=1e-7)
    for combo in (
        F.jacfwd(F.jacrev(_f)),
        F.jacrev(F.jacrev(_f)),
        F.jacfwd(F.jacfwd(_f)),
        F.jacrev(F.jacfwd(_f)),
    ):
        np.testing.assert_allclose(combo(_t(x), y).detach().numpy(), h_fd, rtol=1e-5, atol=1e-7)


def test_jvp_vjp_match_torch_func():
    torch = _torch()
    rng = np.random.default_rng(1)
    x, y, v, u = (rng.standard_normal(4) for _ in range(4))
    tf = lambda a, b: (a.sin() * b).sum() + (a * a * b.exp()).mean()  # noqa: E731
    out, t = F.jvp(_f, (_t(x), _t(y)), (_t(v), _t(u)))
    ref_out, ref_t = torch.func.jvp(
        tf, (torch.tensor(x), torch.tensor(y)), (torch.tensor(v), torch.tensor(u))
    )
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), rtol=1e-12)
    np.testing.assert_allclose(t.numpy(), ref_t.numpy(), rtol=1e-10)
    tv = lambda a: (a.tanh() * a.flip(0)) ** 2  # noqa: E731
    out, vjp_fn = F.vjp(_vec, _t(x))
    ref_out, ref_fn = torch.func.vjp(tv, torch.tensor(x))
    (g,) = vjp_fn(_t(u))
    (ref_g,) = ref_fn(torch.tensor(u))
    np.testing.assert_allclose(g.numpy(), ref_g.numpy(), rtol=1e-10)
    (g2,) = vjp_fn(_t(v))  # vjp_fn can be called again
    np.testing.assert_allclose(g2.numpy(), ref_fn(torch.tensor(v))[0].numpy(), rtol=1e-10)
    ref_h = torch.func.hessian(tf)(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(
        F.hessian(_f)(_t(x), _t(y)).detach().numpy(), ref_h.numpy(), rtol=1e-10
    )
    ref_j = torch.func.jacrev(tf, argnums=(0, 1))(torch.tensor(x), torch.tensor(y))
    j = F.jacfwd(_f, argnums=(0, 1))(_t(x), _t(y))
    for a, b in zip(j, ref_j):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)


def test_reverse_over_forward_grad_of_jvp():
    x = _t([0.3, -0.7, 1.1])
    v = _t([1.0, 2.0, -1.0])
    # d/dx <grad f(x), v> = H v for f = sum(x^4): H = diag(12 x^2)
    hvp = F.grad(lambda a: F.jvp(lambda b: (b**4).sum(), (a,), (v,))[1])(x)
    np.testing.assert_allclose(hvp.numpy(), 12 * x.numpy() ** 2 * v.numpy(), rtol=1e-10)
    hvp2 = F.jvp(F.grad(lambda b: (b**4).sum()), (x,), (v,))[1]  # forward-over-reverse
    np.testing.assert_allclose(hvp2.detach().numpy(), hvp.numpy(), rtol=1e-10)


def test_vmap_matches_torch_func_values_and_errors():
    torch = _torch()
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    cases = [
        (lambda a, b: a * b.sum(), (x, y), {"in_dims": (0, 1)}),
        (lambda a: (a, a.sum()), (x,), {"out_dims": (1, 0)}),
        (lambda a, b: a + b, (x, y[:, 0]), {"in_dims": (0, None)}),
        (lambda a: a.sum(0), (x,), {"in_dims": 1}),
    ]
    for f, args, kw in cases:
        ours = F.vmap(f, **kw)(*[_t(a) for a in args])
        ref = torch.func.vmap(f, **kw)(*[torch.tensor(a) for a in args])
        ours = ours if isinstance(ours, tuple) else (ours,)
        ref = ref if isinstance(ref, tuple) else (ref,)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        F.vmap(lambda a, b: a + b)(_t(x), _t(y))
    with pytest.raises(ValueError, match="non-Tensor"):
        F.vmap(lambda a: a)(1.0)
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        F.vmap(lambda a: a, in_dims=(0, 1))(_t(x))
    with pytest.raises(ValueError, match="must only return Tensors"):
        F.vmap(lambda a: 1.0)(_t(x))
    with pytest.raises(ValueError, match="in_dim=2"):
        F.vmap(lambda a: a, in_dims=2)(_t(x))
    with pytest.raises(RuntimeError, match="randomness error mode"):
        F.vmap(lambda a: a + tg.rand(4))(_t(x))


def test_vmap_randomness_same_and_different():
    x = tg.zeros(3, 4)
    same = F.vmap(lambda a: a + tg.rand(4), randomness="same")(x).numpy()
    assert np.all(same == same[0])
    diff = F.vmap(lambda a: a + tg.rand(4), randomness="different")(x).numpy()
    assert not np.allclose(diff[0], diff[1])


def _per_sample_check(model, x, y, loss_fn):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xb, yb):
        out = F.functional_call(model, p, (xb[None],))
        return loss_fn(out, yb[None])

    per = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for i in range(x.shape[0]):
        model.zero_grad()
        loss_fn(model(x[i : i + 1]), y[i : i + 1]).backward()
        for k, p in model.named_parameters():
            np.testing.assert_allclose(per[k][i].numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_per_sample_gradients_of_an_mlp_and_a_cnn_equal_the_loop():
    tg.manual_seed(0)
    mlp = tg.nn.Sequential(tg.nn.Linear(5, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
    _per_sample_check(mlp, tg.randn(6, 5), tg.randint(0, 3, (6,)), tg.nn.functional.cross_entropy)
    cnn = tg.nn.Sequential(
        tg.nn.Conv2d(1, 2, 3), tg.nn.Tanh(), tg.nn.Flatten(), tg.nn.Linear(2 * 4 * 4, 2)
    )
    _per_sample_check(cnn, tg.randn(4, 1, 6, 6), tg.randn(4, 2), tg.nn.functional.mse_loss)


def test_functional_call_restores_the_module_and_checks_names():
    lin = tg.nn.Linear(2, 1)
    w0 = lin.weight
    new = {"weight": tg.ones(1, 2), "bias": tg.zeros(1)}
    out = F.functional_call(lin, new, (tg.tensor([[1.0, 2.0]]),))
    assert out.item() == 3.0 and lin.weight is w0
    with pytest.raises(AttributeError, match="no parameter or buffer named 'wieght'"):
        F.functional_call(lin, {"wieght": tg.ones(1, 2)}, (tg.ones(1, 2),))
    with pytest.raises(RuntimeError, match="missing keys"):
        F.functional_call(lin, {"weight": tg.ones(1, 2)}, (tg.ones(1, 2),), strict=True)
    assert lin.weight is w0


def test_transform_errors():
    with pytest.raises(RuntimeError, match="tuple"):
        F.jvp(lambda a: a, _t([1.0]), _t([1.0]))
    with pytest.raises(RuntimeError, match="same shape"):
        F.jvp(lambda a: a, (_t([1.0]),), (_t([1.0, 2.0]),))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        F.vjp(lambda a: a * 2, _t([1.0, 2.0]))[1](_t([1.0]))


def test_torch_facade_exposes_func_and_forward_ad():
    import tapegrad.compat.torch as torch
    from tapegrad.compat.torch.autograd import forward_ad as fwAD
    from tapegrad.compat.torch.func import vmap

    assert torch.func.jvp is F.jvp and vmap is F.vmap
    with fwAD.dual_level():
        d = fwAD.make_dual(torch.tensor([1.0]), torch.tensor([2.0]))
        assert fwAD.unpack_dual(d * 3).tangent.item() == 6.0


def test_jvp_through_layers_matches_finite_differences():
    tg.manual_seed(0)
    nn = tg.nn
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, padding=1),
        nn.BatchNorm2d(3),
        nn.GELU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.LayerNorm(12),
        nn.Linear(12, 4),
        nn.Softplus(),
    )
    model.eval()
    for p in model.parameters():
        p.data = p.data.astype(np.float64)
    for b in model.buffers():
        b.data = b.data.astype(np.float64)
    rng = np.random.default_rng(4)
    x, v = rng.standard_normal((2, 2, 4, 4)), rng.standard_normal((2, 2, 4, 4))
    with tg.no_grad():
        f = lambda a: model(_t(a)).numpy()  # noqa: E731
        fd = (f(x + 1e-6 * v) - f(x - 1e-6 * v)) / 2e-6
    _, t = F.jvp(model, (_t(x),), (_t(v),))
    np.testing.assert_allclose(t.detach().numpy(), fd, rtol=1e-5, atol=1e-7)
