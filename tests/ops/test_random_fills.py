"""Tensor's in-place random fills (ops/random_fills.py): the generator and its seed, ranges
and dtypes, autograd's in-place rules, errors, and tg.compile's eager fallback."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.compile import CompileWarning

FILLS = [
    ("uniform_", (-2.0, 3.0)),
    ("normal_", (1.0, 0.5)),
    ("log_normal_", (0.0, 0.25)),
    ("exponential_", (2.0,)),
    ("cauchy_", (0.0, 1.0)),
    ("geometric_", (0.3,)),
    ("bernoulli_", (0.3,)),
    ("random_", (3, 9)),
]


@pytest.mark.parametrize("name,args", FILLS, ids=[f[0] for f in FILLS])
def test_fill_returns_self_bumps_version_and_follows_the_seed(name, args):
    t = tg.zeros(4000, dtype=tg.float32)
    v = t._version
    tg.manual_seed(5)
    assert getattr(t, name)(*args) is t
    assert t._version > v and t.dtype == tg.float32
    first = t.numpy().copy()
    tg.manual_seed(5)
    getattr(t, name)(*args)
    np.testing.assert_array_equal(t.numpy(), first)
    getattr(t, name)(*args)
    assert not np.array_equal(t.numpy(), first)  # the stream moves on


def test_distributions_have_the_right_support_and_moments():
    tg.manual_seed(0)
    n = 200_000
    u = tg.empty(n, dtype=tg.float64).uniform_(-2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.02
    z = tg.empty(n, dtype=tg.float64).normal_(1.0, 0.5).numpy()
    assert abs(z.mean() - 1.0) < 0.01 and abs(z.std() - 0.5) < 0.01
    e = tg.empty(n, dtype=tg.float64).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    ln = tg.empty(n, dtype=tg.float64).log_normal_(0.0, 0.25).numpy()
    assert ln.min() > 0 and abs(np.log(ln).std() - 0.25) < 0.01
    c = tg.empty(n, dtype=tg.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05
    g = tg.empty(n, dtype=tg.float64).geometric_(0.25).numpy()
    assert g.min() == 1 and np.all(g == np.round(g)) and abs(g.mean() - 4.0) < 0.05
    b = tg.empty(n).bernoulli_(0.3).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    r = tg.empty(n, dtype=tg.int64).random_(3, 9).numpy()
    assert set(np.unique(r)) == set(range(3, 9))
    r = tg.empty(n, dtype=tg.int64).random_(4).numpy()
    assert set(np.unique(r)) == set(range(4))
    r8 = tg.empty(n, dtype=tg.uint8).random_().numpy()
    assert r8.min() == 0 and r8.max() == 255
    rf = tg.empty(n, dtype=tg.float32).random_().numpy()
    assert rf.min() >= 0 and rf.max() <= 2**24 and np.all(rf == np.round(rf))


def test_bernoulli_with_a_tensor_of_probabilities_and_integer_tensors():
    tg.manual_seed(1)
    p = tg.tensor([[0.0], [1.0]])
    out = tg.empty(2, 5, dtype=tg.int64).bernoulli_(p)
    assert out.dtype == tg.int64
    assert out.tolist() == [[0] * 5, [1] * 5]
    with pytest.raises(RuntimeError, match="bernoulli_: p of shape"):
        tg.empty(2, 5).bernoulli_(tg.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="bernoulli_: expects 0 <= p <= 1"):
        tg.empty(3).bernoulli_(1.5)


def test_a_leaf_that_requires_grad_is_refused_unless_under_no_grad():
    w = tg.zeros(3, requires_grad=True)
    for name, args in FILLS:
        if name in ("geometric_", "bernoulli_", "random_"):
            continue
        with pytest.raises(RuntimeError, match="leaf Variable"):
            getattr(w, name)(*args)
    with tg.no_grad():
        w.normal_()
    assert w.requires_grad and w.grad_fn is None and np.any(w.detach().numpy() != 0)


def test_a_filled_intermediate_passes_no_gradient_back():
    x = tg.ones(3, requires_grad=True)
    y = x * 2
    y.uniform_()
    (y * x).sum().backward()
    # d/dx of (U * x) with U constant: U (the path through y is cut by the fill)
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())


def test_filling_a_view_writes_the_base():
    base = tg.zeros(2, 3)
    base[0].fill_(0.0)
    base[1].uniform_(5, 6)
    a = base.numpy()
    assert np.all(a[0] == 0) and np.all((a[1] >= 5) & (a[1] < 6))


def test_bad_arguments_raise_errors_naming_the_fill():
    t = tg.empty(3)
    i64, u8 = tg.zeros(2, dtype=tg.int64), tg.zeros(2, dtype=tg.uint8)
    cases = [
        (RuntimeError, "uniform_: expects to return a", lambda: t.uniform_(2, 1)),
        (RuntimeError, "normal_: expects std >= 0.0", lambda: t.normal_(0, -1)),
        (RuntimeError, "log_normal_: expects std > 0.0", lambda: t.log_normal_(0, 0)),
        (RuntimeError, "exponential_: expects lambda > 0.0", lambda: t.exponential_(0)),
        (RuntimeError, "cauchy_: expects sigma > 0.0", lambda: t.cauchy_(0, -2)),
        (RuntimeError, r"geometric_: expects p to be in \(0, 1\)", lambda: t.geometric_(1.0)),
        (RuntimeError, "random_: expects 'from' to be less than 'to'", lambda: t.random_(5, 5)),
        (TypeError, "random_: to must be an integer", lambda: t.random_(0, 2.5)),
        (TypeError, "uniform_: from must be a Python number", lambda: t.uniform_("a")),
        (TypeError, "normal_: generator must be a tg.Generator", lambda: t.normal_(generator=1)),
        (RuntimeError, "uniform_: not implemented for", lambda: i64.uniform_()),
        (RuntimeError, "random_: .* out of the bounds", lambda: u8.random_(0, 300)),
    ]  # fmt: skip
    for kind, match, call in cases:
        with pytest.raises(kind, match=match):
            call()


def test_compiled_functions_drawing_fills_run_eagerly_with_eagers_stream():
    def step(x):
        noise = tg.empty(x.shape).normal_()
        return x + noise

    def run(f):
        tg.manual_seed(11)
        return [f(tg.ones(4)).numpy() for _ in range(3)]

    want = run(step)
    fast = tg.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileWarning)
        got = run(fast)
    assert any("random" in str(w.message) for w in caught)  # the signature fell back
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(got[0], got[1])  # fresh numbers per call, as eager


def test_matches_torch_dtype_rules():
    torch = pytest.importorskip("torch")
    for name in ("uniform_", "normal_", "exponential_", "cauchy_", "log_normal_"):
        with pytest.raises(RuntimeError):
            getattr(torch.zeros(2, dtype=torch.long), name)()
        with pytest.raises(RuntimeError, match=name):
            getattr(tg.zeros(2, dtype=tg.int64), name)()
    for name, args in (("random_", (0, 5)), ("bernoulli_", (0.5,)), ("geometric_", (0.5,))):
        assert getattr(torch.zeros(2, dtype=torch.long), name)(*args).dtype == torch.long
        assert getattr(tg.zeros(2, dtype=tg.int64), name)(*args).dtype == tg.int64


def test_a_fill_of_a_traced_tensor_is_not_replayed_as_a_constant():
    def step(x):
        return x.clone().uniform_() + x

    tg.manual_seed(3)
    want = [step(tg.ones(5)).numpy() for _ in range(3)]
    fast = tg.compile(step)
    tg.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        got = [fast(tg.ones(5)).numpy() for _ in range(3)]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
