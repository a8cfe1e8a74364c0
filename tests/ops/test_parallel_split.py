"""ops/parallel.py: conv and pool split over intra-op threads give bitwise the one-thread
results (values and gradients), for the batch split and the edge cases of the split."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.ops import parallel


@pytest.fixture
def split_everything(monkeypatch):
    """Split even tiny work, over more threads than samples in some cases."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 0)
    before = parallel.intra_op_threads()
    yield parallel.set_intra_op_threads
    parallel.set_intra_op_threads(before)


def _conv_pool_step(x, w, b, stride, padding, groups):
    xt = tg.tensor(x, requires_grad=True)
    wt, bt = tg.tensor(w, requires_grad=True), tg.tensor(b, requires_grad=True)
    h = F.conv2d(xt, wt, bt, stride=stride, padding=padding, groups=groups)
    out = F.max_pool2d(F.relu(h), 2)
    (out * tg.tensor(np.arange(out.numel(), dtype=x.dtype).reshape(out.shape))).sum().backward()
    return [a.numpy().copy() for a in (h.detach(), out.detach(), xt.grad, wt.grad, bt.grad)]


@pytest.mark.parametrize(
    "n, c, o, size, stride, padding, groups",
    [
        (5, 3, 4, 9, 1, 1, 1),
        (3, 4, 6, 8, 2, 1, 2),
        (1, 2, 2, 7, 1, 0, 1),
        (4, 2, 3, 6, 1, 2, 1),
        (5, 4, 4, 8, 1, 1, 4),  # depthwise, stride 1: ops/conv_direct.py
        (3, 3, 6, 8, 1, 1, 3),  # multiplier 2: its transposed conv sums two inputs
    ],
)
@pytest.mark.parametrize("threads", [2, 3, 7])
def test_split_matches_one_thread_bitwise(
    split_everything, n, c, o, size, stride, padding, groups, threads
):
    rng = np.random.default_rng(n * 100 + size)
    x = rng.standard_normal((n, c, size, size)).astype(np.float32)
    w = rng.standard_normal((o, c // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    split_everything(1)
    one = _conv_pool_step(x, w, b, stride, padding, groups)
    split_everything(threads)
    many = _conv_pool_step(x, w, b, stride, padding, groups)
    for a, m in zip(one, many, strict=True):
        np.testing.assert_array_equal(a, m)


def test_max_pool_nan_windows_split(split_everything):
    # a NaN window in one thread's half sends the whole op to the general (last-NaN) path
    x = np.arange(2 * 1 * 4 * 4, dtype=np.float64).reshape(2, 1, 4, 4)
    x[1, 0, 0, 1] = np.nan
    results = []
    for threads in (1, 2):
        split_everything(threads)
        xt = tg.tensor(x, requires_grad=True)
        F.max_pool2d(xt, 2).sum().backward()
        results.append(xt.grad.numpy())
    np.testing.assert_array_equal(results[0], results[1])
    assert results[1][1, 0, 0, 1] == 1.0  # the NaN is its window's maximum, as in PyTorch


def test_nested_calls_run_inline(split_everything):
    split_everything(2)
    calls = []

    def outer(lo, hi):
        parallel.for_slices(np, 3, lambda a, b: calls.append(("inner", a, b)), elements=10**6)
        calls.append(("outer", lo, hi))

    parallel.for_slices(np, 2, outer, elements=10**6)
    assert sorted(calls) == [("inner", 0, 3), ("inner", 0, 3), ("outer", 0, 1), ("outer", 1, 2)]


def test_errors_in_a_worker_reach_the_caller(split_everything):
    split_everything(2)

    def body(lo, hi):
        if lo > 0:
            raise RuntimeError("worker half failed")

    with pytest.raises(RuntimeError, match="worker half failed"):
        parallel.for_slices(np, 4, body, elements=10**6)


def test_relu_split_matches_the_plain_pass(split_everything, monkeypatch):
    x = np.random.default_rng(3).standard_normal((5, 3, 4)).astype(np.float32)
    x[0, 0, :3] = [np.nan, 0.0, -0.0]
    results = []
    for smallest in (10**9, 0):  # the plain NumPy expressions, then the split passes
        monkeypatch.setattr(parallel, "MIN_ELEMENTS", smallest)
        split_everything(3)
        xt = tg.tensor(x, requires_grad=True)
        y = xt.relu()
        (y * tg.tensor(x + 1)).sum().backward()
        results.append((y.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)  # NaN-equal too
    assert np.isnan(results[1][1][0, 0, 0])  # relu(NaN) has slope 1, as in PyTorch


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork only")
def test_a_forked_child_splits_with_fresh_threads(split_everything):
    import os

    split_everything(2)
    x = np.random.default_rng(5).standard_normal((4, 2, 6, 6))
    parallel.for_slices(np, 2, lambda lo, hi: None, elements=10**6)  # the parent's pool runs
    expected = F.max_pool2d(tg.tensor(x), 2).numpy()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a new pool (the parent's threads are not here), same values
        try:
            got = F.max_pool2d(tg.tensor(x), 2).numpy()
            os.write(write, b"1" if np.array_equal(got, expected) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.waitpid(pid, 0)


def test_off_by_default_and_bad_counts_are_named():
    import subprocess
    import sys

    code = "from tapegrad.ops import parallel; print(parallel.intra_op_threads())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="set_intra_op_threads: expected a positive int"):
            parallel.set_intra_op_threads(bad)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32, np.float16])
def test_relu_of_a_large_array_gives_the_small_arrays_dtype(dtype):
    # the split pass (above MIN_ELEMENTS) writes into an array like the input: a bool input
    # (whose maximum with 0 is int64) raised NumPy's cast error there, and gave int64 below
    small, large = np.ones(8, dtype), np.ones(parallel.MIN_ELEMENTS + 8, dtype)
    small[::2] = large[::2] = 0
    want = tg.relu(tg.tensor(small))
    got = tg.relu(tg.tensor(large))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy()[:8], want.numpy())


def test_a_pool_replaced_by_another_thread_before_the_submit_still_splits(
    split_everything, monkeypatch
):
    # another thread asking for more workers replaces (and shuts down) the pool between
    # this call's lookup and its submit: the call still finishes every slice itself
    split_everything(2)
    original = parallel._executor

    def raced(workers):
        pool = original(workers)
        original(workers + 2)  # what a concurrent call with a larger split does
        return pool

    monkeypatch.setattr(parallel, "_executor", raced)
    out = np.zeros(8)

    def body(lo, hi):
        out[lo:hi] = np.arange(lo, hi)

    parallel.for_slices(np, 8, body, elements=10**6)
    np.testing.assert_array_equal(out, np.arange(8))
