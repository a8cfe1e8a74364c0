"""W1's op mix on a 16-element tensor, per op: forward (record) and backward, separately.

    PYTHONPATH=src python bench/dispatch_overhead.py

The minimum over many repeats: on a shared machine the minimum is the least noisy estimate
of the interpreter's own cost per op (what the dispatcher and engine spend on bookkeeping).
"""
from __future__ import annotations

import time

import numpy as np

import tapegrad as tg

OPS = [("mul", 1.01), ("add", 0.1), ("tanh", None), ("expscaled", 0.1), ("sin", None)] * 40


def forward(x0: np.ndarray) -> tuple[tg.Tensor, tg.Tensor]:
    x = tg.tensor(x0, requires_grad=True)
    h = x
    for kind, c in OPS:
        if kind == "mul":
            h = h * c
        elif kind == "add":
            h = h + c
        elif kind == "tanh":
            h = h.tanh()
        elif kind == "expscaled":
            h = (h * c).exp()
        else:
            h = h.sin()
    return x, h.sum()


def main() -> None:
    x0 = np.linspace(-1, 1, 16, dtype=np.float32)
    n_ops = len(OPS) + sum(k == "expscaled" for k, _ in OPS) + 1
    fwd, bwd = [], []
    for _ in range(300):
        t0 = time.perf_counter()
        x, y = forward(x0)
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
    f, b = min(fwd) / n_ops * 1e6, min(bwd) / n_ops * 1e6
    print(f"per recorded op: forward {f:.2f} us, backward {b:.2f} us, total {f + b:.2f} us")


if __name__ == "__main__":
    main()
