"""nn.utils.parametrize and nn.utils.parametrizations (weight_norm, spectral_norm), and the
older hook-based weight_norm / spectral_norm: against PyTorch and by their definitions."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck
from tapegrad.nn.utils import parametrizations, parametrize


class Symmetric(tg.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T

    def right_inverse(self, a):
        return a.triu()


def _linear(seed=0, n_in=4, n_out=3):
    layer = tg.nn.Linear(n_in, n_out).double()
    rng = np.random.default_rng(seed)
    layer.weight.data = tg.tensor(rng.standard_normal((n_out, n_in)))
    layer.bias.data = tg.tensor(rng.standard_normal(n_out))
    return layer


def _torch_linear(torch, layer):
    t = torch.nn.Linear(layer.in_features, layer.out_features).double()
    with torch.no_grad():
        t.weight.copy_(torch.tensor(layer.weight.detach().numpy()))
        t.bias.copy_(torch.tensor(layer.bias.detach().numpy()))
    return t


def test_register_and_remove_a_parametrization():
    layer = _linear(n_in=3)
    weight = layer.weight
    opt = tg.optim.SGD(layer.parameters(), lr=0.1)
    parametrize.register_parametrization(layer, "weight", Symmetric())
    assert type(layer).__name__ == "ParametrizedLinear" and isinstance(layer, tg.nn.Linear)
    assert parametrize.type_before_parametrizations(layer) is tg.nn.Linear
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    # the original Parameter is the one the optimizer holds, now holding right_inverse(w)
    assert layer.parametrizations.weight.original is weight
    assert [n for n, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original"]
    w = layer.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    layer(tg.randn(2, 3, dtype=tg.float64)).sum().backward()
    assert weight.grad is not None
    opt.step()
    w = layer.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)  # still symmetric after a step
    # assigning goes through right_inverse
    target = np.arange(9.0).reshape(3, 3)
    layer.weight = tg.tensor(target + target.T)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), target + target.T)
    with parametrize.cached():
        assert layer.weight is layer.weight
    assert layer.weight is not layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is tg.nn.Linear and not hasattr(layer, "parametrizations")
    assert layer.weight is weight
    np.testing.assert_array_equal(weight.detach().numpy(), target + target.T)
    assert list(layer.state_dict()) == ["bias", "weight"]


def test_parametrization_matches_pytorch():
    torch = pytest.importorskip("torch")
    tp = torch.nn.utils.parametrize

    class TorchSymmetric(torch.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).T

    ours = _linear(1, n_in=3)
    theirs = _torch_linear(torch, ours)
    parametrize.register_parametrization(ours, "weight", Symmetric(), unsafe=True)
    tp.register_parametrization(theirs, "weight", TorchSymmetric())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(2).standard_normal((2, 3))
    # no right_inverse on PyTorch's side here: compare the forward on the same original
    with torch.no_grad():
        theirs.parametrizations.weight.original.copy_(
            torch.tensor(ours.parametrizations.weight.original.detach().numpy())
        )
    np.testing.assert_allclose(
        ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-12
    )
    assert "ParametrizationList" in repr(ours)


def test_weight_norm_matches_pytorch():
    torch = pytest.importorskip("torch")
    for dim in (0, 1, None):
        ours = _linear(3)
        theirs = _torch_linear(torch, ours)
        parametrizations.weight_norm(ours, dim=dim)
        torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
        names = [n for n, _ in ours.named_parameters()]
        assert names == [n for n, _ in theirs.named_parameters()]
        for (_, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
        x = np.random.default_rng(4).standard_normal((5, 4))
        ours(tg.tensor(x)).square().sum().backward()
        theirs(torch.tensor(x)).square().sum().backward()
        for (_, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


def test_old_weight_norm_hooks_match_pytorch():
    torch = pytest.importorskip("torch")
    ours = _linear(5)
    theirs = _torch_linear(torch, ours)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        tg.nn.utils.weight_norm(ours)  # deprecated, as PyTorch's says
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(theirs)
    assert [n for n, _ in ours.named_parameters()] == ["bias", "weight_g", "weight_v"]
    x = np.random.default_rng(6).standard_normal((5, 4))
    ours(tg.tensor(x)).square().sum().backward()
    theirs(torch.tensor(x)).square().sum().backward()
    np.testing.assert_allclose(ours.weight_g.grad.numpy(), theirs.weight_g.grad.numpy(), 1e-10)
    np.testing.assert_allclose(ours.weight_v.grad.numpy(), theirs.weight_v.grad.numpy(), 1e-10)
    with pytest.raises(RuntimeError, match="normalised already"), pytest.warns(FutureWarning):
        tg.nn.utils.weight_norm(ours)
    tg.nn.utils.remove_weight_norm(ours)
    assert [n for n, _ in ours.named_parameters()] == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        tg.nn.utils.remove_weight_norm(ours)


def _sigma(w):
    return np.linalg.svd(w.reshape(w.shape[0], -1), compute_uv=False)[0]


@pytest.mark.parametrize("api", ["parametrization", "hooks"])
def test_spectral_norm_divides_by_the_largest_singular_value(api):
    conv = tg.nn.Conv2d(3, 5, 3).double()
    w = conv.weight.detach().numpy().copy()
    if api == "parametrization":
        parametrizations.spectral_norm(conv, n_power_iterations=300)
    else:
        tg.nn.utils.spectral_norm(conv, n_power_iterations=300)
    conv(tg.randn(1, 3, 4, 4, dtype=tg.float64))  # a training forward: power iteration
    normed = conv.weight.detach().numpy()
    np.testing.assert_allclose(normed, w / _sigma(w), rtol=1e-8)
    np.testing.assert_allclose(_sigma(normed), 1.0, rtol=1e-8)


def test_spectral_norm_matches_pytorch_from_the_same_vectors():
    torch = pytest.importorskip("torch")
    ours = _linear(7)
    theirs = _torch_linear(torch, ours)
    parametrizations.spectral_norm(ours)
    torch.nn.utils.parametrizations.spectral_norm(theirs)
    sn_t = theirs.parametrizations.weight[0]
    sn_g = ours.parametrizations.weight[0]
    sn_g._u.data = tg.tensor(sn_t._u.numpy().copy())
    sn_g._v.data = tg.tensor(sn_t._v.numpy().copy())
    x = np.random.default_rng(8).standard_normal((2, 4))
    for _ in range(3):  # each training forward takes one power-iteration step
        a = ours(tg.tensor(x))
        b = theirs(torch.tensor(x))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(
        ours.parametrizations.weight.original.grad.numpy(),
        theirs.parametrizations.weight.original.grad.numpy(),
        atol=1e-10,
    )
    ours.eval()
    before = sn_g._u.numpy().copy()
    ours(tg.tensor(x))
    np.testing.assert_array_equal(sn_g._u.numpy(), before)  # eval: no power iteration


def test_weight_norm_gradient_by_finite_differences():
    layer = _linear(9)
    parametrizations.weight_norm(layer)
    g = layer.parametrizations.weight.original0
    v = layer.parametrizations.weight.original1
    x = tg.tensor(np.random.default_rng(10).standard_normal((3, 4)))

    def f(g_, v_):
        return (x @ (v_ * (g_ / (v_ * v_).sum(1, keepdim=True).sqrt())).T).sum()

    assert gradcheck(f, (g.detach().requires_grad_(), v.detach().requires_grad_()))
    np.testing.assert_allclose(
        layer(x).sum().item() - layer.bias.sum().item() * 3, f(g, v).item(), rtol=1e-12
    )


def test_bad_input():
    layer = _linear()
    with pytest.raises(ValueError, match="has no parameter or buffer 'kernel'"):
        parametrize.register_parametrization(layer, "kernel", Symmetric())
    with pytest.raises(TypeError, match="must both be nn.Modules"):
        parametrize.register_parametrization(layer, "weight", lambda w: w)

    class FirstColumns(tg.nn.Module):
        def forward(self, x):
            return x[:, :2]

    with pytest.raises(ValueError, match="changes 'weight' from"):
        parametrize.register_parametrization(layer, "weight", FirstColumns())
    with pytest.raises(ValueError, match="no parametrization on 'weight'"):
        parametrize.remove_parametrizations(layer, "weight")
    with pytest.raises(ValueError, match="n_power_iterations must be positive"):
        parametrizations.spectral_norm(layer, n_power_iterations=0)
    with pytest.raises(ValueError, match="has no tensor 'kernel'"):
        parametrizations.weight_norm(layer, "kernel")
