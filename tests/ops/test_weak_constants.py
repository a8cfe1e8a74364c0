"""A Python float next to a floating tensor: the fast entry hands NumPy a cached 0-d array
of the tensor's dtype (ops/registry.py `_weak_array`), which must give the bits NumPy gives
for the float itself (NEP 50 casts it to the array's dtype), forward and backward."""

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import registry

CONSTANTS = [0.1, -1.7, 3.0, 1e-30, 7.5e4, 1e300, -0.0, 0.0, float("inf"), float("nan")]
OPS = [
    ("add", lambda t, c: t + c, lambda a, c: a + c),
    ("radd", lambda t, c: c + t, lambda a, c: c + a),
    ("sub", lambda t, c: t - c, lambda a, c: a - c),
    ("rsub", lambda t, c: c - t, lambda a, c: c - a),
    ("mul", lambda t, c: t * c, lambda a, c: a * c),
    ("rmul", lambda t, c: c * t, lambda a, c: c * a),
    ("div", lambda t, c: t / c, lambda a, c: a / c),
    ("rdiv", lambda t, c: c / t, lambda a, c: c / a),
]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name, op, reference", OPS, ids=[o[0] for o in OPS])
def test_a_python_float_gives_numpys_bits(rng, dtype, name, op, reference):
    a = (rng.standard_normal(7) * 3).astype(dtype)
    for c in CONSTANTS:
        x = tg.tensor(a, requires_grad=True)
        y = op(x, c)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = reference(a, c)
        got = y.detach().numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_gradient_by_a_saved_constant_is_numpys(rng, dtype):
    a = rng.standard_normal(5).astype(dtype)
    for c in (0.1, -2.3, 1e-3):
        x = tg.tensor(a, requires_grad=True)
        ((x * c).sum() + (c / x).sum()).backward()
        want = np.ones(5, dtype) * c + (-(np.ones(5, dtype) / a) * (c / a))
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)
        x.grad = None
        (x * c).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones(5, dtype) * c)


def test_the_cache_stays_bounded_and_read_only():
    x = tg.ones(3)
    for i in range(3 * registry._WEAK_ARRAYS_MAX):
        x = x * (1.0 + i * 1e-9)
    table = registry._WEAK_ARRAYS[np.dtype(np.float32)]
    assert 0 < len(table) <= registry._WEAK_ARRAYS_MAX
    kept = next(iter(table.values()))
    assert kept.ndim == 0 and not kept.flags.writeable


def test_a_float_the_dtype_cannot_hold_is_passed_as_it_is():
    assert registry._weak_array(1e5, np.dtype(np.float16)) == 1e5
    assert type(registry._weak_array(1e5, np.dtype(np.float16))) is float
    assert type(registry._weak_array(0.0, np.dtype(np.float32))) is float
    assert type(registry._weak_array(2.5, np.dtype(np.float32))) is np.ndarray
    # no overflow warning leaks from the cast (pytest runs with warnings as errors)
    y = tg.ones(2, dtype=tg.float16) * 1e5
    assert np.isinf(y.numpy()).all()
