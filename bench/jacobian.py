"""Jacobians and Hessians of a small MLP-like function: tg.func.jacrev / jacfwd / hessian and
`vmap(vjp_fn)` against torch.func (when installed). CPU time of this thread
(`time.thread_time`), minima over repeats, one BLAS thread. Prints ms per call and the
ratio to torch.func, and checks tapegrad's values against torch's.

    PYTHONPATH=src python bench/jacobian.py
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import time  # noqa: E402

import numpy as np  # noqa: E402

import tapegrad as tg  # noqa: E402
from tapegrad import func as F  # noqa: E402
from tapegrad.func import batched_replay  # noqa: E402

D_IN, HIDDEN, D_OUT, REPEATS = 32, 64, 16, 30


def _best(fn) -> float:
    fn()
    times = []
    for _ in range(REPEATS):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    return min(times) * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((HIDDEN, D_IN)) / 4
    b1 = rng.standard_normal(HIDDEN) / 4
    w2 = rng.standard_normal((D_OUT, HIDDEN)) / 4
    x_np = rng.standard_normal(D_IN)

    W1, B1, W2 = tg.tensor(w1), tg.tensor(b1), tg.tensor(w2)

    def f(x):
        return tg.tanh(tg.relu(x @ W1.T + B1) @ W2.T)

    def loss(x):
        return (f(x) ** 2).sum()

    x = tg.tensor(x_np)
    e = tg.eye(D_OUT, dtype=x.dtype)
    W1p = tg.tensor(w1, requires_grad=True)  # a captured parameter (an nn layer's weight)

    def f_param(x):
        return tg.tanh(tg.relu(x @ W1p.T + B1) @ W2.T)

    def vmap_vjp():
        _, vjp_fn = F.vjp(f, x)
        return F.vmap(vjp_fn)(e)[0]

    cases = {
        "jacrev": lambda: F.jacrev(f)(x),
        "jacrev(param)": lambda: F.jacrev(f_param)(x),
        "jacfwd": lambda: F.jacfwd(f)(x),
        "hessian": lambda: F.hessian(loss)(x),
        "vmap(vjp_fn)": vmap_vjp,
    }
    ours = {}
    for name, fn in cases.items():
        t = _best(fn)
        batched_replay._active.why = "no vmap ran"  # (a loop of vjps/jvps, before Stop 25)
        ours[name] = (t, fn().detach().numpy(), batched_replay.fallback_reason())

    theirs: dict[str, tuple[float, np.ndarray]] = {}
    try:
        import torch
        import torch.func as tf
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
        tW1, tB1, tW2 = (torch.tensor(a) for a in (w1, b1, w2))

        def tfn(x):
            return torch.tanh(torch.relu(x @ tW1.T + tB1) @ tW2.T)

        def tloss(x):
            return (tfn(x) ** 2).sum()

        tW1p = torch.tensor(w1, requires_grad=True)

        def tfn_param(x):
            return torch.tanh(torch.relu(x @ tW1p.T + tB1) @ tW2.T)

        tx = torch.tensor(x_np)
        te = torch.eye(D_OUT, dtype=tx.dtype)

        def t_vmap_vjp():
            _, vjp_fn = tf.vjp(tfn, tx)
            return tf.vmap(vjp_fn)(te)[0]

        tcases = {
            "jacrev": lambda: tf.jacrev(tfn)(tx),
            "jacrev(param)": lambda: tf.jacrev(tfn_param)(tx),
            "jacfwd": lambda: tf.jacfwd(tfn)(tx),
            "hessian": lambda: tf.hessian(tloss)(tx),
            "vmap(vjp_fn)": t_vmap_vjp,
        }
        for name, fn in tcases.items():
            theirs[name] = (_best(fn), fn().detach().numpy())

    print(f"MLP {D_IN}-{HIDDEN}-{D_OUT} (float64), CPU ms per call, min of {REPEATS}")
    for name, (ms, val, why) in ours.items():
        line = f"  {name:14s} tapegrad {ms:7.2f}"
        if name in theirs:
            t_ms, t_val = theirs[name]
            err = float(np.abs(val - t_val).max())
            line += f"   torch.func {t_ms:6.2f}   ratio {ms / t_ms:5.2f}   max |diff| {err:.1e}"
        line += "   (batched)" if why is None else f"   (per sample: {why})"
        print(line)


if __name__ == "__main__":
    main()
