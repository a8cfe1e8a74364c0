"""W2 (the bench MLP training step) next to its hand-written NumPy floor, variants alternated
in one process, CPU time of this thread (`time.thread_time`: preemption by the other
processes on the box is not counted), minimum / 25th percentile / median over the repeats.

    PYTHONPATH=$PWD/src OPENBLAS_NUM_THREADS=1 python bench/mlp_step.py [--mode M] [-n N]
        [variants ...]

Variants: `np` (bench/adapters/numpy_manual.py), `eager`, `compiled`, and `compiled` built
with one program pass off: `compiled-no-inplace`, `compiled-no-align`, `compiled-no-inline`.

Modes:
- `step` (default): whole steps.
- `no-gemm`: every GEMM replaced by a copy of a cached result of its shape (one write pass
  over the output, as a GEMM's store): what is left is each variant's non-GEMM work, which
  the ~27 ms of GEMMs otherwise bury in noise. The floor calls np.matmul here, not `@`.
- `gemms`: the sum of the GEMM times inside the compiled steps (np.matmul timed).

One process holds every variant, so they share malloc's heap: a step of one can leave the
heap trimmed for the next (page faults each step). Run with
`MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=536870912` to compare compute
alone (each framework alone in its bench process faults 0 times per step either way).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "adapters")]

_REAL_MATMUL = np.matmul
_cached: dict = {}
_gemm_time = [0.0]


def _fake_matmul(a, b, out=None):
    shape = a.shape[:-1] + b.shape[-1:]
    src = _cached.get((shape, a.dtype))
    if src is None:
        rng = np.random.default_rng(len(_cached))
        src = _cached[shape, a.dtype] = (rng.standard_normal(shape) * 0.1).astype(a.dtype)
    if out is None:
        out = np.empty(shape, a.dtype)
    np.copyto(out, src)
    return out


def _timed_matmul(a, b, out=None):
    t0 = time.thread_time()
    r = _REAL_MATMUL(a, b, out=out)
    _gemm_time[0] += time.thread_time() - t0
    return r


def _floor_with_np_matmul(params, X, y, lr):
    """numpy_manual's step, GEMMs through np.matmul (so that --mode no-gemm replaces them)."""
    P = [p.copy() for p in params]
    B = X.shape[0]
    rows = np.arange(B)

    def step():
        mm = np.matmul
        W1, b1, W2, b2, W3, b3 = P
        z1 = mm(X, W1)
        z1 += b1
        h1 = np.maximum(z1, 0, out=z1)
        z2 = mm(h1, W2)
        z2 += b2
        h2 = np.maximum(z2, 0, out=z2)
        logits = mm(h2, W3)
        logits += b3
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) + m[:, 0] - logits[rows, y]))
        d = e / s
        d[rows, y] -= 1
        d /= B
        dW3 = mm(h2.T, d)
        db3 = d.sum(0)
        dh2 = mm(d, W3.T)
        dh2 *= h2 > 0
        dW2 = mm(h1.T, dh2)
        db2 = dh2.sum(0)
        dh1 = mm(dh2, W2.T)
        dh1 *= h1 > 0
        dW1 = mm(X.T, dh1)
        db1 = dh1.sum(0)
        for p, g in zip(P, (dW1, db1, dW2, db2, dW3, db3)):
            p -= lr * g
        return loss

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variants", nargs="*", default=["np", "eager", "compiled"])
    ap.add_argument("--mode", choices=["step", "no-gemm", "gemms"], default="step")
    ap.add_argument("-n", type=int, default=60, help="repeats of each variant")
    ap.add_argument(
        "--timer",
        choices=["thread", "wall"],
        default="thread",
        help="thread_time (default) or perf_counter (for several BLAS threads)",
    )
    args = ap.parse_args()
    if args.mode == "no-gemm":
        np.matmul = _fake_matmul  # before the programs bind it
    elif args.mode == "gemms":
        np.matmul = _timed_matmul
    import common as C
    import numpy_manual
    import tapegrad_

    tapegrad_.setup({})
    from tapegrad.compile import inline, program

    params, X, y = C.mlp_data()
    steps = {}
    for v in args.variants:
        if v == "np":
            floor = _floor_with_np_matmul if args.mode == "no-gemm" else None
            steps[v] = (
                floor(params, X, y, C.LR)
                if floor
                else numpy_manual.w2_mlp({}, params, X, y, C.LR)["step"]
            )
        elif v == "eager":
            steps[v] = tapegrad_.w2_mlp({}, params, X, y, C.LR)["step"]
        elif v.startswith("compiled"):
            program.IN_PLACE = "no-inplace" not in v
            program.ALIGN = "no-align" not in v
            inline.ENABLED = "no-inline" not in v
            try:
                steps[v] = tapegrad_.w2_mlp({"compiled": True}, params, X, y, C.LR)["step"]
                for _ in range(3):  # trace, checked first replay, build
                    steps[v]()
            finally:
                program.IN_PLACE = program.ALIGN = inline.ENABLED = True
        else:
            ap.error(f"unknown variant {v!r}")
    for s in steps.values():
        for _ in range(3):
            s()
    samples: dict = {v: [] for v in steps}
    clock = time.perf_counter if args.timer == "wall" else time.thread_time
    for _ in range(args.n):
        for v, s in steps.items():
            _gemm_time[0] = 0.0
            t0 = clock()
            s()
            dt = clock() - t0
            samples[v].append(_gemm_time[0] if args.mode == "gemms" else dt)
    first = min(samples[args.variants[0]])
    what = "GEMM ms per step" if args.mode == "gemms" else "ms per step"
    print(f"{args.mode}: {what}, {args.timer} time over {args.n} alternated repeats")
    for v, r in samples.items():
        r = sorted(r)
        print(
            f"  {v:22s} min {r[0] * 1e3:7.3f} ({r[0] / first:.3f}x)  "
            f"p25 {r[len(r) // 4] * 1e3:7.3f}  median {r[len(r) // 2] * 1e3:7.3f}"
        )


if __name__ == "__main__":
    main()
