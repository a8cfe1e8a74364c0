"""WGAN-GP on 2-D toy data: eight Gaussians on a ring.

    python examples/wgan_gp.py [--steps 1500] [--seed 0] [--plot out.png] [--compile]

The critic's gradient penalty, E[(||grad_x D(x_hat)|| - 1)^2], is itself differentiated
when the critic is updated, so its gradient is computed with `create_graph=True`
(a second-order derivative through the whole critic).

With --compile both networks run under tg.compile: their forwards and first-order
backwards are replayed; the penalty's `create_graph=True` gradient runs the critic
eagerly again to record a differentiable graph (tg.compile's rule for higher order), so
the run equals the eager one.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import tapegrad as tg
from tapegrad import nn

CENTERS = np.array(
    [(2 * math.cos(a), 2 * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)],
    dtype=np.float32,
)


def real_batch(rng, n: int):
    c = CENTERS[rng.integers(0, len(CENTERS), size=n)]
    return tg.tensor(c + 0.05 * rng.standard_normal((n, 2)).astype(np.float32))


def mlp(d_in: int, d_out: int, width: int = 128):
    return nn.Sequential(
        nn.Linear(d_in, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, d_out),
    )


def gradient_penalty(critic, real, fake):
    """(||d critic / d x_hat|| - 1)^2 at random points between real and fake samples."""
    eps = tg.rand(real.shape[0], 1)
    x_hat = (eps * real + (1 - eps) * fake.detach()).detach().requires_grad_()
    (g,) = tg.autograd.grad(critic(x_hat).sum(), x_hat, create_graph=True)
    norm = ((g * g).sum(dim=1) + 1e-12).sqrt()
    return ((norm - 1) ** 2).mean()


def mode_stats(points: np.ndarray):
    """How many of the 8 modes are covered, and the share of samples near some mode."""
    d = np.linalg.norm(points[:, None, :] - CENTERS[None], axis=-1)
    near = d.min(axis=1) < 0.3
    covered = len(set(d.argmin(axis=1)[near].tolist()))
    return covered, float(near.mean())


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    count = tg.utils.cli.positive_int  # --epochs 0 is a usage error, not a traceback
    p.add_argument("--steps", type=count, default=1500, help="generator steps")
    p.add_argument("--critic-steps", type=int, default=5, help="critic updates per step")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--width", type=int, default=64, help="hidden units of both networks")
    p.add_argument("--lr", type=float, default=5e-4, help="Adam learning rate of both")
    p.add_argument("--gp", type=float, default=0.1, help="gradient-penalty weight")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default=None, help="save a scatter plot of samples (matplotlib)")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="BLAS threads (default: $TAPEGRAD_NUM_THREADS, else 1; see docs/performance.md)",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="run both networks under tg.compile (the penalty's create_graph gradient "
        "reruns the critic eagerly)",
    )
    args = p.parse_args(argv)
    tg.threads.apply_thread_policy(args.threads)  # one BLAS thread: small matrices

    tg.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    G, D = mlp(2, 2, args.width), mlp(2, 1, args.width)  # noqa: N806  (the usual names)
    opt_g = tg.optim.Adam(G.parameters(), lr=args.lr, betas=(0.5, 0.9))
    opt_d = tg.optim.Adam(D.parameters(), lr=args.lr, betas=(0.5, 0.9))
    if args.compile:  # the modules stay as they are (parameters, optimizers, no_grad use)
        G, D = tg.compile(G), tg.compile(D)  # noqa: N806
    n = args.batch_size
    losses = []
    for step in range(1, args.steps + 1):
        for _ in range(args.critic_steps):
            real = real_batch(rng, n)
            fake = G(tg.randn(n, 2))
            loss_d = D(fake.detach()).mean() - D(real).mean()
            loss_d = loss_d + args.gp * gradient_penalty(D, real, fake)
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
        loss_g = -D(G(tg.randn(n, 2))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        losses.append((loss_d.item(), loss_g.item()))
        if step % 100 == 0 or step == args.steps:
            with tg.no_grad():
                covered, near = mode_stats(G(tg.randn(1000, 2)).numpy())
            print(
                f"step {step:>5}  critic {loss_d.item():+.4f}  generator {loss_g.item():+.4f}  "
                f"modes covered {covered}/8, samples near a mode {near:.0%}"
            )
    with tg.no_grad():
        samples = G(tg.randn(2000, 2)).numpy()
    covered, near = mode_stats(samples)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        plt.figure(figsize=(4, 4))
        plt.scatter(*samples.T, s=2, alpha=0.5, label="generated")
        plt.scatter(*CENTERS.T, c="r", marker="x", label="modes")
        plt.legend()
        plt.savefig(args.plot, dpi=100)
        print(f"wrote {args.plot}")
    return {
        "loss_d": loss_d.item(),
        "loss_g": loss_g.item(),
        "modes": covered,
        "near": near,
        "losses": losses,
    }


if __name__ == "__main__":
    main()
