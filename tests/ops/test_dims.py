"""atleast_1d/2d/3d, broadcast_shapes, unravel_index, chain_matmul, linalg.multi_dot and the
facade's torch.functional: against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


SHAPES = [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)]


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", SHAPES)
def test_atleast_shapes_and_views_as_torch(torch, rng, name, shape):
    a = rng.standard_normal(shape)
    x = tg.tensor(a)
    out, ref = getattr(tg, name)(x), getattr(torch, name)(torch.tensor(a))
    assert out.shape == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    assert np.shares_memory(out.numpy(), x.numpy())  # a view, as PyTorch's


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_calling_forms_as_torch(torch, name):
    ours, theirs = getattr(tg, name), getattr(torch, name)
    a, b = tg.tensor(1.0), tg.ones(2)
    ta, tb = torch.tensor(1.0), torch.ones(2)
    for args, targs in [((a, b), (ta, tb)), (([a, b],), ([ta, tb],)), (((a,),), ((ta,),))]:
        out, ref = ours(*args), theirs(*targs)
        assert isinstance(out, tuple) and isinstance(ref, tuple)
        assert [o.shape for o in out] == [tuple(r.shape) for r in ref]


def test_atleast_gradients(rng):
    x = tg.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda t: tg.atleast_3d(t) * 2, (x,))


def test_broadcast_shapes_as_torch(torch):
    for shapes in [((2, 1), (3,), 1), ((5, 1, 4), (3, 1)), (), ((0,), (1,))]:
        assert tg.broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError, match=r"broadcast_shapes\(\): shapes \[\(2,\), \(3,\)\]"):
        tg.broadcast_shapes((2,), (3,))
    with pytest.raises(RuntimeError):
        torch.broadcast_shapes((2,), (3,))


@pytest.mark.parametrize(
    "indices,shape",
    [
        ([4, 1, 0], (2, 3)),
        (5, (2, 3)),
        ([[7, 23], [0, 11]], (2, 3, 4)),
        ([6, -1], (2, 3)),
        ([3], 6),
    ],
)
def test_unravel_index_as_torch(torch, indices, shape):
    out = tg.unravel_index(tg.tensor(indices), shape)
    ref = torch.unravel_index(torch.tensor(indices), shape)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.dtype == tg.int64 and o.shape == tuple(r.shape)
        np.testing.assert_array_equal(o.numpy(), r.numpy())


def test_unravel_index_errors():
    with pytest.raises(TypeError, match="unravel_index.*integer dtype, but got float32"):
        tg.unravel_index(tg.tensor([1.0]), (2, 3))
    with pytest.raises(TypeError, match="unravel_index.*a Tensor"):
        tg.unravel_index(5, (2, 3))


def test_chain_matmul_warns_as_torch_and_multi_dot(torch, rng):
    ms = [rng.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        out = tg.chain_matmul(*[tg.tensor(m) for m in ms])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.chain_matmul(*[torch.tensor(m) for m in ms])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    vs = [
        rng.standard_normal(3),
        rng.standard_normal((3, 4)),
        rng.standard_normal((4, 5)),
        rng.standard_normal(5),
    ]
    xs = [tg.tensor(v, requires_grad=True) for v in vs]
    ts = [torch.tensor(v, requires_grad=True) for v in vs]
    out, ref = tg.linalg.multi_dot(xs), torch.linalg.multi_dot(ts)
    assert out.shape == tuple(ref.shape) == ()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.backward()
    ref.backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): expected 2 or more tensors"):
        tg.linalg.multi_dot([tg.ones(2, 2)])
    with pytest.raises(RuntimeError, match=r"multi_dot\(\): tensor 1 must be 2-D"):
        tg.linalg.multi_dot([tg.ones(2), tg.ones(2), tg.ones(2)])


def test_torch_functional_has_what_torch_functional_has(torch):
    import torch.functional as real

    import tapegrad.compat.torch as ftorch
    import tapegrad.compat.torch.functional as F

    lacking = {"stft", "istft", "lu", "pca_lowrank", "svd_lowrank"}
    assert set(F.__all__) == set(real.__all__) - lacking
    for name in F.__all__:
        assert getattr(F, name) is getattr(ftorch, name)
    for name in lacking:
        with pytest.raises(
            AttributeError, match=f"'{name}' is not supported by the PyTorch facade"
        ):
            getattr(F, name)
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(
        F.einsum("ij,kj->ik", tg.tensor(a), tg.tensor(a)).numpy(),
        real.einsum("ij,kj->ik", torch.tensor(a), torch.tensor(a)).numpy(),
    )
    assert [t.shape for t in F.split(tg.tensor(a), 1)] == [
        tuple(t.shape) for t in real.split(torch.tensor(a), 1)
    ]
