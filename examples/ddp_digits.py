"""Data-parallel training of the digits MLP over MPI with DistributedDataParallel.

    mpiexec -n 2 python examples/ddp_digits.py [--epochs 10] [--steps N] [--seed 0] [--compile]
    python examples/ddp_digits.py              # the same script, a world of one process

(Open MPI as root also wants `--allow-run-as-root`; `--oversubscribe` for more processes
than cores.) Every process builds the model, DDP copies rank 0's weights to all, each
process trains on its own shard of the training set (every world-size-th sample) with a
per-process batch of global_batch / N, and backward averages the gradients, so all
processes take the same optimizer steps and keep identical models. Needs mpi4py only when
started with more than one process: `pip install tapegrad[mpi]`. With --compile each
training step runs under tg.compile; every replay arms DDP's averaging again, so the
replayed backward all-reduces the gradients as the eager one does.
"""

from __future__ import annotations

import argparse

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist
import tapegrad.nn.functional as F
from tapegrad import nn


def shard(dataset, rank: int, world: int):
    """This rank's part: samples rank, rank + world, ...; every rank gets as many (the
    samples left over by an uneven split are dropped), so all ranks run the same number
    of steps: a rank with one more backward than the others would wait for them forever."""
    usable = len(dataset) - len(dataset) % world
    return tg.data.Subset(dataset, list(range(rank, usable, world)))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    count = tg.utils.cli.positive_int  # --epochs 0 is a usage error, not a traceback
    p.add_argument("--epochs", type=count, default=10, help="passes over the training set")
    p.add_argument("--steps", type=count, default=None, help="stop after this many steps")
    p.add_argument("--batch-size", type=int, default=64, help="global batch (all processes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="BLAS threads (default: $TAPEGRAD_NUM_THREADS, else 1; see docs/performance.md)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="run each training step under tg.compile (traced once, then replayed)",
    )
    args = p.parse_args(argv)
    tg.threads.apply_thread_policy(args.threads)  # one BLAS thread: small matrices

    dist.init()
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} is not divisible by {world} processes")

    def log(msg: str) -> None:
        if rank == 0:
            print(msg, flush=True)

    data = tg.data.digits_dataset(flatten=True)
    # the same seed on every rank: the same train/test split everywhere
    train, test = tg.data.random_split(data, [0.8, 0.2], seed=args.seed)
    mine = shard(train, rank, world)
    loader = tg.data.DataLoader(
        mine,
        batch_size=args.batch_size // world,
        shuffle=True,
        drop_last=True,
        seed=args.seed + rank,
    )
    x_test, y_test = next(iter(tg.data.DataLoader(test, batch_size=len(test))))

    tg.manual_seed(args.seed + rank)  # different on purpose: DDP broadcasts rank 0's weights
    net = nn.Sequential(
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )
    model = dist.DistributedDataParallel(net)
    opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    log(
        f"{world} process(es), {len(mine)} training samples each, "
        f"batch {args.batch_size // world} per process"
    )

    def train_step(x, y):
        opt.zero_grad()  # first: a compiled step starts with it
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # gradients averaged over the processes here
        opt.step()
        return loss

    run_step = tg.compile(train_step) if args.compile else train_step
    step, loss, acc, mean_loss, losses = 0, None, 0.0, None, []
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = run_step(x, y)
            losses.append(loss.item())
            step += 1
            if args.steps is not None and step >= args.steps:
                break
        # every rank holds the same model; each one evaluates, rank 0 prints
        with tg.no_grad():
            acc = (net(x_test).argmax(dim=1) == y_test).float().mean().item()
        mean_loss = dist.all_reduce(loss.detach().clone(), op="mean").item()
        log(
            f"epoch {epoch + 1:>2}  loss {mean_loss:.4f} (mean over processes)  "
            f"test accuracy {acc:.2%}"
        )
        if args.steps is not None and step >= args.steps:
            break

    # the replicas must agree bit for bit: compare every rank's weights with rank 0's
    flat = tg.tensor(np.concatenate([p.detach().numpy().ravel() for p in net.parameters()]))
    spread = max(float(np.abs(g.numpy() - flat.numpy()).max()) for g in dist.all_gather(flat))
    log(f"largest difference between replicas: {spread}")
    return {
        "rank": rank,
        "world": world,
        "steps": step,
        "loss": mean_loss,
        "test_acc": acc,
        "spread": spread,
        "losses": losses,
    }


if __name__ == "__main__":
    main()
