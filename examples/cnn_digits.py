"""Train a small CNN on the 8x8 handwritten digits, written as a Module subclass.

    python examples/cnn_digits.py [--epochs 8] [--steps N] [--seed 0] [--save ck.safetensors]
                                  [--compile]

Conv -> BatchNorm -> ReLU blocks, max-pooling, dropout, AdamW with a linear warm-up then
cosine decay, and a safetensors checkpoint (model + optimizer) that is reloaded at the end.
With --compile each training step runs under tg.compile: dropout's masks are drawn afresh
at every replay from the same generator, so the run equals the eager one for a seed.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import tempfile

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.25)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))  # 8x8 -> 4x4
        x = self.drop(x.flatten(1))
        return self.fc2(F.relu(self.fc1(x)))


def accuracy(model, x, y) -> float:
    model.eval()
    with tg.no_grad():
        acc = (model(x).argmax(dim=1) == y).float().mean().item()
    model.train()
    return acc


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    count = tg.utils.cli.positive_int  # --epochs 0 is a usage error, not a traceback
    p.add_argument("--epochs", type=count, default=8, help="passes over the training set")
    p.add_argument("--steps", type=count, default=None, help="stop after this many batches")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="checkpoint path (default: a temporary file)")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="BLAS threads (default: $TAPEGRAD_NUM_THREADS, else 1; see docs/performance.md)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="run each training step under tg.compile (traced once per batch shape, then replayed)",
    )
    args = p.parse_args(argv)
    tg.threads.apply_thread_policy(args.threads)  # one BLAS thread: small matrices

    tg.manual_seed(args.seed)
    data = tg.data.digits_dataset()  # (1, 8, 8) images
    train, test = tg.data.random_split(data, [0.8, 0.2], seed=args.seed)
    loader = tg.data.DataLoader(train, batch_size=32, shuffle=True, seed=args.seed)
    x_test, y_test = next(iter(tg.data.DataLoader(test, batch_size=len(test))))

    model = Net()
    opt = tg.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    total = args.epochs * len(loader)
    warmup = tg.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=len(loader))

    def train_step(x, y):
        opt.zero_grad()  # first: a compiled step starts with it
        loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
        loss.backward()
        opt.step()
        return loss

    # the learning-rate changes below happen outside the step; its replay reads them
    run_step = tg.compile(train_step) if args.compile else train_step
    step, losses = 0, []
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = run_step(x, y)
            losses.append(loss.item())
            if step < len(loader):
                warmup.step()
            else:  # cosine decay after the warm-up, written out by hand
                frac = (step - len(loader)) / max(1, total - len(loader))
                for g in opt.param_groups:
                    g["lr"] = 3e-3 * 0.5 * (1 + math.cos(math.pi * frac))
            step += 1
            if args.steps is not None and step >= args.steps:
                break
        acc = accuracy(model, x_test, y_test)
        print(f"epoch {epoch + 1:>2}  loss {loss.item():.4f}  test accuracy {acc:.2%}")
        if args.steps is not None and step >= args.steps:
            break

    with contextlib.ExitStack() as scratch:  # without --save: a folder removed at the end
        folder = scratch.enter_context(tempfile.TemporaryDirectory()) if not args.save else ""
        path = args.save or os.path.join(folder, "cnn_digits.safetensors")
        tg.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": step}, path)
        ck = tg.load(path)
    fresh = Net()
    fresh.load_state_dict(ck["model"])
    reloaded = accuracy(fresh, x_test, y_test)
    print(f"saved {args.save}; " if args.save else "checkpoint saved and reloaded; ", end="")
    print(f"reloaded model: test accuracy {reloaded:.2%}")
    return {
        "loss": loss.item(),
        "test_acc": acc,
        "reload_acc": reloaded,
        "steps": step,
        "losses": losses,
    }


if __name__ == "__main__":
    main()
