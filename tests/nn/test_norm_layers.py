"""instance_norm, rms_norm, local_response_norm and their layers (plus BatchNorm3d): values,
gradients and running statistics against PyTorch, finite differences, errors, reprs, keys."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck, gradgradcheck


def _t(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize(
    ("cls", "shape"),
    [
        ("InstanceNorm1d", (4, 3, 5)),
        ("InstanceNorm1d", (3, 5)),
        ("InstanceNorm2d", (2, 3, 4, 5)),
        ("InstanceNorm3d", (2, 3, 2, 3, 4)),
    ],
)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("track", [False, True])
def test_instance_norm_layers_match_torch(rng, cls, shape, affine, track):
    torch = pytest.importorskip("torch")
    ours = getattr(tg.nn, cls)(3, affine=affine, track_running_stats=track, dtype=tg.float64)
    theirs = getattr(torch.nn, cls)(3, affine=affine, track_running_stats=track)
    theirs.double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    if affine:
        w = rng.standard_normal(3)
        ours.weight._data[...] = w
        theirs.weight.data[...] = torch.tensor(w)
    for _ in range(2):  # two steps: the running statistics accumulate
        x = rng.standard_normal(shape)
        a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref = ours(a), theirs(b)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-10)
        g = rng.standard_normal(out.shape)
        out.backward(tg.tensor(g))
        ref.backward(torch.tensor(g))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)
        if affine:
            np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad, atol=1e-10)
            np.testing.assert_allclose(ours.bias.grad.numpy(), theirs.bias.grad, atol=1e-10)
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), atol=1e-12)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(
        ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-10
    )


def test_instance_norm_known_values_and_running_stats():
    x = tg.tensor(np.array([[[1.0, 3.0], [0.0, 4.0]], [[3.0, 5.0], [1.0, 3.0]]]))
    rm, rv = tg.zeros(2, dtype=tg.float64), tg.ones(2, dtype=tg.float64)
    out = F.instance_norm(x, rm, rv, momentum=0.5, eps=0.0)
    np.testing.assert_allclose(out.numpy(), [[[-1, 1], [-1, 1]]] * 2)
    # per-sample means (2, 4) and (2, 2) -> 0.5 * mean over the batch
    np.testing.assert_allclose(rm.numpy(), [0.5 * 3.0, 0.5 * 2.0])
    # unbiased per-sample variances (2, 8) and (2, 2)
    np.testing.assert_allclose(rv.numpy(), [0.5 + 0.5 * 2.0, 0.5 + 0.5 * 5.0])


def test_instance_norm_gradcheck(rng):
    x = _t(rng.standard_normal((2, 3, 4)))
    w, b = _t(rng.standard_normal(3)), _t(rng.standard_normal(3))
    assert gradcheck(lambda a, u, v: F.instance_norm(a, weight=u, bias=v), (x, w, b))
    assert gradgradcheck(lambda a: F.instance_norm(a) ** 2, (x,))
    rm, rv = tg.tensor(rng.standard_normal(3)), tg.tensor(rng.random(3) + 0.5)
    assert gradcheck(
        lambda a, u: F.instance_norm(a, rm, rv, weight=u, use_input_stats=False), (x, w)
    )


def test_instance_norm_errors_and_warning():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        F.instance_norm(tg.randn(2, 3, 1))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 1D input\)"):
        tg.nn.InstanceNorm1d(3)(tg.randn(4))
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        tg.nn.InstanceNorm2d(3)(tg.randn(2, 3))
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 3D input\)"):
        tg.nn.InstanceNorm3d(3)(tg.randn(2, 3, 3))
    with pytest.raises(ValueError, match=r"size at dim=1 to match num_features \(3\), but got: 4"):
        tg.nn.InstanceNorm1d(3, affine=True)(tg.randn(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        assert tg.nn.InstanceNorm1d(3)(tg.randn(2, 4, 5)).shape == (2, 4, 5)
    with pytest.raises(ValueError, match="running_mean has shape"):
        F.instance_norm(tg.randn(2, 3, 4), tg.zeros(4), tg.ones(4))
    with pytest.raises(ValueError, match="use_input_stats=False needs"):
        F.instance_norm(tg.randn(2, 3, 4), use_input_stats=False)
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.instance_norm(np.ones((2, 3, 4)))


def test_batch_norm3d_matches_torch(rng):
    torch = pytest.importorskip("torch")
    ours, theirs = tg.nn.BatchNorm3d(3, dtype=tg.float64), torch.nn.BatchNorm3d(3).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = rng.standard_normal((2, 3, 2, 3, 2))
    np.testing.assert_allclose(
        ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-10
    )
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy(), atol=1e-12)
    with pytest.raises(ValueError, match="expected 5D input"):
        ours(tg.randn(2, 3, 4, 4))


# ---------------------------------------------------------------- RMSNorm
@pytest.mark.parametrize("shape", [(4,), (3, 4)])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_torch(rng, shape, eps):
    torch = pytest.importorskip("torch")
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal(shape)
    a, u = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
    b, v = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    out = F.rms_norm(a, shape, u, eps)
    ref = torch.nn.functional.rms_norm(b, shape, v, eps)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(u.grad.numpy(), v.grad.numpy(), rtol=1e-10)
    xf = x.astype(np.float32)  # eps=None: float32's machine epsilon
    np.testing.assert_allclose(
        F.rms_norm(tg.tensor(xf), shape, eps=eps).numpy(),
        torch.nn.functional.rms_norm(torch.tensor(xf), shape, eps=eps).numpy(),
        rtol=1e-6,
    )


def test_rms_norm_values_gradcheck_and_errors(rng):
    np.testing.assert_allclose(
        F.rms_norm(tg.tensor([[3.0, 4.0]]), (2,), eps=0.0).numpy(),
        [[3 / np.sqrt(12.5), 4 / np.sqrt(12.5)]],
        rtol=1e-6,
    )
    x, w = _t(rng.standard_normal((2, 3))), _t(rng.standard_normal(3))
    assert gradcheck(lambda a, u: F.rms_norm(a, 3, u), (x, w))
    assert gradgradcheck(lambda a: F.rms_norm(a, (3,)), (x,))
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*4\], but got input"):
        F.rms_norm(tg.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        F.rms_norm(tg.randn(2, 3), (3,), weight=tg.ones(4))


def test_rms_norm_layer():
    torch = pytest.importorskip("torch")
    for args, kw in (((4,), {}), (([3, 4],), {"eps": 1e-3, "elementwise_affine": False})):
        ours, theirs = tg.nn.RMSNorm(*args, **kw), torch.nn.RMSNorm(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        tg.nn.RMSNorm([3, 4])(tg.tensor(x)).detach().numpy(),
        torch.nn.RMSNorm([3, 4])(torch.tensor(x)).detach().numpy(),
        rtol=1e-6,
    )


# ---------------------------------------------------------------- LocalResponseNorm
@pytest.mark.parametrize("shape", [(2, 5, 3), (2, 5, 3, 4), (2, 6, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_local_response_norm_matches_torch(rng, shape, size):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(shape)
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.local_response_norm(a, size, 1e-2, 0.75, 2.0)
    ref = torch.nn.functional.local_response_norm(b, size, 1e-2, 0.75, 2.0)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(shape)
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_local_response_norm_gradcheck_errors_repr(rng):
    x = _t(rng.standard_normal((1, 4, 3)))
    assert gradcheck(lambda a: F.local_response_norm(a, 3, alpha=0.5, k=1.0), (x,))
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2"):
        F.local_response_norm(tg.randn(2, 3), 2)
    layer = tg.nn.LocalResponseNorm(3)
    assert repr(layer) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert layer(tg.zeros(1, 3, 2)).shape == (1, 3, 2)


def test_torch_facade_reaches_norms():
    from tapegrad.compat import torch as ttorch

    assert ttorch.nn.InstanceNorm2d is tg.nn.InstanceNorm2d
    assert ttorch.nn.RMSNorm is tg.nn.RMSNorm
    assert ttorch.nn.BatchNorm3d is tg.nn.BatchNorm3d
    assert ttorch.nn.functional.rms_norm is F.rms_norm
    assert ttorch.nn.functional.instance_norm is F.instance_norm
