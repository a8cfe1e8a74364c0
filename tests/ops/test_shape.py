"""Shape ops: PyTorch semantics where NumPy differs, views and version counters, gradients,
and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck


def _leaf(a):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def _grad(fn, x, v=None):
    """d sum(fn(x) * v) / dx for a fixed random v."""
    out = fn(x)
    v = np.random.default_rng(1).standard_normal(out.shape) if v is None else v
    (g,) = tg.autograd.grad((out * tg.tensor(v)).sum(), [x])
    return g.numpy(), v


# ------------------------------------------------------------------ PyTorch semantics
def test_transpose_is_torch_swap_of_two_dims(rng):
    a = rng.standard_normal((2, 3, 4))
    assert tg.tensor(a).transpose(0, 2).shape == (4, 3, 2)
    np.testing.assert_array_equal(tg.transpose(tg.tensor(a), -1, 0).numpy(), a.swapaxes(-1, 0))
    np.testing.assert_array_equal(tg.tensor(a).permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(tg.tensor(a).permute((2, 0, 1)).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(tg.tensor(a).mT.numpy(), a.swapaxes(-1, -2))
    np.testing.assert_array_equal(tg.tensor(a[0]).T.numpy(), a[0].T)
    np.testing.assert_array_equal(tg.tensor(a[0]).t().numpy(), a[0].T)


def test_repeat_is_tile_and_repeat_interleave_is_numpy_repeat():
    x = tg.tensor([1, 2, 3])
    assert x.repeat(2).tolist() == [1, 2, 3, 1, 2, 3]
    assert x.repeat(2, 1).shape == (2, 3)
    assert x.repeat_interleave(2).tolist() == [1, 1, 2, 2, 3, 3]
    assert x.repeat_interleave(tg.tensor([1, 0, 2])).tolist() == [1, 3, 3]
    assert tg.tile(x, (2,)).tolist() == [1, 2, 3, 1, 2, 3]
    with pytest.raises(RuntimeError, match="number of repeat dims"):
        tg.ones(2, 3).repeat(2)


def test_split_takes_a_size_not_a_count():
    x = tg.arange(7)
    assert [p.tolist() for p in x.split(3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [p.tolist() for p in tg.split(x, [2, 5])] == [[0, 1], [2, 3, 4, 5, 6]]
    assert [p.shape for p in x.chunk(3)] == [(3,), (3,), (1,)]
    assert [p.shape for p in tg.ones(2, 6).chunk(4, dim=1)] == [(2, 2)] * 3
    with pytest.raises(RuntimeError, match=r"add up to 6.*size 7"):
        tg.split(x, [2, 4])


def test_split_and_unbind_gradients(rng):
    x = _leaf(rng.standard_normal((4, 3)))
    a, b = x.split([1, 3], dim=0)
    c = x.unbind(1)
    (a.sum() * 2 + (b * b).sum() + c[2].sum()).backward()
    expect = np.zeros((4, 3))
    expect[0] += 2
    expect[1:] += 2 * x.detach().numpy()[1:]
    expect[:, 2] += 1
    np.testing.assert_allclose(x.grad.numpy(), expect)


def test_flip_takes_dims_and_copies(rng):
    a = rng.standard_normal((2, 3))
    x = tg.tensor(a)
    f = x.flip(1)
    np.testing.assert_array_equal(f.numpy(), a[:, ::-1])
    np.testing.assert_array_equal(tg.flip(x, (0, 1)).numpy(), a[::-1, ::-1])
    f[0, 0] = 100.0  # a copy, as in PyTorch: the source is untouched
    np.testing.assert_array_equal(x.numpy(), a)
    with pytest.raises(TypeError, match="dims"):
        tg.flip(x)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_torch_values_and_gradients(rng, mode):
    torch = pytest.importorskip("torch")
    a = rng.standard_normal((2, 3, 4, 5))
    amounts = (1, 2, 2, 1)  # last dim (1, 2), then the one before (2, 1)
    x = _leaf(a)
    out = tg.pad(x, amounts, mode=mode)
    xt = torch.tensor(a, requires_grad=True)
    ref = torch.nn.functional.pad(xt, amounts, mode=mode)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())
    v = rng.standard_normal(out.shape)
    (out * tg.tensor(v)).sum().backward()
    (ref * torch.tensor(v)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


def test_pad_constant_value_and_negative_crop():
    torch = pytest.importorskip("torch")
    a = np.arange(12.0).reshape(3, 4)
    for amounts in [(1, 1), (0, 0, 2, 0), (-1, 2), (1, -2, -1, 0)]:
        np.testing.assert_array_equal(
            tg.pad(tg.tensor(a), amounts, value=7.0).numpy(),
            torch.nn.functional.pad(torch.tensor(a), amounts, value=7.0).numpy(),
        )


def test_pad_errors():
    with pytest.raises(ValueError, match="even length"):
        tg.pad(tg.ones(2, 3), (1, 2, 3))
    with pytest.raises(ValueError, match="unknown mode"):
        tg.pad(tg.ones(2, 3), (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="must be smaller than the dimension"):
        tg.pad(tg.ones(1, 2, 3), (3, 0), mode="reflect")


def test_flatten_unflatten_squeeze_unsqueeze():
    x = tg.zeros(2, 3, 4, 1)
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12)
    assert x.flatten(1, 2).shape == (2, 12, 1)
    assert tg.zeros(()).flatten().shape == (1,)
    assert x.flatten(1).unflatten(1, (3, -1)).shape == (2, 3, 4)
    assert x.squeeze().shape == (2, 3, 4)
    assert x.squeeze(0).shape == (2, 3, 4, 1)  # not size 1: unchanged, as in PyTorch
    assert x.squeeze(-1).shape == (2, 3, 4)
    assert x.squeeze(axis=3).shape == (2, 3, 4)
    assert x.unsqueeze(0).shape == (1, 2, 3, 4, 1)
    assert x.unsqueeze(-1).shape == (2, 3, 4, 1, 1)
    assert tg.expand_dims(x, (0, 1)).shape == (1, 1, 2, 3, 4, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze(6)


def test_reshape_view_and_errors():
    x = tg.arange(6)
    assert x.reshape(2, 3).shape == (2, 3)
    assert x.reshape((3, -1)).shape == (3, 2)
    assert x.view(-1, 2).shape == (3, 2)
    assert x.view_as(tg.zeros(2, 3)).shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"shape \[4, 2\] is invalid for input of shape \(6,\)"):
        x.reshape(4, 2)


def test_expand_and_broadcast():
    x = tg.tensor([[1.0], [2.0]])
    assert x.expand(2, 3).shape == (2, 3)
    assert x.expand(4, -1, 3).shape == (4, 2, 3)
    assert x.expand_as(tg.zeros(2, 5)).shape == (2, 5)
    assert tg.broadcast_to(x, (3, 2, 2)).shape == (3, 2, 2)
    with pytest.raises(RuntimeError, match=r"\(2, 1\) can't be broadcast to \(3, 3\)"):
        x.expand(3, 3)
    with pytest.raises(RuntimeError, match="number of sizes"):
        x.expand(3)


def test_expand_gradient_sums_back():
    x = _leaf([[1.0], [2.0]])
    x.expand(3, 2, 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[12.0], [12.0]])


def test_cat_and_stack(rng):
    a, b = _leaf(rng.standard_normal((2, 3))), _leaf(rng.standard_normal((1, 3)))
    c = tg.cat([a, b])
    assert c.shape == (3, 3)
    assert tg.concatenate((a, b), axis=0).shape == (3, 3)
    assert tg.cat([a, a], dim=-1).shape == (2, 6)
    assert tg.stack([a, a], dim=1).shape == (2, 2, 3)
    assert tg.stack([a, a], axis=-1).shape == (2, 3, 2)
    w = rng.standard_normal((3, 3))
    (c * tg.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), w[:2])
    np.testing.assert_allclose(b.grad.numpy(), w[2:])
    with pytest.raises(
        RuntimeError,
        match=r"tensor 0 has shape \(2, 3\) but tensor 1 has shape "
        r"\(2, 2\)",
    ):
        tg.cat([tg.ones(2, 3), tg.ones(2, 2)])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        tg.stack([tg.ones(2, 3), tg.ones(3, 2)])


def test_moveaxis_swapaxes_aliases(rng):
    a = rng.standard_normal((2, 3, 4))
    x = tg.tensor(a)
    np.testing.assert_array_equal(x.movedim(0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(
        tg.moveaxis(x, (0, 1), (2, 0)).numpy(), np.moveaxis(a, (0, 1), (2, 0))
    )
    np.testing.assert_array_equal(x.swapdims(0, 1).numpy(), a.swapaxes(0, 1))
    np.testing.assert_array_equal(tg.swapaxes(x, 0, 1).numpy(), a.swapaxes(0, 1))
    with pytest.raises(RuntimeError, match="each of the 3 dimensions"):
        x.permute(0, 0, 1)


# ------------------------------------------------------------------ views
def test_views_share_the_version_counter():
    base = tg.zeros(2, 3)
    for v in (
        base.reshape(6),
        base.view(3, 2),
        base.transpose(0, 1),
        base.unsqueeze(0),
        base[0],
        base.T,
        base.permute(1, 0),
    ):
        before = base._version
        v.add_(1.0)
        assert base._version == before + 1
    assert base.contiguous() is base
    np.testing.assert_array_equal(base.numpy(), [[7.0] * 3, [6.0] * 3])  # base[0]: row 0 only


def test_in_place_change_of_a_view_is_caught_by_saved_base():
    x = _leaf(np.ones(3))
    y = x * 2
    z = y * y  # saves y
    y.view(3).add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_in_place_on_a_view_of_a_non_saved_tensor_is_fine():
    x = _leaf(np.ones((2, 3)))
    h = (x * 2).reshape(6)  # reshape saves nothing
    h.mul_(3.0)
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 6.0))


# ------------------------------------------------------------------ gradients
@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.reshape(4, 3),
        lambda x: x.transpose(0, 1),
        lambda x: x.permute(1, 0),
        lambda x: x.flatten(),
        lambda x: x.unsqueeze(1).squeeze(1),
        lambda x: x.flip(0),
        lambda x: x.repeat(2, 3),
        lambda x: x.repeat_interleave(2, dim=0),
        lambda x: x.repeat_interleave(tg.tensor([1, 2, 0, 1]), dim=1),
        lambda x: tg.tile(x, (2,)),
        lambda x: x.expand(2, 3, 4),
        lambda x: tg.pad(x, (1, 1), mode="reflect"),
        lambda x: tg.cat([x, x * 2], 1),
        lambda x: tg.stack([x, x], 0),
        lambda x: x.narrow(1, 1, 2),
    ],
)
def test_public_functions_pass_gradcheck(rng, fn):
    assert gradcheck(fn, (_leaf(rng.standard_normal((3, 4))),))


def test_second_order_through_shape_ops(rng):
    x = _leaf(rng.standard_normal((2, 3)))
    y = (x.reshape(3, 2).transpose(0, 1).repeat(2, 1) ** 3).sum()
    (g,) = tg.autograd.grad(y, [x], create_graph=True)
    (gg,) = tg.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), 2 * 6 * x.detach().numpy())


def test_numpy_style_positional_parameters_in_rules():
    # rules on tensors call xp.reshape(g, shape), xp.swapaxes(g, a, b), xp.concatenate([..], axis)
    from tapegrad.ops.xp import T

    x = _leaf(np.arange(6.0))
    assert T.reshape(x, (2, 3)).shape == (2, 3)
    assert T.swapaxes(T.reshape(x, (2, 3)), -1, -2).shape == (3, 2)
    assert T.concatenate([x, x], 0).shape == (12,)
    assert T.sum_to(T.broadcast_to(x, (4, 6)), (6,)).shape == (6,)
    out = T.transpose(T.reshape(x, (1, 2, 3)), (2, 0, 1))
    (g,) = tg.autograd.grad(out.sum(), [x])
    np.testing.assert_array_equal(g.numpy(), np.ones(6))


# ------------------------------------------------ the op table's shape ops on a 0-d input
@pytest.mark.parametrize(
    "name, params",
    [
        ("flip", {"axis": -1}),
        ("flip", {"axis": 0}),
        ("flip", {"axis": (0,)}),
        ("moveaxis", {"source": 0, "destination": -1}),
        ("moveaxis", {"source": (-1,), "destination": (0,)}),
    ],
)
def test_table_shape_ops_take_dim_0_and_minus_1_of_a_0d_input(name, params):
    """As torch.flip(x, [-1]) and torch.movedim(x, 0, -1) on a 0-d x: the value itself, and
    a gradient of 1 (issue 12)."""
    from tapegrad.ops.registry import OPS

    x = _leaf(2.5)
    out = OPS[name](x, **params)
    assert out.shape == () and out.item() == 2.5
    (g,) = tg.autograd.grad(out * 3.0, [x])
    assert g.item() == 3.0
    with pytest.raises(IndexError, match=rf"{name}.*got 1.*0-d"):
        OPS[name](x, **{k: 1 for k in params})


def test_table_expand_dims_and_transpose_on_a_0d_input_match_torch():
    torch = pytest.importorskip("torch")
    from tapegrad.ops.registry import OPS

    x, t = _leaf(2.5), torch.tensor(2.5, dtype=torch.float64)
    for axis in (0, -1):
        assert OPS["expand_dims"](x, axis=axis).shape == tuple(t.unsqueeze(axis).shape) == (1,)
    for axis in (1, -2):  # PyTorch's range for a 0-d input is [-1, 0]
        with pytest.raises(IndexError):
            t.unsqueeze(axis)
        with pytest.raises(IndexError, match="expand_dims"):
            OPS["expand_dims"](x, axis=axis)
    assert OPS["transpose"](x, axes=None).shape == tuple(t.permute(()).shape) == ()


def test_tensor_flip_takes_dims_as_varargs_too():
    # t.flip(0, 2) raised a TypeError (PyTorch's method takes *dims)
    x = tg.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.flip(0, 2).numpy(), x.numpy()[::-1, :, ::-1])
    assert tg.equal(x.flip(0, 2), tg.flip(x, (0, 2)))
