"""A character-level LSTM language model on Shakespeare's sonnets (examples/data/sonnets.txt).

    python examples/char_lstm.py [--steps 500] [--seed 0] [--sample 300] [--compile]

Embedding -> 2-layer LSTM (batch_first) -> Linear over the characters, trained with Adam and
gradient clipping on random 32-character windows; the LSTM's cell loop runs in Python, so
every step builds a fresh (dynamic) graph. At the end it samples text from the model.
With --compile the loss runs under tg.compile: the cell loop is traced once (the LSTM's
custom Functions replayed as calls) and its forward and backward replayed; the gradient
clipping and Adam's step stay eager (clipping reads the gradients).
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad import nn

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sonnets.txt")


class CharLM(nn.Module):
    def __init__(self, vocab: int, embed: int = 32, hidden: int = 128, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


def sample(model, stoi, itos, prompt: str, n: int, temperature: float, rng) -> str:
    """Generate `n` characters after `prompt`, feeding the LSTM state forward."""
    model.eval()
    chars = list(prompt)
    with tg.no_grad():
        logits, state = model(tg.tensor([[stoi[c] for c in prompt]]))
        for _ in range(n):
            z = logits.detach().numpy()[0, -1] / temperature
            p = np.exp(z - z.max())
            nxt = int(rng.choice(len(p), p=p / p.sum()))
            chars.append(itos[nxt])
            logits, state = model(tg.tensor([[nxt]]), state)
    model.train()
    return "".join(chars)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    count = tg.utils.cli.positive_int  # --epochs 0 is a usage error, not a traceback
    p.add_argument("--steps", type=count, default=500, help="training steps")
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample", type=int, default=300, help="characters to generate at the end")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="BLAS threads (default: $TAPEGRAD_NUM_THREADS, else 1; see docs/performance.md)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="compute the loss under tg.compile (forward and backward replayed; "
        "clipping and the step stay eager)",
    )
    args = p.parse_args(argv)
    tg.threads.apply_thread_policy(args.threads)  # one BLAS thread: small matrices

    with open(TEXT, encoding="utf-8") as f:
        text = f.read()
    itos = sorted(set(text))
    stoi = {c: i for i, c in enumerate(itos)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    print(f"{len(text)} characters, vocabulary of {len(itos)}")

    tg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = CharLM(len(itos))
    opt = tg.optim.Adam(model.parameters(), lr=3e-3)
    sched = tg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps, eta_min=3e-4)
    T, B = args.seq_len, args.batch_size

    def loss_of(x, y):
        logits, _ = model(x)
        return F.cross_entropy(logits.reshape(B * T, -1), y.reshape(B * T))

    if args.compile:
        loss_of = tg.compile(loss_of)
    losses = []
    for step in range(1, args.steps + 1):
        starts = rng.integers(0, len(data) - T - 1, size=B)
        windows = np.stack([data[s : s + T + 1] for s in starts])
        x, y = tg.tensor(windows[:, :-1]), tg.tensor(windows[:, 1:])
        loss = loss_of(x, y)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 50 == 0 or step == args.steps:
            print(
                f"step {step:>4}  loss {loss.item():.3f}  "
                f"(perplexity {math.exp(loss.item()):.1f}; uniform would be {len(itos)})"
            )
    text_out = sample(model, stoi, itos, "Shall I ", args.sample, 0.8, rng) if args.sample else ""
    if text_out:
        print("-" * 60 + "\n" + text_out + "\n" + "-" * 60)
    return {"loss": loss.item(), "vocab": len(itos), "sample": text_out, "losses": losses}


if __name__ == "__main__":
    main()
