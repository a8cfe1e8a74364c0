"""W3's layers one at a time, forward and backward, tapegrad next to PyTorch (if installed).

    PYTHONPATH=src python bench/conv_layers.py

Each layer of the W3 CNN (batch 64, 28x28) alone: conv3x3 1->16, relu, max_pool 2x2,
conv3x3 16->32, relu, max_pool 2x2, with the input requiring grad (as inside the network,
except the first conv, whose input needs none). Milliseconds, median of 15 after warm-up,
both frameworks on 2 threads. Quote ratios from one run: the machine is shared.
"""
from __future__ import annotations

import functools
import statistics
import time

import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F

REPEATS = 15


def _median_ms(fn) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _layers(rng):
    x1 = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    x2 = rng.standard_normal((64, 16, 14, 14)).astype(np.float32)
    w1 = (rng.standard_normal((16, 1, 3, 3)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32)
    b1, b2 = np.zeros(16, np.float32), np.zeros(32, np.float32)
    h1 = rng.standard_normal((64, 16, 28, 28)).astype(np.float32)
    h2 = rng.standard_normal((64, 32, 14, 14)).astype(np.float32)
    return [  # name, inputs, whether the first input needs a gradient, layer(F, *inputs)
        ("conv1 1->16", (x1, w1, b1), False, lambda f, x, w, b: f.conv2d(x, w, b, padding=1)),
        ("relu1", (h1,), True, lambda f, x: f.relu(x)),
        ("pool1", (h1,), True, lambda f, x: f.max_pool2d(x, 2)),
        ("conv2 16->32", (x2, w2, b2), True, lambda f, x, w, b: f.conv2d(x, w, b, padding=1)),
        ("relu2", (h2,), True, lambda f, x: f.relu(x)),
        ("pool2", (h2,), True, lambda f, x: f.max_pool2d(x, 2)),
    ]


def _time(make, layer, arrays, x_grad):
    def forward():
        ts = [make(a, i > 0 or x_grad) for i, a in enumerate(arrays)]
        return ts, layer(*ts)

    def both():
        _, y = forward()
        y.sum().backward()

    return _median_ms(forward), _median_ms(both)


def main() -> None:
    rng = np.random.default_rng(0)
    tg.set_num_threads(2)
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    print(f"{'layer':<14} {'tapegrad fwd':>13} {'fwd+bwd':>9} {'torch fwd':>10} {'fwd+bwd':>9}")
    for name, arrays, x_grad, layer in _layers(rng):
        tf, tb = _time(lambda a, rg: tg.tensor(a, requires_grad=rg),
                       functools.partial(layer, F), arrays, x_grad)
        row = f"{name:<14} {tf:13.2f} {tb:9.2f}"
        if torch is not None:
            tfn = torch.nn.functional
            pf, pb = _time(lambda a, rg: torch.tensor(a, requires_grad=rg),
                           functools.partial(layer, tfn), arrays, x_grad)
            row += f" {pf:10.2f} {pb:9.2f}"
        print(row)


if __name__ == "__main__":
    main()
