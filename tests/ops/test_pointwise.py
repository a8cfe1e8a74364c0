"""The pointwise math of ops/pointwise.py beyond the generated op-table tests: special
points (zeros, infinities, NaN) against PyTorch's values and gradients, dtype promotion,
in-place variants, the facade, errors, and that no NumPy warning leaks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compat import torch as ttorch

INF, NAN = math.inf, math.nan

BINARY = ["atan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "copysign"]
UNARY = ["log10", "deg2rad", "rad2deg", "frac", "erfinv", "sinc", "nan_to_num", "logit"]
NEW_NAMES = [*BINARY, *UNARY, "arctan2", "addcmul", "addcdiv", "heaviside", "float_power"]

# pairs of special points: zeros of both signs, infinities, NaN, ordinary values
_SPECIAL = [0.0, -0.0, 1.0, -2.5, INF, -INF, NAN, 1e-300, 0.5]
_XS = np.array([a for a in _SPECIAL for _ in _SPECIAL])
_YS = np.array([b for _ in _SPECIAL for b in _SPECIAL])


def _grads_ours(name, *arrays, **kw):
    ins = [tg.tensor(a, requires_grad=True) for a in arrays]
    out = getattr(tg, name)(*ins, **kw)
    out.backward(tg.ones_like(out))
    return out.detach().numpy(), [t.grad.numpy() for t in ins]


def _grads_torch(torch, name, *arrays, **kw):
    ins = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = getattr(torch, name)(*ins, **kw)
    out.backward(torch.ones_like(out))
    return out.detach().numpy(), [
        np.zeros_like(a) if t.grad is None else t.grad.numpy() for a, t in zip(arrays, ins)
    ]


def _assert_same(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", BINARY)
def test_binary_special_points_match_torch(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning may leak
        out, grads = _grads_ours(name, _XS, _YS)
    ref, ref_grads = _grads_torch(torch, name, _XS, _YS)
    _assert_same(out, ref)
    np.testing.assert_array_equal(np.signbit(out[out == 0]), np.signbit(ref[ref == 0]))
    for g, r in zip(grads, ref_grads):
        _assert_same(g, r)


@pytest.mark.parametrize("name", ["log10", "deg2rad", "rad2deg", "frac", "sinc", "nan_to_num"])
def test_unary_special_points_match_torch(name):
    torch = pytest.importorskip("torch")
    x = np.array(_SPECIAL + [-0.3, 3.0, 1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, (g,) = _grads_ours(name, x)
    ref, (rg,) = _grads_torch(torch, name, x)
    _assert_same(out, ref)
    # sinc's slope at 1e-300 is -3.3e-300 (PyTorch's formula underflows to -0.0)
    np.testing.assert_allclose(g, rg, rtol=1e-12, atol=1e-290, equal_nan=True)


@pytest.mark.parametrize("eps", [None, 0.1, 0.0])
def test_logit_matches_torch_inside_outside_and_at_the_clamp(eps):
    torch = pytest.importorskip("torch")
    x = np.array([0.0, 1.0, 0.5, 0.05, 0.1, 0.9, 0.95, -0.5, 1.5, NAN, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, (g,) = _grads_ours("logit", x, eps=eps)
    ref, (rg,) = _grads_torch(torch, "logit", x, eps=eps)
    _assert_same(out, ref)
    _assert_same(g, rg)


def test_erfinv_matches_torch_across_the_domain():
    torch = pytest.importorskip("torch")
    y = np.concatenate(
        [
            np.linspace(-0.999999, 0.999999, 2001),
            [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, NAN, 1e-12, 0.9999999999, -0.99999999],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, (g,) = _grads_ours("erfinv", y)
    ref, (rg,) = _grads_torch(torch, "erfinv", y)
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-15, equal_nan=True)
    np.testing.assert_allclose(g, rg, rtol=1e-11, equal_nan=True)
    f32 = tg.erfinv(tg.tensor(y[:2001], dtype=tg.float32))
    assert f32.dtype == tg.float32
    np.testing.assert_allclose(
        f32.numpy(), torch.erfinv(torch.tensor(y[:2001], dtype=torch.float32)).numpy(), rtol=2e-6
    )


def test_exact_values_at_the_named_points():
    z = tg.tensor(0.0)
    assert tg.atan2(z, z).item() == 0.0
    assert tg.xlogy(z, z).item() == 0.0
    assert math.isnan(tg.xlogy(z, tg.tensor(NAN)).item())
    assert tg.logaddexp(tg.tensor(-INF), tg.tensor(-INF)).item() == -INF
    assert tg.logaddexp2(tg.tensor(-INF), tg.tensor(-INF)).item() == -INF
    assert tg.sinc(z).item() == 1.0
    assert tg.erfinv(tg.tensor(1.0)).item() == INF
    assert tg.hypot(tg.tensor(3.0), tg.tensor(4.0)).item() == 5.0
    assert tg.rad2deg(tg.tensor(math.pi)).item() == pytest.approx(180.0, rel=1e-7)
    np.testing.assert_array_equal(
        tg.nan_to_num(tg.tensor([NAN, INF, -INF]), nan=1.0, posinf=2.0, neginf=-3.0).numpy(),
        [1.0, 2.0, -3.0],
    )
    f32max = float(np.finfo(np.float32).max)
    np.testing.assert_array_equal(tg.nan_to_num(tg.tensor([INF, -INF])).numpy(), [f32max, -f32max])


def test_gradients_at_the_named_points():
    """atan2 and hypot at (0, 0), xlogy at x == 0, logaddexp at (-inf, -inf): as PyTorch
    (torch 2.13 gives NaN for logaddexp there: its rule is 1 / (1 + exp(y - x)))."""
    _, g = _grads_ours("atan2", np.array([0.0]), np.array([0.0]))
    assert [v.item() for v in g] == [0.0, 0.0]
    _, g = _grads_ours("hypot", np.array([0.0]), np.array([0.0]))
    assert all(math.isnan(v.item()) for v in g)
    _, (gx, gy) = _grads_ours("xlogy", np.array([0.0, 0.0]), np.array([0.0, 2.0]))
    assert gx.tolist() == [0.0, math.log(2.0)]
    assert math.isnan(gy[0]) and gy[1] == 0.0
    _, g = _grads_ours("logaddexp", np.array([-INF]), np.array([-INF]))
    assert all(math.isnan(v.item()) for v in g)
    _, g = _grads_ours("logaddexp", np.array([INF]), np.array([0.0]))
    assert [v.item() for v in g] == [1.0, 0.0]
    _, (g,) = _grads_ours("nan_to_num", np.array([NAN, INF, -INF, 2.0]))
    assert g.tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("name", BINARY)
def test_binary_dtype_promotion_and_broadcasting(name):
    i = tg.tensor([[1, 2, 3]])
    f32 = tg.tensor([[0.5], [2.0]], dtype=tg.float32)
    f64 = tg.tensor([0.5, 1.5, 2.5], dtype=tg.float64)
    fn = getattr(tg, name)
    assert fn(i, i).dtype == tg.float32  # integers: the default float dtype
    assert fn(i, f32).dtype == tg.float32
    assert fn(f32, 2.0).dtype == tg.float32  # a Python number does not promote
    assert fn(f32, f64).shape == (2, 3)
    assert fn(f32, f64).dtype == tg.float64
    assert fn(tg.tensor([True, False]), tg.tensor([True, True])).dtype == tg.float32


def test_binary_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (np.array([1, 2]), np.array([3, 4])),
        (np.array([1, 2]), np.array([0.5, 1.5], dtype=np.float32)),
        (np.array([0.5, 1.5], dtype=np.float32), np.array([0.5, 1.5], dtype=np.float64)),
    ]
    for name in BINARY:
        for a, b in cases:
            ours = getattr(tg, name)(tg.tensor(a), tg.tensor(b))
            try:
                ref = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
            except NotImplementedError:  # no integer hypot/logaddexp in PyTorch: ours is float
                assert ours.dtype == tg.float32
                continue
            assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1], (name, a, b)
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["log10", "deg2rad", "rad2deg", "erfinv", "sinc", "logit"])
def test_unary_integers_give_the_default_float(name):
    out = getattr(tg, name)(tg.tensor([0, 1]))
    assert out.dtype == tg.float32


def test_nan_to_num_keeps_integers_and_frac_refuses_them():
    i = tg.tensor([1, -2])
    out = tg.nan_to_num(i)
    assert out.dtype == i.dtype and out.tolist() == [1, -2]
    with pytest.raises(RuntimeError, match="frac"):
        tg.frac(i)
    with pytest.raises(RuntimeError, match="frac_"):
        i.frac_()


def test_addcmul_addcdiv_values_gradients_and_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,)), rng.uniform(1, 2, (3, 1))
    for name in ("addcmul", "addcdiv"):
        ours = [tg.tensor(v, requires_grad=True) for v in (x, a, b)]
        theirs = [torch.tensor(v, requires_grad=True) for v in (x, a, b)]
        out = getattr(tg, name)(*ours, value=-0.5)
        ref = getattr(torch, name)(*theirs, value=-0.5)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
        out.sum().backward()
        ref.sum().backward()
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    expected = x + 2.0 * a * b
    np.testing.assert_allclose(
        tg.tensor(x).addcmul(tg.tensor(a), tg.tensor(b), value=2).numpy(), expected
    )


def test_addcmul_addcdiv_errors_name_the_function():
    t = tg.ones(3)
    with pytest.raises(TypeError, match="addcmul: value"):
        tg.addcmul(t, t, t, value=tg.tensor(2.0))
    with pytest.raises(TypeError, match="addcdiv: tensor2"):
        tg.addcdiv(t, t, 2.0)
    with pytest.raises(RuntimeError, match="addcdiv: integer division"):
        tg.addcdiv(t, tg.tensor([1, 2, 3]), tg.tensor([1, 2, 3]))
    with pytest.raises(TypeError, match="addcmul"):
        tg.addcmul(t, t, t, 2)  # value is keyword-only, as in PyTorch


def test_heaviside_values_and_no_derivative():
    x = tg.tensor([-1.5, 0.0, 2.0, 0.0], requires_grad=True)
    out = tg.heaviside(x, tg.tensor([0.25]))
    assert out.tolist() == [0.0, 0.25, 1.0, 0.25]
    assert out.requires_grad  # recorded, as PyTorch
    with pytest.raises(RuntimeError, match="heaviside: the derivative is not implemented"):
        out.sum().backward()
    with pytest.raises(RuntimeError, match="heaviside: input and values must have the same"):
        tg.heaviside(x, tg.tensor([1]))
    assert tg.heaviside(tg.tensor([-1, 0, 2]), tg.tensor([5])).tolist() == [0, 5, 1]


def test_float_power_is_float64_and_its_gradient_has_the_input_dtype():
    torch = pytest.importorskip("torch")
    x = tg.tensor([1.5, 2.0], dtype=tg.float32, requires_grad=True)
    out = tg.float_power(x, 3)
    assert out.dtype == tg.float64
    out.sum().backward()
    assert x.grad.dtype == tg.float32
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([1.5, 2.0]) ** 2, rtol=1e-6)
    e = tg.tensor([2, 3])
    ref = torch.float_power(torch.tensor([2, 3]), torch.tensor([2, 3]))
    np.testing.assert_array_equal(tg.float_power(e, e).numpy(), ref.numpy())
    assert tg.float_power(2, tg.tensor([1.0, 3.0], dtype=tg.float32)).tolist() == [2.0, 8.0]
    assert x.float_power(2).dtype == tg.float64
    with pytest.raises(TypeError, match="float_power"):
        tg.float_power(x, "2")


def test_argument_errors_name_the_function():
    t = tg.ones(2)
    with pytest.raises(TypeError, match="nan_to_num: posinf"):
        tg.nan_to_num(t, posinf="big")
    with pytest.raises(TypeError, match="logit: eps"):
        tg.logit(t, eps="0.1")
    with pytest.raises(TypeError, match="heaviside: input"):
        tg.heaviside(1.0, t)
    with pytest.raises(ValueError, match="atan2"):
        tg.atan2(tg.ones(2), tg.ones(3))  # shapes that don't broadcast
    with pytest.raises(TypeError, match="hypot"):
        tg.hypot(1.0, 2.0)


@pytest.mark.parametrize("name", NEW_NAMES)
def test_available_as_function_method_and_through_the_torch_facade(name):
    assert getattr(ttorch, name) is getattr(tg, name)
    assert hasattr(tg.Tensor, name)


INPLACE = [
    ("atan2_", "atan2", (0.7,), {}),
    ("arctan2_", "atan2", (0.7,), {}),
    ("hypot_", "hypot", (0.7,), {}),
    ("copysign_", "copysign", (-1.0,), {}),
    ("frac_", "frac", (), {}),
    ("nan_to_num_", "nan_to_num", (), {"nan": 2.0}),
    ("logit_", "logit", (), {"eps": 0.2}),
    ("log10_", "log10", (), {}),
    ("xlogy_", "xlogy", (3.0,), {}),
    ("deg2rad_", "deg2rad", (), {}),
    ("rad2deg_", "rad2deg", (), {}),
    ("sinc_", "sinc", (), {}),
    ("erfinv_", "erfinv", (), {}),
]


@pytest.mark.parametrize("method,name,args,kw", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants_match_out_of_place_and_record(method, name, args, kw):
    rng = np.random.default_rng(3)
    x0 = rng.uniform(0.1, 0.9, (2, 3))
    # values
    t = tg.tensor(x0)
    v = t._version
    assert getattr(t, method)(*args, **kw) is t
    assert t._version > v
    np.testing.assert_allclose(t.numpy(), getattr(tg, name)(tg.tensor(x0), *args, **kw).numpy())
    # gradient through the in-place op on a non-leaf equals the out-of-place one
    a = tg.tensor(x0, requires_grad=True)
    getattr(a * 1.0, method)(*args, **kw).sum().backward()
    b = tg.tensor(x0, requires_grad=True)
    getattr(tg, name)(b * 1.0, *args, **kw).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    # a leaf that requires grad is refused while recording
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(tg.tensor(x0, requires_grad=True), method)(*args, **kw)


def test_addcmul_addcdiv_in_place_as_optimizers_use_them():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    m, g, d = rng.standard_normal(5), rng.standard_normal(5), rng.uniform(1, 2, 5)
    ours = tg.tensor(m)
    ours.addcmul_(tg.tensor(g), tg.tensor(g), value=0.1).addcdiv_(
        tg.tensor(g), tg.tensor(d), value=-0.01
    )
    ref = torch.tensor(m)
    ref.addcmul_(torch.tensor(g), torch.tensor(g), value=0.1).addcdiv_(
        torch.tensor(g), torch.tensor(d), value=-0.01
    )
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)
    with pytest.raises(TypeError, match="addcmul_: value"):
        ours.addcmul_(ours, ours, value=None)


def test_inplace_into_an_integer_tensor_is_refused():
    with pytest.raises(RuntimeError, match="atan2_"):
        tg.tensor([1, 2]).atan2_(tg.tensor([1.0, 2.0]))


def test_no_warnings_on_extreme_inputs():
    big = tg.tensor(np.array([1e308, -1e308, 0.0, -0.0, INF, -INF, NAN]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in BINARY:
            getattr(tg, name)(big, big)
        for name in UNARY:
            getattr(tg, name)(big)
        tg.addcdiv(big, big, big, value=2.0)
        tg.addcmul(big, big, big)
        tg.float_power(big, 2.5)


def test_heaviside_and_float_power_in_place():
    t = tg.tensor([-1.0, 0.0, 3.0])
    assert t.heaviside_(tg.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]
    d = tg.tensor(np.array([2.0, 3.0]))
    assert d.float_power_(2).tolist() == [4.0, 9.0]
    with pytest.raises(RuntimeError, match="float_power_: the base has dtype"):
        tg.tensor([2.0]).float_power_(2)
    with pytest.raises(RuntimeError, match="heaviside_: input and values"):
        t.heaviside_(tg.tensor([1]))
