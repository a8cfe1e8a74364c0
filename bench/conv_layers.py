"""W3's layers one at a time, forward and backward, tapegrad next to PyTorch (if installed).

    PYTHONPATH=src python bench/conv_layers.py [--threads 1] [--repeats 30] [--clock cpu|wall]
                                               [--intra-op 1]

Each layer of the W3 CNN (batch 64, 28x28) alone: conv3x3 1->16, relu, max_pool 2x2,
conv3x3 16->32, relu, max_pool 2x2, with the input requiring grad (as inside the network,
except the first conv, whose input needs none), then the whole training step. Two shapes
W3 lacks show the special paths: a 1x1 conv and a depthwise 3x3 conv.

Milliseconds of CPU time of this process (`time.process_time`), minimum over the repeats,
the frameworks interleaved call by call. CPU time, not wall time: on the shared 2-core
machine the wall clock mostly measures the other users, and with one BLAS thread CPU time
is the work done (page faults included, which cost 3-10 us each on these VMs). With more
threads it also counts spin-waiting, so `--clock wall` (perf_counter) is the one to read
there, on a quiet machine only. `--intra-op N` turns tapegrad's intra-op splits on
(ops/parallel.py: whole conv ops over the batch, pools and relu per pass). The last line also gives the page faults of one W3 step
(`getrusage` minflt; ~0 under tapegrad/malloc_policy.py). Quote ratios from one run. For
before/after, run it once per source tree (PYTHONPATH), alternating.
"""

from __future__ import annotations

import argparse
import functools
import resource
import time

import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F


def _layers(rng):
    def arr(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    x1, x2 = arr(64, 1, 28, 28), arr(64, 16, 14, 14)
    w1, w2 = arr(16, 1, 3, 3, scale=0.1), arr(32, 16, 3, 3, scale=0.1)
    b1, b2 = np.zeros(16, np.float32), np.zeros(32, np.float32)
    h1, h2 = arr(64, 16, 28, 28), arr(64, 32, 14, 14)
    x3, w3, w4 = arr(32, 64, 14, 14), arr(64, 64, 1, 1, scale=0.1), arr(64, 1, 3, 3, scale=0.1)

    def conv(f, x, w, b=None, **kw):
        return f.conv2d(x, w, b, **kw)

    return [  # name, inputs, whether the first input needs a gradient, layer(F, *inputs)
        ("conv1 1->16", (x1, w1, b1), False, functools.partial(conv, padding=1)),
        ("relu1", (h1,), True, lambda f, x: f.relu(x)),
        ("pool1", (h1,), True, lambda f, x: f.max_pool2d(x, 2)),
        ("conv2 16->32", (x2, w2, b2), True, functools.partial(conv, padding=1)),
        ("relu2", (h2,), True, lambda f, x: f.relu(x)),
        ("pool2", (h2,), True, lambda f, x: f.max_pool2d(x, 2)),
        ("1x1 64->64", (x3, w3), True, conv),
        ("depthwise 64", (x3, w4), True, functools.partial(conv, padding=1, groups=64)),
    ]


def _layer_calls(make, layer, arrays, x_grad):
    def forward():
        ts = [make(a, i > 0 or x_grad) for i, a in enumerate(arrays)]
        return layer(*ts)

    def both():
        forward().sum().backward()

    return forward, both


def _step_tapegrad(rng):
    params = _step_params(rng)
    p = [tg.tensor(a, requires_grad=True) for a in params[:-2]]
    x, y = tg.from_numpy(params[-2]), tg.from_numpy(params[-1])
    opt = tg.optim.SGD(p, lr=0.01)
    return functools.partial(_step, F, p, x, y, opt)


def _step_torch(torch, rng):
    params = _step_params(rng)
    p = [torch.tensor(a, requires_grad=True) for a in params[:-2]]
    x, y = torch.from_numpy(params[-2]), torch.from_numpy(params[-1])
    opt = torch.optim.SGD(p, lr=0.01)
    return functools.partial(_step, torch.nn.functional, p, x, y, opt)


def _step_params(rng):
    shapes = [(16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (32 * 7 * 7, 10), (10,)]
    params = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    return params + [x, rng.integers(0, 10, 64)]


def _step(f, p, x, y, opt):
    c1w, c1b, c2w, c2b, fw, fb = p
    opt.zero_grad(set_to_none=True)
    h = f.max_pool2d(f.relu(f.conv2d(x, c1w, c1b, padding=1)), 2)
    h = f.max_pool2d(f.relu(f.conv2d(h, c2w, c2b, padding=1)), 2)
    loss = f.cross_entropy(h.reshape(h.shape[0], -1) @ fw + fb, y)
    loss.backward()
    opt.step()


_CLOCK = time.process_time


def _min_ms(calls, repeats):
    """Minimum time of each call (CPU time unless --clock wall), interleaved round by round,
    after two warm-ups."""
    for fn in calls.values():
        fn()
        fn()
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeats):
        for name, fn in calls.items():
            t0 = _CLOCK()
            fn()
            best[name] = min(best[name], _CLOCK() - t0)
    return {k: v * 1e3 for k, v in best.items()}


def _faults_per_call(fn, repeats=10):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeats):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--intra-op", type=int, default=1, help="tapegrad's intra-op threads")
    args = parser.parse_args()
    from tapegrad.ops import parallel

    parallel.set_intra_op_threads(args.intra_op)
    global _CLOCK
    _CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    tg.set_num_threads(args.threads)
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    print(f"{'layer':<14} {'tapegrad fwd':>13} {'fwd+bwd':>9} {'torch fwd':>10} {'fwd+bwd':>9}")
    for name, arrays, x_grad, layer in _layers(rng):
        calls = dict(
            zip(
                ("tf", "tb"),
                _layer_calls(
                    lambda a, rg: tg.tensor(a, requires_grad=rg),
                    functools.partial(layer, F),
                    arrays,
                    x_grad,
                ),
                strict=True,
            )
        )
        if torch is not None:
            calls.update(
                zip(
                    ("pf", "pb"),
                    _layer_calls(
                        lambda a, rg: torch.tensor(a, requires_grad=rg),
                        functools.partial(layer, torch.nn.functional),
                        arrays,
                        x_grad,
                    ),
                    strict=True,
                )
            )
        t = _min_ms(calls, args.repeats)
        row = f"{name:<14} {t['tf']:13.2f} {t['tb']:9.2f}"
        if torch is not None:
            row += f" {t['pf']:10.2f} {t['pb']:9.2f}"
        print(row)
    steps = {"tapegrad": _step_tapegrad(rng)}
    if torch is not None:
        steps["torch"] = _step_torch(torch, rng)
    t = _min_ms(steps, args.repeats)
    print("W3 step       " + "  ".join(f"{k} {v:.2f}" for k, v in t.items()))
    faults = {k: _faults_per_call(fn) for k, fn in steps.items()}
    print("page faults   " + "  ".join(f"{k} {v:.0f}" for k, v in faults.items()))


if __name__ == "__main__":
    main()
