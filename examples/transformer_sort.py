"""A small Transformer encoder that learns to sort sequences of digits.

    python examples/transformer_sort.py [--steps 1000] [--length 8] [--seed 0] [--compile]

Token + learned position embeddings -> 2 TransformerEncoderLayers (self-attention sees the
whole sequence) -> a Linear head predicting, at each position, the digit that belongs
there once sorted. Reports the per-token and whole-sequence accuracy on fresh sequences.
"""

from __future__ import annotations

import argparse

import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn


class Sorter(nn.Module):
    def __init__(self, vocab: int, length: int, d_model: int = 64, nhead: int = 4, layers: int = 2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(length, d_model)
        self.layers = nn.ModuleList(
            [
                nn.TransformerEncoderLayer(
                    d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
                )
                for _ in range(layers)
            ]
        )
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("positions", tg.arange(length))

    def forward(self, x):
        h = self.tok(x) + self.pos(self.positions)
        for layer in self.layers:
            h = layer(h)
        return self.head(h)


def batch(rng, n: int, length: int, vocab: int):
    x = rng.integers(0, vocab, size=(n, length))
    return tg.tensor(x), tg.tensor(np.sort(x, axis=1))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    count = tg.utils.cli.positive_int  # --epochs 0 is a usage error, not a traceback
    p.add_argument("--steps", type=count, default=1000, help="training steps")
    p.add_argument("--length", type=int, default=8, help="sequence length")
    p.add_argument("--vocab", type=int, default=10, help="distinct tokens (digits)")
    p.add_argument("--batch-size", type=int, default=64)
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
        help="compute the loss under tg.compile (the forward is replayed; "
        "backward, gradient clipping and the step stay eager: clipping "
        "reads the gradients)",
    )
    args = p.parse_args(argv)
    tg.threads.apply_thread_policy(args.threads)  # one BLAS thread: small matrices

    tg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = Sorter(args.vocab, args.length)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    warm = max(1, min(100, args.steps // 10))
    sched = tg.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.05, 1 - s / max(1, args.steps))
    )

    def loss_of(x, y):
        return F.cross_entropy(model(x).reshape(-1, args.vocab), y.reshape(-1))

    if args.compile:
        loss_of = tg.compile(loss_of)
    losses = []
    for step in range(1, args.steps + 1):
        x, y = batch(rng, args.batch_size, args.length, args.vocab)
        loss = loss_of(x, y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == args.steps:
            print(f"step {step:>5}  loss {loss.item():.4f}")

    model.eval()
    x, y = batch(rng, 1000, args.length, args.vocab)
    with tg.no_grad():
        pred = model(x).argmax(dim=-1).numpy()
    token_acc = float((pred == y.numpy()).mean())
    seq_acc = float((pred == y.numpy()).all(axis=1).mean())
    print(f"held-out: token accuracy {token_acc:.2%}, whole sequences sorted {seq_acc:.2%}")
    print(f"example: {x.numpy()[0].tolist()} -> {pred[0].tolist()}")
    return {"loss": loss.item(), "token_acc": token_acc, "seq_acc": seq_acc, "losses": losses}


if __name__ == "__main__":
    main()
