"""Run by tests/distributed/test_mpi.py under `mpiexec -n 2 python _mpi_worker.py OUT_DIR`.

Each rank writes OUT_DIR/rank{r}.npz with what it saw; the test checks the values.
"""

from __future__ import annotations

import sys

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist
import tapegrad.nn.functional as F
from tapegrad import nn

GLOBAL_BATCH = 8


def data():
    """The global batch every rank knows; each rank trains on its half."""
    rng = np.random.default_rng(123)
    x = rng.standard_normal((GLOBAL_BATCH, 4)).astype(np.float32)
    y = rng.standard_normal((GLOBAL_BATCH, 3)).astype(np.float32)
    return x, y


def build(seed: int) -> nn.Module:
    tg.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))


def params_of(model) -> list:
    return [p.detach().numpy().copy() for p in model.parameters()]


def ddp_step(rank, size, out, tag, **ddp_kwargs):
    model = build(seed=100 + rank)  # different on every rank: DDP must broadcast rank 0's
    ddp = dist.DistributedDataParallel(model, **ddp_kwargs)
    for i, p in enumerate(params_of(model)):
        out[f"{tag}_init{i}"] = p
    out[f"{tag}_buckets"] = np.array(len(ddp.reducer.buckets))
    x, y = data()
    shard = slice(rank * GLOBAL_BATCH // size, (rank + 1) * GLOBAL_BATCH // size)
    opt = tg.optim.SGD(ddp.parameters(), lr=0.1)
    opt.zero_grad()
    F.mse_loss(ddp(tg.tensor(x[shard])), tg.tensor(y[shard])).backward()
    opt.step()
    for i, p in enumerate(params_of(model)):
        out[f"{tag}_after{i}"] = p


def ddp_no_sync(rank, size, out):
    """Two micro-batches per rank: the first under no_sync, the second synchronised."""
    model = build(seed=7)
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=1e-4)
    x, y = data()
    half = GLOBAL_BATCH // size // 2
    base = rank * GLOBAL_BATCH // size
    with ddp.no_sync():
        lo = slice(base, base + half)
        F.mse_loss(ddp(tg.tensor(x[lo])), tg.tensor(y[lo])).backward()
    local = [p.grad.numpy().copy() for p in model.parameters()]
    hi = slice(base + half, base + 2 * half)
    F.mse_loss(ddp(tg.tensor(x[hi])), tg.tensor(y[hi])).backward()
    for i, (p, g) in enumerate(zip(model.parameters(), local, strict=True)):
        out[f"nosync_local{i}"] = g
        out[f"nosync_grad{i}"] = p.grad.numpy().copy()


def unused(rank, out):
    """A parameter that takes no part in the loss: fine with find_unused_parameters."""

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.used = nn.Linear(4, 2)
            self.spare = nn.Linear(4, 2)

        def forward(self, x):
            return self.used(x)

    tg.manual_seed(3)
    model = TwoHeads()
    ddp = dist.DistributedDataParallel(model, find_unused_parameters=True)
    x, _ = data()
    ddp(tg.tensor(x[rank : rank + 1])).sum().backward()
    out["unused_used_grad"] = model.used.weight.grad.numpy().copy()
    out["unused_spare_grad_is_zero"] = np.array(
        model.spare.weight.grad is not None and not model.spare.weight.grad.numpy().any()
    )
    # without the flag the next forward says what went wrong
    strict = dist.DistributedDataParallel(TwoHeads())
    strict(tg.tensor(x[:1])).sum().backward()
    try:
        strict(tg.tensor(x[:1]))
    except RuntimeError as e:
        out["unused_error"] = np.array(str(e))


def collectives(rank, size, out):
    t = tg.tensor([1.0 + rank, 10.0 * rank])
    out["sum"] = dist.all_reduce(t.clone(), op="sum").numpy()
    out["mean"] = dist.all_reduce(t.clone(), op="MEAN").numpy()
    out["max"] = dist.all_reduce(t.clone(), op="max").numpy()
    b = tg.tensor([float(rank), -1.0 * rank])
    out["bcast"] = dist.broadcast(b, src=size - 1).numpy()
    out["gather"] = np.stack([g.numpy() for g in dist.all_gather(tg.tensor([rank, rank * 2]))])
    filled = [tg.zeros(1) for _ in range(size)]
    dist.all_gather(filled, tg.tensor([rank + 0.5]))
    out["gather_into"] = np.concatenate([f.numpy() for f in filled])
    # dtypes MPI has no type or arithmetic for
    out["f16"] = dist.all_reduce(tg.tensor([1.5, rank], dtype=tg.float16), op="mean").numpy()
    flags = tg.tensor([True, rank == 0])
    out["any"] = dist.all_reduce(flags.clone(), op="sum").numpy()
    out["all"] = dist.all_reduce(flags.clone(), op="min").numpy()
    out["bcast16"] = dist.broadcast(tg.tensor([rank + 0.25], dtype=tg.float16), src=1).numpy()
    out["gather_bool"] = np.stack([g.numpy() for g in dist.all_gather(flags)])
    dist.barrier()


def grad_manager(rank, size, out):
    x, y = data()
    shard = slice(rank * GLOBAL_BATCH // size, (rank + 1) * GLOBAL_BATCH // size)
    w = tg.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    gm = tg.autodiff.GradManager().attach([w], callbacks=dist.make_allreduce_cb("mean"))
    with gm:
        loss = ((tg.tensor(x[shard]) @ w - tg.tensor(y[shard])) ** 2).mean()
        gm.backward(loss)
    out["gm_grad"] = w.grad.numpy().copy()


def main(out_dir: str) -> None:
    dist.init()
    rank, size = dist.get_rank(), dist.get_world_size()
    out = {"rank": np.array(rank), "size": np.array(size)}
    collectives(rank, size, out)
    ddp_step(rank, size, out, "one")  # default 25 MB cap: one bucket
    ddp_step(rank, size, out, "tiny", bucket_cap_mb=1e-5)  # ~10 floats: a bucket per tensor
    ddp_no_sync(rank, size, out)
    unused(rank, out)
    grad_manager(rank, size, out)
    np.savez(f"{out_dir}/rank{rank}.npz", **out)


if __name__ == "__main__":
    main(sys.argv[1])
