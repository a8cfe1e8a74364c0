"""forward_ad: dual tensors, PyTorch semantics, written rules vs derived ones, and
forward-over-reverse."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import forward_ad as fwAD
from tapegrad.ops import OPS

# the ops whose jvp rule is written beside their vjp (`@<op>.jvp` in ops/); the rest derive it
WRITTEN = tuple(sorted(n for n, op in OPS.items() if op.jvp_rule is not None))
_HOT = (
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "exp",
    "log",
    "sin",
    "cos",
    "square",
    "sqrt",
    "tanh",
    "sigmoid",
    "relu",
    "matmul",
    "sum",
    "mean",
    "reshape",
    "transpose",
    "getitem",
    "swapaxes",
    "expand_dims",
    "squeeze",
    "broadcast_to",
)


def _t(x, **kw):
    return tg.tensor(np.asarray(x, dtype=np.float64), **kw)


def test_make_dual_unpack_dual_and_level_exit():
    x = _t([1.0, 2.0])
    v = _t([1.0, -1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        assert not d.requires_grad and np.shares_memory(d._data, x._data)
        y = (d * d).exp()
        p, t = fwAD.unpack_dual(y)
        np.testing.assert_allclose(p.numpy(), np.exp(x.numpy() ** 2))
        np.testing.assert_allclose(t.numpy(), np.exp(x.numpy() ** 2) * 2 * x.numpy() * v.numpy())
        assert fwAD.unpack_dual(d).tangent is v  # stored as it is
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None  # comparisons have no tangent
        assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
    assert fwAD.unpack_dual(y).tangent is None  # forgotten on exit
    assert not y.requires_grad
    z = y * 2  # outside the level the stale bit changes nothing
    assert fwAD.unpack_dual(z).tangent is None and z.grad_fn is None


def test_errors_follow_pytorch():
    x = _t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no forward AD level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, _t([1.0]))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(tg.tensor([1, 2]), x)
        d = fwAD.make_dual(x, x)
        with pytest.raises(RuntimeError, match="already has a forward gradient"):
            fwAD.make_dual(d, x)
        with pytest.raises(RuntimeError, match="Nested forward mode AD"), fwAD.dual_level():
            pass
        with pytest.raises(NotImplementedError, match="view of a dual tensor"):
            d[0:1].mul_(2.0)


def test_forward_ad_goes_on_under_no_grad_and_through_in_place_ops():
    x = _t([1.0, 2.0, 3.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), _t([1.0, 1.0, 1.0]))
        with tg.no_grad():
            y = d * 2.0
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [2.0, 2.0, 2.0])
        y.mul_(3.0)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), [6.0, 6.0, 6.0])
        d.mul_(d)  # a dual leaf changed in place
        np.testing.assert_allclose(fwAD.unpack_dual(d).tangent.numpy(), 2 * x.numpy())
        z = tg.zeros(3, dtype=tg.float64)
        z[1:] = y[1:] * 1.0  # writing a dual into a plain tensor makes it dual
        np.testing.assert_allclose(fwAD.unpack_dual(z).tangent.numpy(), [0.0, 6.0, 6.0])


def test_forward_over_reverse_hessian_vector_product():
    w = _t([0.5, -1.0, 2.0], requires_grad=True)
    v = _t([1.0, 0.5, -2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(w, v)
        loss = (d.tanh() * d).sum()
        (g,) = tg.autograd.grad(loss, w)
        hvp = fwAD.unpack_dual(g).tangent
    x = w.detach().numpy()
    th = np.tanh(x)
    s = 1 - th**2  # d2/dx2 of x tanh x = 2 sech^2 - 2 x tanh sech^2
    np.testing.assert_allclose(
        hvp.detach().numpy(), (2 * s - 2 * x * th * s) * v.numpy(), rtol=1e-10
    )
    np.testing.assert_allclose(fwAD.unpack_dual(g).primal.detach().numpy(), th + x * s)


def test_reverse_over_forward_gradient_of_a_tangent():
    w = _t([0.3, 1.2], requires_grad=True)
    v = _t([1.0, 2.0])
    with fwAD.dual_level():
        t = fwAD.unpack_dual(fwAD.make_dual(w, v).sin().sum()).tangent  # sum(cos(w) v)
    (g,) = tg.autograd.grad(t, w)
    np.testing.assert_allclose(g.numpy(), -np.sin(w.detach().numpy()) * v.numpy())


def _samples(name):
    return OPS[name].samples(np.random.default_rng(0))


def test_the_hot_ops_carry_written_jvp_rules():
    missing = [n for n in _HOT if n not in WRITTEN]
    assert not missing, f"no written jvp rule for {missing}"


WRITTEN_CASES = [
    pytest.param(n, i, id=f"{n}-{i}") for n in WRITTEN for i in range(len(_samples(n)))
]


@pytest.mark.parametrize("composing", [False, True], ids=["arrays", "tensors"])
@pytest.mark.parametrize("name,index", WRITTEN_CASES)
def test_written_rule_agrees_with_the_derived_one(name, index, composing):
    op = OPS[name]
    args, params = _samples(name)[index]
    rng = np.random.default_rng(5)
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    tangents = {i: rng.standard_normal(args[i].shape) for i in floats}

    def tangent_out():
        with fwAD.dual_level():
            inputs = [
                fwAD.make_dual(_t(a, requires_grad=composing), _t(tangents[i]))
                if i in tangents
                else (tg.tensor(a) if isinstance(a, np.ndarray) else a)
                for i, a in enumerate(args)
            ]
            return fwAD.unpack_dual(op(*inputs, **params)).tangent.detach().numpy().copy()

    written = tangent_out()
    rule, op.jvp_rule = op.jvp_rule, None
    try:
        derived = tangent_out()
    finally:
        op.jvp_rule = rule
    np.testing.assert_allclose(written, derived, rtol=1e-12, atol=1e-12)


def test_custom_function_under_forward_ad_raises_clearly():
    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwAD.dual_level():
        d = fwAD.make_dual(_t([1.0]), _t([1.0]))
        # as PyTorch: at apply, naming the Function (tests/autograd/test_function_jvp.py)
        with pytest.raises(NotImplementedError, match="Double: You must implement the jvp"):
            Double.apply(d)
        assert Double.apply(_t([1.0])).tolist() == [2.0]  # no tangent: no jvp needed


def test_no_dual_level_costs_nothing_on_the_eager_path():
    x = _t([1.0], requires_grad=True)
    y = x * 2
    assert y.grad_fn is not None and y._tapes == 1  # no FORWARD bit outside a level
