"""What the first call of a compiled whole training step costs (the trace and the program
build), in warm eager steps: W2 (the bench MLP) and W3 (the bench CNN).

    PYTHONPATH=$PWD/src python bench/trace_cost.py [--rounds N] [--profile W2|W3]

Each round builds a fresh `tg.compile`d whole step (zero_grad, forward, loss, backward, SGD:
bench/compile_bench.py's) and times its first call, then times one warm eager step; the two
alternate, so load from other processes falls on both alike. Reported: the minimum and the
median of the per-round ratios, wall clock (`perf_counter`, as compile_bench reports the
trace) and this thread's CPU time (`thread_time`; at one BLAS thread the whole of both).
A second signature (another batch size) is traced after each first call too: what a trace
costs once the process has traced one step already.

`--profile W2` prints a cProfile (CPU timer) of one W2 trace instead.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import pstats
import statistics
import time

import common as C  # noqa: E402  (bench/ is on sys.path when run as a script)
from adapters import tapegrad_  # noqa: E402
from compile_bench import _w2_compiled_step, _w3_compiled_step  # noqa: E402


def _timed(fn):
    gc.collect()
    w0, c0 = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - w0, time.thread_time() - c0


def _workload(name, tg, F):
    if name == "W2":
        params, X, y = C.mlp_data()
        eager = tapegrad_.w2_mlp({}, params, X, y, C.LR)["step"]

        def fresh():
            return _w2_compiled_step(tg, F, params, X, y, C.LR)

        return eager, fresh, (X[:128], y[:128])
    params, X, y = C.cnn_data()
    eager = tapegrad_.w3_cnn({}, params, X, y, C.LR)["step"]

    def fresh3():
        run = _w3_compiled_step(tg, F, params, X, y, C.LR)
        return run, None

    return eager, fresh3, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--profile", choices=("W2", "W3"))
    parser.add_argument("-w", nargs="+", default=["W2", "W3"], choices=("W2", "W3"))
    parser.add_argument(
        "--ab",
        action="store_true",
        help="alternate with traces whose matmul checks run at full size (SIZE_FREE empty)",
    )
    parser.add_argument("--ab-reversed", action="store_true", help="--ab, that variant first")
    args = parser.parse_args()
    tapegrad_.setup({})
    tg, F = tapegrad_.tg, tapegrad_.F
    from tapegrad.compile import inline

    forget = getattr(inline, "forget_verdicts", lambda: None)  # (older trees have no memo)
    if args.profile:
        eager, fresh, _ = _workload(args.profile, tg, F)
        for _ in range(3):
            eager()
        run, _ = fresh()
        prof = cProfile.Profile(time.thread_time)
        prof.enable()
        run()
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(45)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    for name in args.w:
        eager, fresh, second = _workload(name, tg, F)
        for _ in range(3):
            eager()
        variants = {"checks as built": getattr(inline, "SIZE_FREE", frozenset())}
        if args.ab or args.ab_reversed:
            variants["full-size checks"] = frozenset()
            if args.ab_reversed:
                variants = dict(reversed(variants.items()))
        rows = {v: ([], [], [], [], []) for v in variants}
        for _ in range(args.rounds):
            for variant, size_free in variants.items():
                ratios_wall, ratios_cpu, trace_ms, eager_ms, second_ms = rows[variant]
                inline.SIZE_FREE = size_free
                forget()  # each round's trace is a process's first (no memoized check)
                run, step = fresh()
                tw, tc = _timed(run)
                ew, ec = _timed(eager)
                if second is not None:
                    xs, ys = second
                    x2, y2 = tg.from_numpy(xs), tg.from_numpy(ys)
                    sw, _ = _timed(functools.partial(step, x2, y2))
                    second_ms.append(sw * 1e3)
                ratios_wall.append(tw / ew)
                ratios_cpu.append(tc / ec)
                trace_ms.append(tw * 1e3)
                eager_ms.append(ew * 1e3)
                del run, step
        for variant, (ratios_wall, ratios_cpu, trace_ms, eager_ms, second_ms) in rows.items():
            print(
                f"{name} [{variant}]: trace {min(trace_ms):.1f}-{max(trace_ms):.1f} ms, warm "
                f"eager step {min(eager_ms):.1f}-{max(eager_ms):.1f} ms; trace / eager step: "
                f"wall min {min(ratios_wall):.2f} median {statistics.median(ratios_wall):.2f}, "
                f"cpu min {min(ratios_cpu):.2f} median {statistics.median(ratios_cpu):.2f}"
            )
            if second_ms:
                print(
                    f"{name} [{variant}]: a second signature (batch 128) traced after it: "
                    f"{min(second_ms):.1f}-{max(second_ms):.1f} ms"
                )


if __name__ == "__main__":
    main()
