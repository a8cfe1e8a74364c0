"""Elementwise ops and comparisons: public wrappers, dtypes, ties, in-place variants, errors.
(Each op's gradients are also checked by the tests generated from the op table.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

UNARY = [
    "abs",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "sqrt",
    "rsqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "relu",
    "erf",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "silu",
    "gelu",
    "elu",
    "leaky_relu",
    "softplus",
]


def _f64(a, requires_grad=False):
    return tg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _torch_fn(torch, name):
    return getattr(torch, name, None) or getattr(torch.nn.functional, name)


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_gradients_match_torch(name, rng):
    torch = pytest.importorskip("torch")
    x = rng.uniform(0.2, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    if name in ("log", "log2", "sqrt", "rsqrt"):
        x = np.abs(x)
    if name == "log1p":
        x = np.abs(x) - 0.15
    ours = _f64(x, requires_grad=True)
    out = getattr(tg, name)(ours)
    theirs = torch.tensor(x, requires_grad=True)
    ref = _torch_fn(torch, name)(theirs)
    np.testing.assert_allclose(out._data, ref.detach().numpy(), rtol=1e-12, atol=1e-14)
    w = rng.standard_normal(x.shape)
    (out * _f64(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad._data, theirs.grad.numpy(), rtol=1e-10, atol=1e-12)
    # the method form is the same function
    method = getattr(ours.detach(), name)
    np.testing.assert_array_equal(method()._data, out._data)


def test_erf_is_accurate_without_scipy():
    x = np.concatenate([np.linspace(-7, 7, 4001), np.logspace(-200, 0.8, 300), [0.75, -0.75, 6.0]])
    ours = tg.erf(_f64(x))._data
    ref = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(ours - ref) / np.maximum(np.abs(ref), 1e-300)) < 1e-14
    special = tg.erf(_f64([np.inf, -np.inf, np.nan, 0.0]))._data
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2]) and special[3] == 0


def test_erf_in_float32_and_float16():
    x = np.linspace(-5, 5, 2001).astype(np.float32)
    ours = tg.erf(tg.tensor(x))
    assert ours.dtype == np.float32
    ref = np.array([math.erf(float(v)) for v in x])
    assert np.max(np.abs(ours._data - ref)) < 2e-7
    assert tg.erf(tg.tensor(x.astype(np.float16))).dtype == np.float16


def test_casts_inside_a_differentiable_backward():
    # create_graph=True runs the engine's dtype casts on tensors: astype must be an op there
    x = tg.tensor([0.5, -1.5], requires_grad=True)
    y = (x.double() ** 3).sum()
    (g,) = tg.autograd.grad(y, [x], create_graph=True)
    assert g.dtype == np.float32 and g.requires_grad
    (gg,) = tg.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg._data, 6 * x._data)


def test_float32_stays_float32_with_python_scalars():
    x = tg.tensor([-1.5, 0.25, 2.0], requires_grad=True)
    outs = [
        tg.clamp(x, -1.0, 1.0),
        tg.leaky_relu(x, 0.2),
        tg.where(x > 0, x, 0.5),
        tg.maximum(x, 0.5),
        tg.minimum(0.5, x),
        tg.gelu(x),
        tg.gelu(x, approximate="tanh"),
        tg.softplus(x, beta=2.0),
        tg.elu(x, alpha=0.5),
        tg.silu(x),
        tg.erf(x),
        x % 0.7,
        tg.round(x, decimals=1),
        tg.rsqrt(tg.abs(x)),
        tg.sigmoid(x),
    ]
    for out in outs:
        assert out.dtype == np.float32
    sum(o.sum() for o in outs).backward()
    assert x.grad.dtype == np.float32


def test_integer_inputs():
    i = tg.tensor([1, 4, 9])
    assert tg.sqrt(i).dtype == np.float32 and tg.exp(i).dtype == np.float32
    np.testing.assert_allclose(tg.sqrt(i)._data, [1, 2, 3])
    assert tg.abs(tg.tensor([-2, 3])).tolist() == [2, 3]
    assert tg.relu(tg.tensor([-2, 3])).dtype == np.int64
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype"):
        tg.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        tg.tensor([1, 2], requires_grad=True)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_step_functions_have_zero_gradient(name):
    x = tg.tensor([-1.7, -0.2, 0.4, 2.5], requires_grad=True)
    y = getattr(tg, name)(x)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_round_half_to_even_and_decimals():
    assert tg.round(tg.tensor([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    np.testing.assert_allclose(tg.round(_f64([1.234, -5.678]), decimals=2)._data, [1.23, -5.68])


def test_maximum_minimum_ties_share_the_gradient():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = tg.tensor([1.0, 5.0, 0.0], requires_grad=True)
    tg.maximum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 0.0, 1.0] and y.grad.tolist() == [0.5, 1.0, 0.0]
    x.grad = y.grad = None
    tg.minimum(x, y).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0, 0.0] and y.grad.tolist() == [0.5, 0.0, 1.0]


def test_maximum_with_a_scalar_and_broadcasting():
    x = _f64(np.arange(6.0).reshape(2, 3) - 2, requires_grad=True)
    y = _f64([[0.5], [1.0]], requires_grad=True)
    assert gradcheck(lambda a, b: tg.maximum(a, b), (x, y))
    out = tg.maximum(x, 0.0)
    out.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.5], [1.0, 1.0, 1.0]]


def test_clamp_bounds_are_inclusive_and_tensor_bounds_get_gradients():
    x = tg.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], requires_grad=True)
    tg.clamp(x, -1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]  # PyTorch: min <= x <= max passes
    x = _f64([-2.0, 0.3, 2.0], requires_grad=True)
    lo = _f64([-1.0, -1.0, -1.0], requires_grad=True)
    hi = _f64([1.0], requires_grad=True)
    tg.clamp(x, min=lo, max=hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0] and hi.grad.tolist() == [1.0]
    assert tg.clip(_f64([5.0]), max=2.0).tolist() == [2.0]
    assert tg.tensor([-3.0, 3.0]).clamp(min=0).tolist() == [0.0, 3.0]


def test_clamp_without_bounds_raises():
    with pytest.raises(RuntimeError, match="at least one of 'min' or 'max'"):
        tg.clamp(tg.tensor([1.0]))
    with pytest.raises(RuntimeError, match="at least one of 'min' or 'max'"):
        tg.tensor([1.0]).clamp_()


def test_where_scalars_broadcasting_and_gradients():
    cond = tg.tensor([[True], [False]])
    x = _f64([1.0, 2.0, 3.0], requires_grad=True)
    y = _f64([[10.0], [20.0]], requires_grad=True)
    out = tg.where(cond, x, y)
    assert out.tolist() == [[1.0, 2.0, 3.0], [20.0, 20.0, 20.0]]
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0] and y.grad.tolist() == [[0.0], [3.0]]
    both = tg.where(tg.tensor([True, False]), 1.0, 0.0)
    assert both.dtype == np.float32 and both.tolist() == [1.0, 0.0]
    assert x.detach().where(tg.tensor([True, False, True]), -1.0).tolist() == [1.0, -1.0, 3.0]


def test_gelu_softplus_options_match_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(20) * 4
    for kwargs in ({}, {"approximate": "tanh"}):
        ours = _f64(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        (g1,) = tg.autograd.grad(tg.gelu(ours, **kwargs).sum(), [ours], create_graph=True)
        (t1,) = torch.autograd.grad(
            torch.nn.functional.gelu(theirs, **kwargs).sum(), [theirs], create_graph=True
        )
        np.testing.assert_allclose(g1._data, t1.detach().numpy(), rtol=1e-10, atol=1e-12)
        (g2,) = tg.autograd.grad(g1.sum(), [ours])
        (t2,) = torch.autograd.grad(t1.sum(), [theirs])
        np.testing.assert_allclose(g2._data, t2.numpy(), rtol=1e-9, atol=1e-11)
    big = _f64([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    np.testing.assert_allclose(
        tg.softplus(big, beta=0.5, threshold=5)._data,
        torch.nn.functional.softplus(torch.tensor(big._data), beta=0.5, threshold=5).numpy(),
    )
    np.testing.assert_allclose(
        tg.sigmoid(big)._data, torch.sigmoid(torch.tensor(big._data)).numpy()
    )
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        tg.gelu(big, approximate="fast")


def test_second_order_through_activations():
    x = _f64([-1.3, -0.2, 0.4, 1.7], requires_grad=True)
    for fn in (
        tg.silu,
        tg.elu,
        tg.softplus,
        tg.tanh,
        tg.sigmoid,
        tg.erf,
        lambda t: tg.gelu(t, approximate="tanh"),
        lambda t: tg.clamp(t, -1, 1) * t,
    ):
        assert gradgradcheck(fn, (x,))


# ------------------------------------------------------------------ in-place variants
@pytest.mark.parametrize(
    "name",
    [
        "abs",
        "exp",
        "log",
        "sqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "relu",
        "floor",
        "ceil",
        "round",
        "neg",
        "reciprocal",
        "square",
        "trunc",
    ],
)
def test_inplace_matches_out_of_place_and_bumps_the_version(name):
    base = np.array([0.3, 1.7, 2.2])
    t = tg.tensor(base)
    version = t._version
    assert getattr(t, name + "_")() is t
    assert t._version == version + 1
    np.testing.assert_allclose(t._data, getattr(tg, name)(tg.tensor(base))._data)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.exp_(),
        lambda t: t.relu_(),
        lambda t: t.zero_(),
        lambda t: t.fill_(1.0),
        lambda t: t.clamp_(0, 1),
        lambda t: t.copy_(tg.tensor([1.0, 2.0])),
    ],
)
def test_inplace_on_a_leaf_that_requires_grad_raises(call):
    w = tg.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        call(w)
    assert w.tolist() == [1.0, -1.0]  # nothing half-done
    with tg.no_grad():
        call(w)  # allowed without recording


def test_inplace_on_a_non_leaf_is_recorded():
    x = _f64([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 2
    y.clamp_(-1.5, 1.5)
    y.sin_()
    y.sigmoid_()  # saves its output: nothing may change y in place after this
    y.sum().backward()
    c = np.clip(2 * x._data, -1.5, 1.5)
    s = 1 / (1 + np.exp(-np.sin(c)))
    expected = s * (1 - s) * np.cos(c) * 2 * (np.abs(2 * x._data) <= 1.5)
    np.testing.assert_allclose(x.grad._data, expected)
    assert y.grad_fn.name() == "SigmoidBackward"


def test_changing_a_saved_output_in_place_is_detected():
    x = tg.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()  # exp saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_fill_zero_and_copy():
    t = tg.zeros(2, 3)
    t.fill_(2.5)
    assert t.tolist() == [[2.5] * 3] * 2 and t._version == 1
    t.zero_()
    assert t.tolist() == [[0.0] * 3] * 2 and t._version == 2
    v = tg.tensor(3.0, requires_grad=True)
    u = tg.ones(2, 2) * 1
    u.fill_(v)
    (u * tg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert v.grad.item() == 10.0
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        tg.zeros(2).fill_(tg.ones(2))
    dst = tg.zeros(2, 3, dtype="float64")
    src = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    dst.copy_(src)
    assert dst.dtype == np.float64 and dst.tolist() == [[1.0, 2.0, 3.0]] * 2
    (dst * dst).sum().backward()
    assert src.grad.dtype == np.float32 and src.grad.tolist() == [4.0, 8.0, 12.0]
    with pytest.raises(RuntimeError, match=r"source of shape \(4,\) can't be broadcast.*\(2, 3\)"):
        dst.copy_(tg.ones(4))
    ints = tg.zeros(2, dtype="int64").copy_(tg.tensor([1.7, -2.2]))
    assert ints.tolist() == [1, -2]


def test_inplace_on_an_integer_tensor_that_needs_a_float_raises():
    with pytest.raises(RuntimeError, match="can't be cast to the tensor's dtype int64"):
        tg.tensor([1, 2]).exp_()


# ------------------------------------------------------------------ copies and casts
def test_clone_and_casts():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c._data is not x._data and c.grad_fn is not None
    assert x.float() is x and x.double().dtype == np.float64 and x.half().dtype == np.float16
    d = x.double()
    (d * d).sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [2.0, 4.0]
    assert not x.long().requires_grad and x.long().dtype == np.int64
    assert x.int().dtype == np.int32 and x.bool().dtype == np.bool_
    assert x.astype("float64").dtype == np.float64 and x.type() == "tapegrad.FloatTensor"
    assert x.type(tg.float64).dtype == np.float64
    assert gradcheck(
        lambda t: t.astype("float32").astype("float64") * t,
        (_f64([1.0], True),),
        eps=1e-3,
        atol=1e-4,
    )


# ------------------------------------------------------------------ comparisons
def test_comparison_operators_give_bool_tensors_never_tracked():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for out, expected in [
        (x < 2, [True, False, False]),
        (x <= 2, [True, True, False]),
        (x > 2, [False, False, True]),
        (x >= 2, [False, True, True]),
        (x == 2, [False, True, False]),
        (x != 2, [True, False, True]),
        (2 < x, [False, False, True]),  # noqa: SIM300 (reflected)
        (2.0 == x, [False, True, False]),  # noqa: SIM300
        (np.float64(2.0) > x, [True, False, False]),
    ]:
        assert out.dtype == np.bool_ and out.tolist() == expected and not out.requires_grad
    assert tg.eq(x, x).all().item() and tg.ne(x, 1.0).tolist() == [False, True, True]
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert {x: 1}[x] == 1  # hashable by identity
    assert tg.gt(x, tg.tensor([0.0])).tolist() == [True, True, True]


def test_logical_bitwise_and_special_values():
    a = tg.tensor([True, False, True])
    b = tg.tensor([True, True, False])
    assert (a & b).tolist() == [True, False, False] and (a | b).tolist() == [True, True, True]
    assert (a ^ b).tolist() == [False, True, True] and (~a).tolist() == [False, True, False]
    assert (True & a).tolist() == [True, False, True]
    assert (tg.tensor([6]) & 3).tolist() == [2]
    assert tg.logical_and(tg.tensor([1.0, 0.0]), tg.tensor([2.0, 2.0])).tolist() == [True, False]
    assert tg.logical_or(a, b).tolist() == [True, True, True]
    assert tg.logical_xor(a, b).tolist() == [False, True, True]
    assert tg.logical_not(tg.tensor([0.0, 1.5])).tolist() == [True, False]
    with pytest.raises(TypeError, match="only defined for bool and integer tensors, got float32"):
        _ = tg.tensor([1.0]) | tg.tensor([0.0])
    with pytest.raises(TypeError, match="'~' is only defined"):
        _ = ~tg.tensor([1.0])
    v = tg.tensor([1.0, np.inf, -np.inf, np.nan])
    assert tg.isnan(v).tolist() == [False, False, False, True]
    assert tg.isinf(v).tolist() == [False, True, True, False]
    assert v.isfinite().tolist() == [True, False, False, False]


def test_close_and_equal():
    a = tg.tensor([1.0, 2.0])
    assert tg.allclose(a, a + 1e-7) and not tg.allclose(a, a + 1e-3)
    assert tg.isclose(a, tg.tensor([1.0, 2.1])).tolist() == [True, False]
    assert tg.allclose(tg.tensor([np.nan]), tg.tensor([np.nan]), equal_nan=True)
    assert tg.equal(a, tg.tensor([1.0, 2.0])) and not tg.equal(a, tg.tensor([1.0]))
    assert not tg.equal(a, tg.tensor([1.0, 3.0]))


def test_floor_divide_and_remainder_follow_python():
    x = tg.tensor([5.0, -5.0, 5.0, -5.0])
    y = tg.tensor([3.0, 3.0, -3.0, -3.0])
    assert (x // y).tolist() == [5.0 // 3, -5.0 // 3, 5.0 // -3, -5.0 // -3]
    assert (x % y).tolist() == [5.0 % 3, -5.0 % 3, 5.0 % -3, -5.0 % -3]
    assert (7 % tg.tensor([3])).tolist() == [1] and (7 // tg.tensor([2])).tolist() == [3]
    assert (x // 2).tolist() == [2.0, -3.0, 2.0, -3.0]
    assert not (tg.tensor([3.0], requires_grad=True) // 2).requires_grad
    assert tg.fmod(tg.tensor([-5.0]), 3.0).tolist() == [-2.0]


def test_remainder_gradients():
    x = _f64([5.2, -4.1, 2.5], requires_grad=True)
    y = _f64([3.0, 2.0, -1.5], requires_grad=True)
    (x % y).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist() == [-1.0, 3.0, 2.0]  # -floor(x / y)


def test_fmod_keeps_int_dtype_and_its_gradient_ignores_a_zero_divisor():
    # fmod was x - trunc(x / y) * y: float32 for int inputs, NaN gradients wherever y == 0
    # (PyTorch: d/dx = 1 there) and the low digits lost for large |x / y|
    ints = tg.fmod(tg.tensor([5, -7, 7]), tg.tensor([3, 3, -3]))
    assert ints.dtype == tg.int64 and ints.tolist() == [2, -1, 1]
    with pytest.raises(RuntimeError, match="fmod: integer division by zero"):
        tg.fmod(tg.tensor([5]), tg.tensor([0]))
    x = _f64([1.5, -2.5, 3.0], requires_grad=True)
    y = _f64([0.0, 2.0, -2.0], requires_grad=True)
    out = tg.fmod(x, y)
    assert np.isnan(out.tolist()[0]) and out.tolist()[1:] == [-0.5, 1.0]
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]
    assert y.grad.tolist()[1:] == [1.0, 1.0]  # -trunc(x / y)
    assert tg.fmod(_f64([1e17 + 2.0]), 3.0).tolist() == [math.fmod(1e17 + 2.0, 3.0)]


def test_pow_exponent_gradient_at_a_zero_base_and_for_an_int_base():
    # d/dy 0 ** y is 0 for y >= 0 and inf * log(0) = -inf for y < 0 (PyTorch's values; it was
    # NaN), for a tensor, bool or Python-number base
    for base in (0, tg.tensor([False, False, True]), _f64([0.0, 0.0, 0.0])):
        y = _f64([-1.0, 0.0, 2.0], requires_grad=True)
        (base**y).sum().backward()
        assert y.grad.tolist()[0] == -math.inf and y.grad.tolist()[1:] == [0.0, 0.0]
    # an int base's log was NumPy's float16 (3 digits) for uint8
    y = _f64([-1.0, 0.5, 2.0], requires_grad=True)
    base = np.array([3, 200, 7], np.uint8)
    (tg.tensor(base) ** y).sum().backward()
    want = base.astype(np.float64) ** y.detach().numpy() * np.log(base.astype(np.float64))
    np.testing.assert_allclose(y.grad.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_integer_division_with_a_rounding_mode_stays_integer(mode):
    # it divided as floats and gave float32 (PyTorch: int64, exact)
    a, b = [7, -7, 7, -7, 0, 2**40 + 1], [2, 2, -2, -2, 3, 3]
    got = tg.div(tg.tensor(a), tg.tensor(b), rounding_mode=mode)
    want = [x // y if mode == "floor" else int(x / y) for x, y in zip(a, b)]
    want[-1] = (2**40 + 1) // 3  # int(x / y) rounds through a float
    assert got.dtype == tg.int64 and got.tolist() == want
    assert tg.tensor(a).div(-2, rounding_mode=mode).dtype == tg.int64
    with pytest.raises(RuntimeError, match="integer division by zero"):
        tg.div(tg.tensor([1]), 0, rounding_mode=mode)
