"""DataLoader throughput: tapegrad.data vs torch.utils.data on a slow data set.

Each sample sleeps 5 ms (standing in for decoding a file), so one epoch of N samples costs
N x 5 ms in one process and about N x 5 ms / W with W workers, plus starting the workers.
Both loaders get the same data set (NumPy samples), batch size and shuffle; every epoch
starts fresh workers (persistent_workers=False, PyTorch's default). The table gives the
median of `--repeats` epochs (min-max).

    python bench/data_loader.py                   # 0 and 4 workers, 400 samples
    python bench/data_loader.py --workers 0 2 4 --samples 800
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

SLEEP_S = 0.005


class SlowSamples:
    """A map-style data set whose every sample takes 5 ms (duck-typed for both libraries)."""

    def __init__(self, n: int):
        self.n = n
        self.x = np.random.default_rng(0).standard_normal((n, 32)).astype(np.float32)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        time.sleep(SLEEP_S)
        return self.x[i], np.int64(i % 10)


def _epoch_seconds(make_loader) -> float:
    loader = make_loader()
    t0 = time.perf_counter()
    count = sum(int(xb.shape[0]) for xb, _ in loader)
    seconds = time.perf_counter() - t0
    assert count == len(loader.dataset), (count, len(loader.dataset))
    return seconds


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="bench/data_loader.py", description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, nargs="+", default=[0, 4])
    p.add_argument("--samples", type=int, default=400)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)

    import tapegrad as tg

    try:
        import torch
        import torch.utils.data as tud
    except ImportError:
        torch = None
    ds = SlowSamples(args.samples)
    rows = []
    for w in args.workers:
        ours, theirs = [], []
        for _ in range(args.repeats):  # alternate, so a busy spell hits both alike
            ours.append(_epoch_seconds(lambda w=w: tg.data.DataLoader(
                ds, batch_size=args.batch_size, shuffle=True, num_workers=w, seed=0)))
            if torch is not None:
                with warnings.catch_warnings():  # "more workers than cores" on small machines
                    warnings.simplefilter("ignore")
                    theirs.append(_epoch_seconds(lambda w=w: tud.DataLoader(
                        ds, batch_size=args.batch_size, shuffle=True, num_workers=w,
                        generator=torch.Generator().manual_seed(0))))
        rows.append((w, ours, theirs or None))

    ideal = args.samples * SLEEP_S
    print(f"{args.samples} samples x {SLEEP_S * 1e3:.0f} ms, batch {args.batch_size}, "
          f"median of {args.repeats} epochs (min-max); one process would take {ideal:.2f} s")
    print("| workers | tapegrad s | torch s | tapegrad / torch |")
    print("|---|---|---|---|")
    for w, ours, theirs in rows:
        def fmt(ts):
            return f"{statistics.median(ts):.3f} ({min(ts):.3f}-{max(ts):.3f})"

        ratio = (f"{statistics.median(ours) / statistics.median(theirs):.2f}x"
                 if theirs else "n/a")
        print(f"| {w} | {fmt(ours)} | {fmt(theirs) if theirs else 'n/a'} | {ratio} |")


if __name__ == "__main__":
    main()
