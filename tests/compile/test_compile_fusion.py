"""The fused rules of whole compiled steps (compile/fusion.py) give eager's bits: relu's and
the tiling max pool's rules as one, ties, zeros, NaN and infinities included."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.compile import fusion
from tapegrad.ops import pool
from tapegrad.ops.registry import _NAMESPACES, OPS

NS = _NAMESPACES[np]  # the array namespace the programs pass to rules


def _params(kernel):
    return dict(kernel=kernel, stride=kernel, padding=((0, 0), (0, 0)), dilation=(1, 1))


def _eager(g, x, kernel):
    """max_pool's rule, then relu's, as eager runs them (x: relu's output)."""
    with np.errstate(all="ignore"):  # (the engine runs rules so: inf * 0 gives NaN)
        (d,) = OPS["max_pool"].rule(NS, g, x, **_params(kernel))
        return OPS["relu"].rule(NS, d, x)[0]


def _case(rng, shape, kernel, dtype):
    x = np.maximum(rng.standard_normal(shape).astype(dtype), 0)  # zeros: windows tie at 0
    x[0, 0, : kernel[0], : kernel[1]] = 1.5  # a window whose maximum is everywhere
    x.flat[7::13] = x.flat[8::13]  # more ties between neighbours
    out = pool._max_pool_forward(np, x, kernel, kernel, ((0, 0), (0, 0)), (1, 1))
    g = rng.standard_normal(out.shape).astype(dtype)
    special = [np.inf, -0.0, np.nan, -np.inf]
    g.flat[: min(4, g.size)] = special[: min(4, g.size)]
    g.flat[5::7] *= -1.0
    return g, x, out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "kernel"),
    [
        ((3, 2, 8, 6), (2, 2)),
        ((2, 3, 6, 9), (3, 3)),
        ((2, 2, 4, 6), (2, 3)),
        ((1, 2, 2, 2), (2, 2)),
    ],
)
def test_fused_rule_is_eagers_two_rules_bit_for_bit(shape, kernel, dtype):
    rng = np.random.default_rng(0)
    g, x, out = _case(rng, shape, kernel, dtype)
    with np.errstate(all="ignore"):
        fast = fusion._fast_relu_max_pool_backward(g, x, out, kernel)
    assert fast is not None  # the fast path ran
    expected = _eager(g, x, kernel)
    assert fast.dtype == expected.dtype and fast.shape == expected.shape
    assert fast.tobytes() == expected.tobytes()  # -0.0 and NaN where eager has them


def test_nan_windows_and_remainders_take_eagers_rules():
    rng = np.random.default_rng(1)
    rule = fusion._relu_max_pool_rule(OPS["max_pool"].rule, OPS["relu"].rule)
    g, x, out = _case(rng, (2, 2, 6, 6), (2, 2), np.float64)
    x[1, 1, 2, 3] = np.nan  # eager's last-NaN rule: not the fast path
    out = pool._max_pool_forward(np, x, (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    assert fusion._fast_relu_max_pool_backward(g, x, out, (2, 2)) is None
    (got,) = rule(NS, g, x, out, **_params((2, 2)))
    assert got.tobytes() == _eager(g, x, (2, 2)).tobytes()
    # a remainder no window covers (7 rows for 2x2 windows)
    x = np.maximum(rng.standard_normal((2, 2, 7, 6)), 0)
    out = pool._max_pool_forward(np, x, (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    g = rng.standard_normal(out.shape)
    assert fusion._fast_relu_max_pool_backward(g, x, out, (2, 2)) is None
    (got,) = rule(NS, g, x, out, **_params((2, 2)))
    assert_array_equal(got, _eager(g, x, (2, 2)))
    assert got.shape == x.shape


def _cnn_params(rng):
    return [
        rng.standard_normal((4, 1, 3, 3)).astype(np.float32) / 3,
        rng.standard_normal(4).astype(np.float32) * 0.1,
        rng.standard_normal((6, 4, 3, 3)).astype(np.float32) / 6,
        rng.standard_normal(6).astype(np.float32) * 0.1,
        rng.standard_normal((6 * 2 * 2, 3)).astype(np.float32) / 5,
        rng.standard_normal(3).astype(np.float32) * 0.1,
    ]


def _cnn_steps(arrays, data, compiled, twice=False):
    P = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
    opt = tg.optim.SGD(P, lr=0.1)

    def step(x, y):
        c1w, c1b, c2w, c2b, fw, fb = P
        opt.zero_grad(set_to_none=True)
        r = F.relu(F.conv2d(x, c1w, c1b, padding=1))
        h = F.max_pool2d(r, 2)
        if twice:  # relu's output read twice: its gradient is a sum, nothing fused
            h = h + F.max_pool2d(r * 0.5, 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, padding=1)), 2)
        loss = F.cross_entropy(h.reshape(h.shape[0], -1) @ fw + fb, y)
        loss.backward()
        opt.step()
        return loss

    run = tg.compile(step) if compiled else step
    losses = [run(x, y).detach().numpy().copy() for x, y in data]
    return losses, [p.detach().numpy().copy() for p in P], [p.grad.numpy().copy() for p in P]


@pytest.mark.parametrize("twice", [False, True])
def test_compiled_cnn_step_with_fused_rules_equals_eager(twice, monkeypatch):
    rng = np.random.default_rng(2)
    arrays = _cnn_params(rng)
    data = []
    for _ in range(20):
        x = rng.standard_normal((5, 1, 8, 8)).astype(np.float32)
        x[0, 0, :4] = 0.0  # dead units: windows tied at zero after the relu
        data.append((tg.tensor(x), tg.tensor(rng.integers(0, 3, 5))))
    calls = []
    fast = fusion._fast_relu_max_pool_backward

    def counted(*args):
        calls.append(1)
        return fast(*args)

    monkeypatch.setattr(fusion, "_fast_relu_max_pool_backward", counted)
    eager = _cnn_steps(arrays, data, compiled=False, twice=twice)
    compiled = _cnn_steps(arrays, data, compiled=True, twice=twice)
    assert len(calls) == (1 if twice else 2) * 18  # in the 18 replayed steps (pool1 not twice)
    for a, b in zip(eager[0] + eager[1] + eager[2], compiled[0] + compiled[1] + compiled[2]):
        assert a.tobytes() == b.tobytes()
    monkeypatch.setattr(fusion, "ENABLED", False)  # the same step unfused: the same bits
    calls.clear()
    plain = _cnn_steps(arrays, data, compiled=True, twice=twice)
    assert not calls
    for a, b in zip(plain[1] + plain[2], compiled[1] + compiled[2]):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_weight_gradient_from_the_forwards_windows_equals_eager(threads, monkeypatch):
    """conv1 (1 channel: window rows per sample) and conv2 (4 -> 6 channels, 3x3: one
    window matrix) keep their windows for the weight gradient; with intra-op threads the
    ops' own split paths run, as in eager."""
    from tapegrad.ops import parallel

    rng = np.random.default_rng(3)
    arrays = _cnn_params(rng)
    data = [
        (
            tg.tensor(rng.standard_normal((6, 1, 8, 8)).astype(np.float32)),
            tg.tensor(rng.integers(0, 3, 6)),
        )
        for _ in range(20)
    ]
    calls = []
    weight_grad = fusion._weight_grad

    def counted(*args):
        calls.append(1)
        return weight_grad(*args)

    monkeypatch.setattr(fusion, "_weight_grad", counted)
    before = parallel.intra_op_threads()
    parallel.set_intra_op_threads(threads)
    try:
        eager = _cnn_steps(arrays, data, compiled=False)
        calls.clear()  # (the check when the program is built calls it too)
        compiled = _cnn_steps(arrays, data, compiled=True)
    finally:
        parallel.set_intra_op_threads(before)
    assert len(calls) >= (2 * 18 if threads == 1 else 0)  # conv1 (window rows) and conv2
    if threads > 1:
        assert len(calls) <= 2  # only the build-time checks
    for a, b in zip(eager[0] + eager[1] + eager[2], compiled[0] + compiled[1] + compiled[2]):
        assert a.tobytes() == b.tobytes()
