"""tg.compile against eager tapegrad and the hand-written NumPy floor, in one process.

    python bench/compile_bench.py            # W1 (64-op chain, 16 elements) and W2 (MLP step)
    python bench/compile_bench.py --quick    # fewer repeats
    python bench/compile_bench.py --min --ops 200   # fastest calls; W1 as bench/run.py's

W1: the bench's elementwise cycle (mul, add, tanh, exp(c*x), sin) 64 ops long on a (16,)
leaf, summed, backward: compiled, the chain is one compiled function whose output's
backward replays the traced rules. W2: the bench's MLP step (784-1024-1024-10, batch 256,
softmax CE, SGD): compiled, the forward and loss are compiled and `backward()` and the SGD
update run as in eager (a compiled whole step falls back to eager; see docs of tg.compile).
Numbers are medians (`--min`: minima) of calls timed in turns; compare ratios within one run.
"""
from __future__ import annotations

import argparse
import os
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")

import common as C  # noqa: E402  (bench/ is on sys.path when run as a script)
import numpy as np  # noqa: E402
from adapters import numpy_manual, tapegrad_  # noqa: E402

N_OPS = 64
MINIMA = False  # --min: report each variant's fastest call (less sensitive to other load)


def _w1_compiled(tg, x0, ops):
    @tg.compile
    def chain(x):
        h = x
        for kind, c in ops:
            if kind == "mul":
                h = h * c
            elif kind == "add":
                h = h + c
            elif kind == "tanh":
                h = h.tanh()
            elif kind == "expscaled":
                h = (h * c).exp()
            elif kind == "sin":
                h = h.sin()
        return h.sum()

    def run():
        x = tg.tensor(x0, requires_grad=True)
        chain(x).backward()
        return x.grad.numpy()

    return run


def _w2_compiled(tg, F, params, X, y, lr):
    P = [tg.tensor(p, requires_grad=True) for p in params]
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)

    @tg.compile
    def loss_fn(x, labels):
        W1, b1, W2, b2, W3, b3 = P
        h = F.relu(x @ W1 + b1)
        h = F.relu(h @ W2 + b2)
        return F.cross_entropy(h @ W3 + b3, labels)

    def step():
        for p in P:
            p.grad = None
        loss = loss_fn(Xt, yt)
        loss.backward()
        with tg.no_grad():
            for p in P:
                p._data -= lr * p.grad._data
                p._vc[0] += 1  # bump_version: the in-place write is seen
        return loss.item()

    return step, loss_fn


def _w2_compiled_step(tg, F, params, X, y, lr):
    """The whole step compiled: zero_grad, forward, loss, backward, SGD step."""
    P = [tg.tensor(p, requires_grad=True) for p in params]
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)
    opt = tg.optim.SGD(P, lr=lr)

    @tg.compile
    def step(x, labels):
        opt.zero_grad(set_to_none=True)
        W1, b1, W2, b2, W3, b3 = P
        h = F.relu(x @ W1 + b1)
        h = F.relu(h @ W2 + b2)
        loss = F.cross_entropy(h @ W3 + b3, labels)
        loss.backward()
        opt.step()
        return loss

    return lambda: step(Xt, yt).item(), step


def _w3_compiled_step(tg, F, params, X, y, lr):
    """The bench CNN step, compiled whole."""
    P = [tg.tensor(p, requires_grad=True) for p in params]
    Xt, yt = tg.from_numpy(X), tg.from_numpy(y)
    opt = tg.optim.SGD(P, lr=lr)

    @tg.compile
    def step(x, labels):
        c1w, c1b, c2w, c2b, fw, fb = P
        opt.zero_grad(set_to_none=True)
        h = F.max_pool2d(F.relu(F.conv2d(x, c1w, c1b, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2w, c2b, padding=1)), 2)
        loss = F.cross_entropy(h.reshape(h.shape[0], -1) @ fw + fb, labels)
        loss.backward()
        opt.step()
        return loss

    return lambda: step(Xt, yt).item()


def _interleaved_us(variants: dict, repeats: int, budget: float) -> dict:
    """Median µs per call of each variant, timed in turns (variant A, B, C, A, B, C, ...) so
    that load from other processes on a shared machine falls on all of them alike."""
    for fn in variants.values():
        for _ in range(3):
            fn()
    samples: dict = {name: [] for name in variants}
    start = time.perf_counter()
    for _ in range(repeats):
        for name, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget and len(samples[name]) >= 3:
            break
    key = "min" if MINIMA else "median"
    return {name: C.stats(s)[key] * 1e6 for name, s in samples.items()}


def w3_rows(tg, F, args, rows) -> None:
    """W3 (the bench CNN step): eager, compiled, and PyTorch eager when it is installed."""
    params, X, y = C.cnn_data()
    variants = {"tapegrad eager": tapegrad_.w3_cnn({}, params, X, y, C.LR)["step"],
                "compiled whole step": _w3_compiled_step(tg, F, params, X, y, C.LR)}
    try:
        from adapters import torch_

        torch_.setup({})
        variants["torch eager"] = torch_.w3_cnn({}, params, X, y, C.LR)["step"]
    except ImportError:
        pass
    for _ in range(3):
        losses = [fn() for fn in variants.values()]
    assert losses[0] == losses[1], losses  # tapegrad eager and compiled: the same bits
    w3 = {name: us / 1e3 for name, us in _interleaved_us(
        variants, 5 if args.quick else 20, 8 if args.quick else 30).items()}
    ref = "torch eager" if "torch eager" in w3 else "tapegrad eager"
    for name, ms in w3.items():
        rows.append(("W3 CNN step", name, f"{ms:.2f} ms/step", f"{ms / w3[ref]:.2f}x {ref}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--min", action="store_true", help="minima instead of medians")
    parser.add_argument("--ops", type=int, default=N_OPS, help="W1's chain length")
    args = parser.parse_args()
    global MINIMA
    MINIMA = args.min
    tapegrad_.setup({})
    tg, F = tapegrad_.tg, tapegrad_.F
    rows = []

    n_ops = args.ops
    x0, ops = C.w1_data(), C.w1_ops(n_ops)
    ref = C.w1_reference_grad(x0, ops)
    from tapegrad.compile import inline

    inline.ENABLED = False  # the optional pass, measured: a program built without it
    plain = _w1_compiled(tg, x0, ops)
    plain()
    inline.ENABLED = True
    variants = {"numpy floor": numpy_manual.w1_op_chain({}, x0, ops),
                "tapegrad eager": tapegrad_.w1_op_chain({}, x0, ops),
                "tapegrad compiled": _w1_compiled(tg, x0, ops),
                "compiled, no inlining pass": plain}
    for fn in variants.values():
        np.testing.assert_allclose(fn(), ref, rtol=1e-3, atol=1e-5)
    reps = 100 if args.quick else 400
    w1 = {name: us / n_ops
          for name, us in _interleaved_us(variants, reps, 3 if args.quick else 10).items()}
    assert np.array_equal(variants["tapegrad eager"](), variants["tapegrad compiled"]())
    for name, us in w1.items():
        rows.append((f"W1 {n_ops} ops x (16,)", name, f"{us:.2f} µs/op",
                     f"{us / w1['numpy floor']:.2f}x floor"))

    params, X, y = C.mlp_data()
    eager = tapegrad_.w2_mlp({}, params, X, y, C.LR)["step"]
    floor = numpy_manual.w2_mlp({}, params, X, y, C.LR)["step"]
    compiled, loss_fn = _w2_compiled(tg, F, params, X, y, C.LR)
    whole, whole_fn = _w2_compiled_step(tg, F, params, X, y, C.LR)
    for _ in range(3):  # warm NumPy and the allocator up before timing the trace
        floor()
    t0 = time.perf_counter()
    eager_first = eager()
    eager_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    first = compiled()  # the trace
    trace_ms = (time.perf_counter() - t0) * 1e3
    assert first == eager_first, (first, eager_first)  # same arithmetic: the same loss bits
    t0 = time.perf_counter()
    assert whole() == first
    step_trace_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(5):
        assert compiled() == eager() == whole()
    reps = 10 if args.quick else 30
    w2 = {name: us / 1e3 for name, us in _interleaved_us(
        {"numpy floor": floor, "tapegrad eager": eager, "compiled forward+loss": compiled,
         "compiled whole step": whole},
        reps, 8 if args.quick else 30).items()}
    for name, ms in w2.items():
        rows.append(("W2 MLP step", name, f"{ms:.2f} ms/step",
                     f"{ms / w2['numpy floor']:.2f}x floor"))
    w3_rows(tg, F, args, rows)
    for what, ms in (("forward+loss", trace_ms), ("whole step", step_trace_ms)):
        rows.append(("W2 MLP step", f"trace of {what} (first call)", f"{ms:.2f} ms",
                     f"{ms / eager_ms:.2f} first eager steps, "
                     f"{ms / w2['tapegrad eager']:.2f} median eager steps"))
    info = whole_fn.cache_info()
    print("| workload | variant | time | ratio |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\nW2 compiled whole step cache: {info}")


if __name__ == "__main__":
    main()
