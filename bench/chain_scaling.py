"""W4 at 10^4, 10^5 (and 10^6 with --big): cost per recorded op and Python memory per op.

    PYTHONPATH=src python bench/chain_scaling.py [--big]

The chain is x = x * 1.0000001 + 0.0 on a (1,) float32 tensor (2 recorded ops per step), as
in the W4 workload. Time per op should not grow with n (the forward is linear when nothing
rescans the live graph); memory is tracemalloc's peak while the graph is alive, per op.
"""
from __future__ import annotations

import sys
import time
import tracemalloc

import tapegrad as tg


def chain(n: int):
    x = tg.ones(1, requires_grad=True)
    h = x
    for _ in range(n):
        h = h * 1.0000001 + 0.0
    return x, h


def timed(n: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    x, h = chain(n)
    t1 = time.perf_counter()
    h.sum().backward()
    t2 = time.perf_counter()
    return (t1 - t0) / (2 * n) * 1e6, (t2 - t1) / (2 * n) * 1e6


def bytes_per_op(n: int) -> float:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    x, h = chain(n)
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del x, h
    return used / (2 * n)


def main() -> None:
    sizes = [10_000, 100_000] + ([1_000_000] if "--big" in sys.argv else [])
    timed(1000)  # warm-up
    for n in sizes:
        fwd, bwd = min(timed(n) for _ in range(3))
        print(f"n={n:>8}: forward {fwd:6.2f} us/op, backward {bwd:6.2f} us/op")
    print(f"Python memory per recorded op (n=10^4): {bytes_per_op(10_000):.0f} bytes")


if __name__ == "__main__":
    main()
