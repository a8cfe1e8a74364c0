"""ops/parallel.py: conv and pool split over intra-op threads give bitwise the one-thread
results (values and gradients; the conv weight gradient, a sum over the batch, to rounding),
for the batch split and the edge cases of the split; whole-op splits hold OpenBLAS at one
thread and restore it, also on errors and from two user threads."""

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
    for i, (a, m) in enumerate(zip(one, many, strict=True)):
        if i == 3 and parallel.batch_split(np, n, 10**9):
            # the weight gradient sums over the batch: per-slice partials, added in slice
            # order (reproducible, not bitwise the one-thread sum)
            np.testing.assert_allclose(m, a, rtol=2e-5, atol=2e-5 * np.abs(a).max())
        else:
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


# ---------------------------------------------------------------- whole ops over the batch
needs_openblas = pytest.mark.skipif(
    not parallel._one_blas_thread.available(),
    reason="whole-op splits need one pthreads OpenBLAS (NumPy's wheels bundle it)",
)


def _blas_threads():
    return parallel._one_blas_thread.handles[1]()


@pytest.fixture
def two_blas_threads():
    """A BLAS setting of 2 (not the 1 the splits hold): restoring it is then visible."""
    before = _blas_threads()
    tg.set_num_threads(2)
    yield
    tg.set_num_threads(before)


def test_whole_op_splits_are_off_by_default_and_for_other_arrays():
    assert parallel.intra_op_threads() == 1
    assert not parallel.batch_split(np, 64, 10**9)


@needs_openblas
def test_a_whole_op_split_holds_one_blas_thread_and_restores_it(split_everything, two_blas_threads):
    split_everything(2)
    seen = {}

    def body(lo, hi):
        seen[lo] = _blas_threads()

    assert parallel.batch_split(np, 4, 10**6)
    parallel.for_batch(4, body)
    assert seen == {0: 1, 2: 1}  # both slices, each on one BLAS thread
    assert _blas_threads() == 2


@needs_openblas
def test_an_error_in_a_slice_reaches_the_caller_and_restores_blas(
    split_everything, two_blas_threads, monkeypatch
):
    split_everything(2)
    from tapegrad.ops import conv

    real = conv._conv_forward

    def failing(xp, x, *args, **kw):
        if x.shape[0] < 4:  # a slice of the split, not the whole batch
            raise RuntimeError("slice failed")
        return real(xp, x, *args, **kw)

    monkeypatch.setattr(conv, "_conv_forward", failing)
    x = tg.tensor(np.ones((4, 2, 5, 5), np.float32))
    w = tg.tensor(np.ones((3, 2, 3, 3), np.float32))
    with pytest.raises(RuntimeError, match="slice failed"):
        F.conv2d(x, w)
    assert _blas_threads() == 2
    monkeypatch.setattr(conv, "_conv_forward", real)
    assert F.conv2d(x, w).shape == (4, 3, 3, 3)  # and the next split runs


@needs_openblas
def test_slices_run_in_the_callers_errstate(split_everything):
    split_everything(2)

    def body(lo, hi):
        np.multiply(np.float32(3e38), np.float32(10.0))  # overflows in every slice

    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        parallel.for_batch(2, body)
    with np.errstate(over="ignore"):
        parallel.for_batch(2, body)  # and silent where the caller silenced it


def _step_grads(seed):
    rng = np.random.default_rng(seed)
    x = tg.tensor(rng.standard_normal((6, 3, 10, 10)), requires_grad=True)
    w1 = tg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    w2 = tg.tensor(rng.standard_normal((40, 5)), requires_grad=True)
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, padding=1)), 2)
    (h.reshape(6, -1)[:, :40] @ w2).sum().backward()
    return [a.numpy().copy() for a in (h.detach(), x.grad, w1.grad, w2.grad)]


@needs_openblas
def test_two_user_threads_split_at_once(split_everything, two_blas_threads):
    import threading

    got, errors = {}, []

    def run(seeds):
        try:
            for _ in range(3):
                for seed in seeds:
                    got.setdefault(seed, []).append(_step_grads(seed))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in ((0, 1), (2, 3))]
    split_everything(2)
    expected = {seed: _step_grads(seed) for seed in range(4)}  # split, one user thread
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for seed, runs in got.items():
        for result in runs:
            for a, b in zip(expected[seed], result, strict=True):
                np.testing.assert_array_equal(a, b)  # the same slices: the same sums
    assert _blas_threads() == 2  # the last split to leave restored the user's setting


@needs_openblas
def test_split_weight_gradient_is_the_sum_of_its_slices_in_order(split_everything):
    # float64: the split's dw is exactly partial(0:3) + partial(3:7), each the unsplit rule
    split_everything(1)
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal((7, 3, 6, 6)), rng.standard_normal((7, 4, 6, 6))
    p = dict(kernel=(3, 3), stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1)
    from tapegrad.ops import conv

    parts = [conv._conv_weight_grad_forward(np, x[a:b], g[a:b], **p) for a, b in ((0, 3), (3, 7))]
    one = conv._conv_weight_grad_forward(np, x, g, **p)
    split_everything(2)
    split = conv._conv_weight_grad.forward(np, x, g, **p)
    np.testing.assert_array_equal(split, parts[0] + parts[1])
    np.testing.assert_allclose(split, one, rtol=1e-12, atol=1e-12)


@needs_openblas
def test_small_matmuls_hold_one_blas_thread_while_splitting(
    split_everything, two_blas_threads, monkeypatch
):
    seen = []
    real = np.matmul

    class Spy:
        module = np

        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def matmul(a, b, **kw):
            seen.append(_blas_threads())
            return real(a, b, **kw)

    from tapegrad.ops import linalg

    a, b = np.ones((64, 100)), np.ones((100, 10))
    split_everything(2)
    linalg._matmul.forward(Spy(), a, b)  # 64000 multiply-adds: small
    big = np.ones((256, 256))
    linalg._matmul.forward(Spy(), big, big)  # 2**24: BLAS keeps its threads
    split_everything(1)
    linalg._matmul.forward(Spy(), a, b)  # splitting off: untouched
    assert seen == [1, 2, 2]
    assert _blas_threads() == 2


@needs_openblas
@pytest.mark.parametrize("name", ["_conv", "_conv_transpose", "_conv_weight_grad"])
def test_every_conv_sample_splits_like_the_whole_op(split_everything, name):
    # the op table's samples cover every path: 1x1, depthwise (direct, strided, multiplier
    # 2), grouped, dilated, 1-D and 3-D, output padding past the stride
    from tapegrad.ops import conv

    op = getattr(conv, name)
    for args, params in op.samples(np.random.default_rng(11)):
        batched = 2 if name == "_conv_weight_grad" else 1  # (x, g) or x / y alone
        args = tuple(
            np.concatenate([a, a[::-1] * 0.5]) if i < batched else a  # a larger batch
            for i, a in enumerate(args)
        )
        split_everything(1)
        one = op.forward(np, *args, **params)
        split_everything(3)
        many = op.forward(np, *args, **params)
        # (to rounding, not bitwise: OpenBLAS picks its small-matrix GEMM kernels by size,
        # so a slice of these tiny GEMMs may add in another order than the whole; at the
        # bench's sizes the forward and transposed conv are bitwise, tested below)
        np.testing.assert_allclose(many, one, rtol=1e-12, atol=1e-12)


@needs_openblas
def test_w3_sized_convs_split_bitwise(split_everything):
    rng = np.random.default_rng(2)
    p = dict(stride=(1, 1), padding=((1, 1), (1, 1)), dilation=(1, 1), groups=1)
    from tapegrad.ops import conv

    for xs, ws in [((64, 1, 28, 28), (16, 1, 3, 3)), ((64, 16, 14, 14), (32, 16, 3, 3))]:
        x, w = rng.standard_normal(xs, np.float32), rng.standard_normal(ws, np.float32)
        b = rng.standard_normal(ws[0], np.float32)
        y = rng.standard_normal((xs[0], ws[0]) + xs[2:], np.float32)
        results = []
        for threads in (1, 2):
            split_everything(threads)
            results.append(
                (
                    conv._conv.forward(np, x, w, b, **p),
                    conv._conv_transpose.forward(np, y, w, None, out_shape=xs[2:], **p),
                )
            )
        for a, m in zip(*results, strict=True):
            if _blas_splits_bitwise(w.reshape(ws[0], -1)):
                np.testing.assert_array_equal(a, m)
            else:  # this machine's GEMM kernels round a column block differently
                np.testing.assert_allclose(a, m, rtol=1e-5, atol=1e-4)


def _blas_splits_bitwise(weights: np.ndarray) -> bool:
    """Whether this BLAS gives a block of columns of a product bitwise as the product over
    all of them does (at two threads, as the unsplit conv runs, against one per block, as
    a split one). OpenBLAS's SkylakeX kernels do at W3's sizes; its Haswell ones, as on an
    AMD EPYC, need not (1e-6 apart), and then the split is equal to rounding only."""
    cols = np.random.default_rng(0).standard_normal((weights.shape[1], 12544), np.float32)
    before = _blas_threads()
    try:
        tg.set_num_threads(2)
        whole = weights @ cols
        tg.set_num_threads(1)
        half = weights @ np.ascontiguousarray(cols[:, :6272])
    finally:
        tg.set_num_threads(before)
    return bool(np.array_equal(whole[:, :6272], half))


@needs_openblas
def test_a_thread_count_set_during_a_split_is_the_one_restored(split_everything, two_blas_threads):
    import threading

    split_everything(2)
    started, release = threading.Event(), threading.Event()

    def body(lo, hi):
        started.set()
        release.wait(10)

    other = threading.Thread(target=parallel.for_batch, args=(2, body))
    other.start()  # another user thread's split, holding OpenBLAS at one thread
    try:
        assert started.wait(10)
        assert _blas_threads() == 1
        tg.set_num_threads(3)  # the user's new setting, while that split runs
        assert _blas_threads() == 1
    finally:
        release.set()
        other.join()
    assert _blas_threads() == 3


@needs_openblas
@pytest.mark.parametrize("groups, stride", [(1, 1), (2, 2)])
def test_split_gradients_match_finite_differences(split_everything, groups, stride):
    from tapegrad.autograd import gradcheck, gradgradcheck

    split_everything(2)
    rng = np.random.default_rng(groups)
    x = tg.tensor(rng.standard_normal((4, 4, 7, 7)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((6, 4 // groups, 3, 3)), requires_grad=True)
    b = tg.tensor(rng.standard_normal(6), requires_grad=True)

    def fn(x, w, b):
        h = F.conv2d(x, w, b, stride=stride, padding=1, groups=groups)
        return F.max_pool2d(F.relu(h), 2) @ tg.ones(h.shape[-1] // 2, 2, dtype=h.dtype)

    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(lambda x, w: F.conv2d(x, w, stride=stride, groups=groups), (x, w))
