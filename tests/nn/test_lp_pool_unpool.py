"""lp_pool1d/2d/3d and max_unpool1d/2d/3d with their layers: values and gradients against
PyTorch, finite differences, PyTorch's output_size rules, errors, reprs."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _grads_match(torch, rng, out, ref, pairs):
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(tuple(ref.shape))
    out.backward(tg.tensor(g))
    ref.backward(torch.tensor(g))
    for mine, theirs in pairs:
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize(
    "p, kw",
    [
        (2, {"kernel_size": 2}),
        (3.0, {"kernel_size": 3, "stride": 2}),
        (1.5, {"kernel_size": 2, "stride": 1, "ceil_mode": True}),
        (1, {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ],
    ids=str,
)
def test_lp_pool_matches_torch(torch, rng, nd, p, kw):
    shape = (2, 3) + (7, 6, 5)[:nd]
    x = np.abs(rng.standard_normal(shape)) + 0.1  # positive: every root is real
    a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    name = f"lp_pool{nd}d"
    out, ref = getattr(F, name)(a, p, **kw), getattr(torch.nn.functional, name)(b, p, **kw)
    _grads_match(torch, rng, out, ref, [(a, b)])
    # unbatched input
    np.testing.assert_allclose(
        getattr(F, name)(tg.tensor(x[0]), p, **kw).numpy(),
        getattr(torch.nn.functional, name)(torch.tensor(x[0]), p, **kw).numpy(),
        rtol=1e-12,
    )


def test_lp_pool_signs_zeros_and_nans_as_torch(torch, rng):
    x = rng.standard_normal((1, 2, 6, 6))
    x[0, 0, :2, :2] = 0.0  # a window summing to zero: a zero gradient, not NaN
    for p in (2, 3):  # p = 3: negative sums give NaN, as PyTorch
        a, b = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, ref = F.lp_pool2d(a, p, 2), torch.nn.functional.lp_pool2d(b, p, 2)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_lp_pool_gradcheck(rng):
    x = tg.tensor(np.abs(rng.standard_normal((1, 2, 5, 5))) + 0.5, requires_grad=True)
    assert gradcheck(lambda t: F.lp_pool2d(t, 2.5, 2, stride=1), (x,))
    y = tg.tensor(np.abs(rng.standard_normal((1, 1, 4, 3, 4))) + 0.5, requires_grad=True)
    assert gradcheck(lambda t: F.lp_pool3d(t, 2, 2, stride=1), (y,))


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize(
    "kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}], ids=str
)
def test_max_unpool_inverts_max_pool_as_torch(torch, rng, nd, kw):
    shape = (2, 3) + (7, 6, 5)[:nd]
    x = rng.standard_normal(shape)
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")
    v, idx = pool(torch.tensor(x), return_indices=True, **kw)
    mine_v, mine_idx = getattr(F, f"max_pool{nd}d")(tg.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(mine_idx.numpy(), idx.numpy())
    a, b = tg.tensor(v.numpy(), requires_grad=True), v.clone().requires_grad_(True)
    name = f"max_unpool{nd}d"
    for size in (None, tuple(shape[2:]), shape):
        a.grad, b.grad = None, None
        try:
            ref = getattr(torch.nn.functional, name)(b, idx, output_size=size, **kw)
        except RuntimeError as e:  # the default size is smaller than the pooled input was
            assert "Found an invalid max index" in str(e)
            with pytest.raises(RuntimeError, match="Found an invalid max index"):
                getattr(F, name)(a, tg.tensor(idx.numpy()), output_size=size, **kw)
            continue
        out = getattr(F, name)(a, tg.tensor(idx.numpy()), output_size=size, **kw)
        _grads_match(torch, rng, out, ref, [(a, b)])
    # unbatched
    size = shape[2:]
    out = getattr(F, name)(
        tg.tensor(v.numpy()[0]), tg.tensor(idx.numpy()[0]), output_size=size, **kw
    )
    ref = getattr(torch.nn.functional, name)(v[0], idx[0], output_size=size, **kw)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_max_unpool_gradcheck_and_duplicates(rng):
    x = tg.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
    idx = tg.tensor(np.array([0, 4, 8, 9, 13, 20, 31, 35, 30] * 2).reshape(1, 2, 3, 3))
    assert gradcheck(lambda t: F.max_unpool2d(t, idx, 2), (x,))
    # two values for one position: one of them is written (PyTorch leaves which unspecified)
    out = F.max_unpool1d(tg.tensor([[[1.0, 2.0]]]), tg.tensor([[[1, 1]]]), 2).numpy()
    assert out[0, 0, [0, 2, 3]].tolist() == [0.0, 0.0, 0.0] and out[0, 0, 1] in (1.0, 2.0)


def test_max_unpool_errors_as_torch():
    one = tg.ones(1, 1, 2, 2)
    with pytest.raises(
        RuntimeError, match=r"Found an invalid max index: 99 \(output volumes are of size 4x4\)"
    ):
        F.max_unpool2d(one, tg.tensor([[[[1, 99], [0, 0]]]]), 2)
    with pytest.raises(RuntimeError, match=r"max_unpool1d: Found an invalid max index: -1 .*4x1"):
        F.max_unpool1d(tg.ones(1, 1, 2), tg.tensor([[[1, -1]]]), 2)
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 64 .*4x4x4"):
        F.max_unpool3d(tg.ones(1, 1, 2, 2, 2), tg.full((1, 1, 2, 2, 2), 64, dtype=tg.int64), 2)
    ok = tg.tensor([[[[1, 1], [0, 0]]]])
    with pytest.raises(
        ValueError, match=r'invalid output_size "\(9, 9\)" \(dim 0 must be between 2 and 6\)'
    ):
        F.max_unpool2d(one, ok, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match="should be a sequence containing 2 or 4 elements"):
        F.max_unpool2d(one, ok, 2, output_size=(9,))
    with pytest.raises(RuntimeError, match="max_unpool2d: input should be a 3d or 4d Tensor"):
        F.max_unpool2d(tg.ones(2, 3), tg.zeros(2, 3, dtype=tg.int64), 2)
    with pytest.raises(RuntimeError, match="max_unpool2d: expected indices of the input's shape"):
        F.max_unpool2d(one, tg.zeros(1, 1, 2, 1, dtype=tg.int64), 2)
    with pytest.raises(RuntimeError, match="max_unpool2d: indices must be int64"):
        F.max_unpool2d(one, tg.zeros(1, 1, 2, 2, dtype=tg.int32), 2)
    with pytest.raises(ValueError, match="lp_pool2d: expected input with 4 dims"):
        F.lp_pool2d(tg.ones(2, 3), 2, 2)
    with pytest.raises(ValueError, match="lp_pool1d: norm_type must be non-zero"):
        F.lp_pool1d(tg.ones(1, 4), 0, 2)
    with pytest.raises(TypeError, match="lp_pool3d: norm_type must be a number"):
        F.lp_pool3d(tg.ones(1, 2, 2, 2), "2", 2)


def test_layers_match_torch_reprs_and_facade(torch, rng):
    x = np.abs(rng.standard_normal((2, 3, 6, 6, 6))) + 0.1
    pairs = [
        (tg.nn.LPPool1d(2, 3), torch.nn.LPPool1d(2, 3), x[:, :, 0, 0]),
        (tg.nn.LPPool2d(1.5, (2, 3), 1), torch.nn.LPPool2d(1.5, (2, 3), 1), x[:, :, 0]),
        (tg.nn.LPPool3d(2, 2, ceil_mode=True), torch.nn.LPPool3d(2, 2, ceil_mode=True), x),
    ]
    for mine, theirs, inp in pairs:
        assert repr(mine) == repr(theirs)
        np.testing.assert_allclose(
            mine(tg.tensor(inp)).numpy(), theirs(torch.tensor(inp)).numpy(), rtol=1e-12
        )
    for nd, args in ((1, (2,)), (2, (3, 2, 1)), (3, ((2, 1, 2), 1))):
        mine = getattr(tg.nn, f"MaxUnpool{nd}d")(*args)
        theirs = getattr(torch.nn, f"MaxUnpool{nd}d")(*args)
        assert repr(mine) == repr(theirs)
        inp = x[(slice(None), slice(None)) + (0,) * (3 - nd)]
        pool_args = args if len(args) > 1 else (args[0],)
        v, idx = getattr(torch.nn.functional, f"max_pool{nd}d")(
            torch.tensor(inp), *pool_args, return_indices=True
        )
        out = mine(tg.tensor(v.numpy()), tg.tensor(idx.numpy()), output_size=inp.shape)
        np.testing.assert_array_equal(out.numpy(), theirs(v, idx, output_size=inp.shape).numpy())
    from tapegrad.compat import torch as ttorch

    for name in ("LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"):
        assert getattr(ttorch.nn, name) is getattr(tg.nn, name)
    for name in (
        "lp_pool1d",
        "lp_pool2d",
        "lp_pool3d",
        "max_unpool1d",
        "max_unpool2d",
        "max_unpool3d",
    ):
        assert getattr(ttorch.nn.functional, name) is getattr(F, name)
