"""The one registration API, `defop`: its options, its decorators, and the array twins it
puts on the rule namespaces (checked against the ops themselves, over the op table)."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import OPS, NumpyStyleOp, Op, defop, dispatch, xp
from tapegrad.ops.xp import T, array_ns


@pytest.fixture
def scratch():
    """Ops registered by a test are taken out of the table (and the namespaces) after it."""
    before, twins = set(OPS), set(xp._twins)
    yield
    for name in set(OPS) - before:
        del OPS[name]
    for name in set(xp._twins) - twins:
        del xp._twins[name]
        for ns in xp._array_namespaces.values():
            delattr(ns, name)


def test_a_plain_op_records_and_its_rule_runs(scratch):
    @defop(saves="x")
    def _test_cube(xp, x):
        return x * x * x

    @_test_cube.vjp
    def _(xp, g, x):
        return (g * 3.0 * x * x,)

    assert type(_test_cube) is Op and OPS["test_cube"] is _test_cube
    assert _test_cube.backward_name == "TestCubeBackward"
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    _test_cube(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_registering_a_name_twice_is_refused(scratch):
    defop(name="test_twice")(lambda xp, x: x)
    with pytest.raises(RuntimeError, match="'test_twice' is registered twice"):
        defop(name="test_twice")(lambda xp, x: x)


def test_jvp_rule_is_stored_and_none_by_default(scratch):
    @defop()
    def _test_double(xp, x):
        return 2.0 * x

    assert _test_double.jvp_rule is None

    @_test_double.jvp
    def rule(xp, t):
        return 2.0 * t

    assert _test_double.jvp_rule is rule
    # a few hot ops carry written rules (`@<op>.jvp` beside their vjp); the rest derive theirs
    assert OPS["exp"].jvp_rule is not None
    assert OPS["cumsum"].jvp_rule is None


def test_numpy_style_options_make_a_numpy_style_op(scratch):
    @defop(params=("shift", "scale"), in_shape=True)
    def _test_affine(xp, x, *, shift=0.0, scale=1.0, in_shape=None):
        return x * scale + shift + 0.0 * len(in_shape)

    assert isinstance(_test_affine, NumpyStyleOp)
    x = tg.tensor([1.0, 2.0])
    # positional parameters after the input, as a rule calls NumPy
    np.testing.assert_allclose(_test_affine(x, 1.0, 3.0).numpy(), [4.0, 7.0])
    np.testing.assert_allclose(_test_affine(x, scale=2.0).numpy(), [2.0, 4.0])
    # dispatch skips the mapping: the caller passes every parameter and in_shape itself
    np.testing.assert_allclose(
        dispatch(_test_affine, x, shift=1.0, scale=1.0, in_shape=(2,)).numpy(), [2.0, 3.0]
    )
    with pytest.raises(TypeError, match=r"test_affine: takes 1 input\(s\) and the parameters"):
        _test_affine(x, 1.0, 2.0, 3.0)


def test_a_variadic_op_takes_inputs_or_one_sequence(scratch):
    @defop(saves="*", params=("axis",), inputs=None)
    def _test_stack_sum(xp, *xs, axis=0):
        return xp.stack(xs, axis).sum(axis)

    @_test_stack_sum.vjp
    def _(xp, g, *xs, axis=0):
        assert len(xs) == 3  # saves="*": every input, however many the call had
        return (g, g, g)

    a, b, c = (tg.tensor([float(i), 1.0], requires_grad=True) for i in range(3))
    np.testing.assert_allclose(_test_stack_sum([a, b, c], 0).detach().numpy(), [3.0, 3.0])
    _test_stack_sum(a, b, c, axis=0).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), [1.0, 1.0])


def test_array_twin_puts_the_forward_on_every_array_namespace(scratch):
    @defop(params=("power",), array_twin=True)
    def _test_power(xp, x, *, power=2):
        return x**power

    ns = array_ns(np)
    np.testing.assert_allclose(ns.test_power(np.array([2.0, 3.0]), 3), [8.0, 27.0])
    assert T.test_power is _test_power  # on tensors the twin is the op itself


def test_op_class_maps_an_unusual_call(scratch):
    class _ScaleFirst(NumpyStyleOp):
        def arguments(self, args, params):
            if args and isinstance(args[0], float):
                params["scale"], args = args[0], args[1:]
            return args, params

    @defop(params=("scale",), op_class=_ScaleFirst)
    def _test_scaled(xp, x, *, scale=1.0):
        return x * scale

    assert type(_test_scaled) is _ScaleFirst
    np.testing.assert_allclose(_test_scaled(3.0, tg.tensor([1.0, 2.0])).numpy(), [3.0, 6.0])


TWINS = sorted(name for name in xp._twins if name in OPS)


def test_the_table_has_the_twins_rules_use():
    for name in (
        "softmax_backward",
        "conv",
        "sum_to",
        "getitem_backward",
        "inv",
        "erf",
        "sigmoid",
        "index_put",
        "diagonal_backward",
    ):
        assert name in TWINS


@pytest.mark.parametrize("name", TWINS)
def test_each_array_twin_computes_what_its_op_computes(name):
    op = OPS[name]
    cases = op.samples(np.random.default_rng(0)) if op.samples else []
    if not cases:
        pytest.skip(f"{name} has no samples")
    ns = array_ns(np)
    for args, params in cases:
        tensors = [tg.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        expected = dispatch(op, *tensors, **op.arguments(tuple(tensors), dict(params))[1])
        got = getattr(ns, name)(*args, **params)
        np.testing.assert_allclose(np.asarray(got), expected.numpy(), rtol=1e-12, atol=1e-12)
