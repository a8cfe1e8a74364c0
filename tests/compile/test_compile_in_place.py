"""The program's in-place pass: an elementwise op writes into an intermediate the program
allocated once nothing reads it any more (forward: `z = x @ w; z += b; relu in place`;
backward: relu's rule into the incoming gradient), and never where the buffer is still
read, viewed or saved. Every case equals eager bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import tapegrad as tg
import tapegrad.nn.functional as F


def _params(rng, sizes=(12, 16, 16, 5)):
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        out.append(rng.standard_normal((fan_in, fan_out)).astype(np.float32) / fan_in**0.5)
        out.append(rng.standard_normal(fan_out).astype(np.float32) * 0.1)
    return out


def _mlp_step(arrays, compiled):
    P = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
    opt = tg.optim.SGD(P, lr=0.05)

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        W1, b1, W2, b2, W3, b3 = P
        h = F.relu(F.relu(x @ W1 + b1) @ W2 + b2)
        loss = F.cross_entropy(h @ W3 + b3, y)
        loss.backward()
        opt.step()
        return loss

    return (tg.compile(step) if compiled else step), P


@pytest.mark.parametrize(
    ("sizes", "batch", "forward_writes", "backward_writes"),
    [
        ((12, 16, 16, 5), 32, 0, 0),  # small arrays: `out=` would cost more than it saves
        # bias adds and relus in place (the small logits' add not), aligned GEMM results
        ((64, 256, 256, 5), 128, 6, 4),
    ],
)
def test_the_bench_mlp_step_runs_in_place_and_equals_eager_bitwise(
    rng, sizes, batch, forward_writes, backward_writes
):
    arrays = _params(rng, sizes)
    data = [
        (
            tg.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32)),
            tg.tensor(rng.integers(0, sizes[-1], batch)),
        )
        for _ in range(6)
    ]
    eager, want_p = _mlp_step(arrays, compiled=False)
    fast, got_p = _mlp_step(arrays, compiled=True)
    for x, y in data:
        assert_array_equal(fast(x, y).detach().numpy(), eager(x, y).detach().numpy())
        for g, w in zip(got_p, want_p, strict=True):
            assert_array_equal(g.detach().numpy(), w.detach().numpy())
            assert_array_equal(g.grad.numpy(), w.grad.numpy())
    (program,) = fast._cache.values()
    # bias adds and relus into the GEMM results, relu's rule into its gradient
    assert program.forward_source.count("out=") == forward_writes
    assert program.backward_source.count("out=") == backward_writes
    # the gradients the optimizer and the user see are plain arrays of their own
    grads = [p.grad.numpy() for p in got_p]
    assert len({id(g) for g in grads}) == len(grads)
    assert all(g.base is None for g in grads)


def test_aligned_arrays_start_on_a_cache_line():
    from tapegrad.compile.inline import aligned_empty

    for shape in [(3,), (5, 7), (256, 1024)]:
        a = aligned_empty(shape, np.float32)
        assert a.shape == shape and a.dtype == np.float32 and a.flags.c_contiguous
        assert a.__array_interface__["data"][0] % 64 == 0
        a[...] = 1.0  # writable


def _compare(fn, arrays, rng):
    """fn compiled and eager: values and gradients, over three calls (trace, check, replay)."""
    fast = tg.compile(fn)
    for _ in range(3):
        inputs = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
        twins = [tg.tensor(a.copy(), requires_grad=True) for a in arrays]
        got, want = fast(*inputs), fn(*twins)
        assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        for a, b in zip(inputs, twins, strict=True):
            assert_array_equal(a.grad.numpy(), b.grad.numpy())
        arrays = [a + rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
    (program,) = fast._cache.values()
    return program


def test_an_intermediate_read_later_is_not_overwritten(rng):
    def fn(x, w):
        z = x @ w
        return (z + 1.0) * z  # z is read again after the add

    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((128, 64), (64, 256))]
    program = _compare(fn, arrays, rng)
    # the add does not write into z (read after it), nor the product (mul saves both)
    assert program.forward_source.count("out=") == 1  # the aligned GEMM result


def test_an_intermediate_with_a_live_view_is_not_overwritten(rng):
    def fn(x, w):
        z = x @ w
        flat = z.reshape(-1)  # a view of z's buffer, read after the add
        a = z + 1.0
        return a.reshape(-1) * 2.0 + flat

    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((128, 64), (64, 256))]
    program = _compare(fn, arrays, rng)
    # neither z (viewed) nor a (viewed) is written into: only the product, by the last add
    assert program.forward_source.count("out=") == 2  # and the aligned GEMM result


def test_an_intermediate_saved_for_the_backward_is_not_overwritten(rng):
    def fn(x, w, c):
        z = x @ w
        y = z * c  # mul saves z for c's gradient
        return y + (z + 1.0)  # z's last use: but the backward still reads it

    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((128, 64), (64, 256), (128, 256))]
    _compare(fn, arrays, rng)


def test_a_relu_gradient_shared_by_two_consumers_is_not_overwritten(rng):
    def fn(x, w):
        z = x @ w
        r = F.relu(z)
        return r * 3.0 + r.exp()  # relu's gradient is the sum of two

    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((128, 64), (64, 256))]
    program = _compare(fn, arrays, rng)
    assert "out=g" not in program.backward_source


def test_a_replay_leaks_no_numpy_warning():
    @tg.compile
    def fn(x, y):
        return x / y + (x * 0.0).log()

    x, y = tg.ones(3), tg.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):  # trace, the checked first replay, a replay
            out = fn(x, y).numpy()
    assert np.all(np.isnan(out))  # inf + -inf


def test_no_probe_gradient_outlives_a_program_build():
    # the inlining checks cache layer-sized probe gradients while a program is built
    from tapegrad.compile import inline

    f = tg.compile(lambda x, w: (x @ w).relu().sum())
    w = tg.randn(300, 300, requires_grad=True)
    f(tg.randn(300, 300), w).backward()
    assert w.grad is not None
    assert not inline._probes and inline._last_want is None
