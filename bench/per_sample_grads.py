"""Per-sample gradients of an MLP and of a CNN: tg.func.vmap(grad(f)) against the Python loop
over samples and against torch.func (when installed). Prints ms per batch and the ratios.

The CNN part (conv, ReLU, max pool, group norm, adaptive average pool, linear) also times
vmap without the convolution/pooling/normalisation batching rules (each of those ops looped
per sample inside the batched run, as before Stop 18): CPU time of this thread
(`time.thread_time`), minima over repeats, the two variants alternating in one process.

    PYTHONPATH=src python bench/per_sample_grads.py
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np

import tapegrad as tg
from tapegrad import func as F
from tapegrad.func import batched_replay, batching, batching_nn

BATCH, D_IN, HIDDEN, D_OUT, REPEATS = 32, 64, 128, 10, 5
CNN_REPEATS = 15


def _best(fn):
    fn()
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    y_np = rng.integers(0, D_OUT, BATCH)
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(D_IN, HIDDEN), tg.nn.ReLU(), tg.nn.Linear(HIDDEN, D_OUT))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = tg.tensor(x_np), tg.tensor(y_np)

    def loss(p, xb, yb):
        return tg.nn.functional.cross_entropy(F.functional_call(model, p, (xb[None],)), yb[None])

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))

    def loop():
        out = []
        for i in range(BATCH):
            model.zero_grad()
            tg.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
            out.append([p.grad for p in model.parameters()])
        return out

    t_vmap = _best(lambda: per_sample(params, x, y))
    t_loop = _best(loop)
    print(
        f"tg vmap(grad): {t_vmap:.2f} ms   tg loop: {t_loop:.2f} ms   "
        f"vmap/loop = {t_vmap / t_loop:.2f}"
    )
    try:
        import torch
    except ImportError:
        return
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    tm = torch.nn.Sequential(
        torch.nn.Linear(D_IN, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, D_OUT)
    )
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

    def tloss(p, xb, yb):
        return torch.nn.functional.cross_entropy(
            torch.func.functional_call(tm, p, (xb[None],)), yb[None]
        )

    t_torch = _best(
        lambda: torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(tp, tx, ty)
    )
    print(f"torch.func vmap(grad): {t_torch:.2f} ms   tg vmap / torch = {t_vmap / t_torch:.1f}")


@contextlib.contextmanager
def _without_nn_rules():
    """vmap as before Stop 18: no batching rule for conv/pool/norm ops (they are looped)."""
    removed = {n: r for n, r in batching.RULES.items() if r.__module__ == batching_nn.__name__}
    for n in removed:
        del batching.RULES[n]
    try:
        yield
    finally:
        batching.RULES.update(removed)


def _cpu_ms(fn):
    t0 = time.thread_time()
    fn()
    return (time.thread_time() - t0) * 1e3


def cnn(norm: str) -> None:
    """norm "group": GroupNorm(4, 32); "batch": BatchNorm2d(32) in eval mode (without the
    rules, vmap ran that whole function per sample)."""
    tg.set_num_threads(1)  # CPU time of this thread is then all the work (BLAS included)
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32)
    y_np = rng.integers(0, D_OUT, BATCH)
    tg.manual_seed(0)
    model = tg.nn.Sequential(
        tg.nn.Conv2d(1, 16, 3, padding=1),
        tg.nn.ReLU(),
        tg.nn.MaxPool2d(2),
        tg.nn.Conv2d(16, 32, 3, padding=1),
        tg.nn.GroupNorm(4, 32) if norm == "group" else tg.nn.BatchNorm2d(32),
        tg.nn.ReLU(),
        tg.nn.AdaptiveAvgPool2d(4),
        tg.nn.Flatten(),
        tg.nn.Linear(32 * 16, D_OUT),
    )
    if norm == "batch":
        model.eval()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = tg.tensor(x_np), tg.tensor(y_np)

    def loss(p, xb, yb):
        return tg.nn.functional.cross_entropy(F.functional_call(model, p, (xb[None],)), yb[None])

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))

    def loop():
        for i in range(BATCH):
            model.zero_grad()
            tg.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()

    def before():
        with _without_nn_rules():
            per_sample(params, x, y)

    per_sample(params, x, y)
    assert batched_replay.fallback_reason() is None and batched_replay.looped_ops() == []
    before()
    looped = sorted(set(batched_replay.looped_ops()))
    how = (
        f"per sample: {batched_replay.fallback_reason()}"
        if batched_replay.fallback_reason()
        else f"looped {', '.join(looped)}"
    )
    times = {"rules": [], "no rules": [], "loop": []}
    for _ in range(CNN_REPEATS):  # alternating, so drifting load hits both alike
        times["rules"].append(_cpu_ms(lambda: per_sample(params, x, y)))
        times["no rules"].append(_cpu_ms(before))
        times["loop"].append(_cpu_ms(loop))
    t_new, t_old, t_loop = (min(times[k]) for k in ("rules", "no rules", "loop"))

    def batch_step():  # the plain (not per-sample) gradient of the whole batch: the floor
        model.zero_grad()
        tg.nn.functional.cross_entropy(model(x), y).backward()

    t_step = min(_cpu_ms(batch_step) for _ in range(CNN_REPEATS))
    print(
        f"CNN ({norm} norm) tg vmap(grad) with rules: {t_new:.1f} ms   without ({how}): "
        f"{t_old:.1f} ms   speed-up {t_old / t_new:.1f}x   tg loop: {t_loop:.1f} ms   "
        f"vmap/loop = {t_new / t_loop:.2f}   one batch gradient: {t_step:.1f} ms  "
        "(CPU ms of this thread, 1 BLAS thread)"
    )
    try:
        import torch
    except ImportError:
        return
    if norm != "group":
        return
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    tm = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1),
        torch.nn.GroupNorm(4, 32),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4),
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 16, D_OUT),
    )
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

    def tloss(p, xb, yb):
        return torch.nn.functional.cross_entropy(
            torch.func.functional_call(tm, p, (xb[None],)), yb[None]
        )

    t_per_sample = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))
    t_per_sample(tp, tx, ty)
    t_torch = min(_cpu_ms(lambda: t_per_sample(tp, tx, ty)) for _ in range(CNN_REPEATS))
    print(
        f"CNN (group norm) torch.func vmap(grad): {t_torch:.1f} ms   tg vmap / torch = {t_new / t_torch:.1f}"
    )


if __name__ == "__main__":
    main()
    cnn("group")
    cnn("batch")
