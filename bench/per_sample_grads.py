"""Per-sample gradients of an MLP: tg.func.vmap(grad(f)) against the Python loop over samples
and against torch.func (when installed). Prints ms per batch and the ratios.

    PYTHONPATH=src python bench/per_sample_grads.py
"""
from __future__ import annotations

import time
import warnings

import numpy as np

import tapegrad as tg
from tapegrad import func as F

BATCH, D_IN, HIDDEN, D_OUT, REPEATS = 32, 64, 128, 10, 5


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
    model = tg.nn.Sequential(tg.nn.Linear(D_IN, HIDDEN), tg.nn.ReLU(),
                             tg.nn.Linear(HIDDEN, D_OUT))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = tg.tensor(x_np), tg.tensor(y_np)

    def loss(p, xb, yb):
        return tg.nn.functional.cross_entropy(F.functional_call(model, p, (xb[None],)), yb[None])

    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))

    def loop():
        out = []
        for i in range(BATCH):
            model.zero_grad()
            tg.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            out.append([p.grad for p in model.parameters()])
        return out

    t_vmap = _best(lambda: per_sample(params, x, y))
    t_loop = _best(loop)
    print(f"tg vmap(grad): {t_vmap:.2f} ms   tg loop: {t_loop:.2f} ms   "
          f"vmap/loop = {t_vmap / t_loop:.2f}")
    try:
        import torch
    except ImportError:
        return
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    tm = torch.nn.Sequential(torch.nn.Linear(D_IN, HIDDEN), torch.nn.ReLU(),
                             torch.nn.Linear(HIDDEN, D_OUT))
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

    def tloss(p, xb, yb):
        return torch.nn.functional.cross_entropy(torch.func.functional_call(tm, p, (xb[None],)),
                                                 yb[None])

    t_torch = _best(lambda: torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(
        tp, tx, ty))
    print(f"torch.func vmap(grad): {t_torch:.2f} ms   tg vmap / torch = {t_vmap / t_torch:.1f}")


if __name__ == "__main__":
    main()
