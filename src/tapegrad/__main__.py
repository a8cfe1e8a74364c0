"""The `tapegrad` command (the console script, or `python -m tapegrad ...`).

tapegrad demo [--epochs N] [--model mlp|cnn] [--seed S] [--out DIR] [--threads N] [--compile]
tapegrad bench [bench/run.py options]
tapegrad --version
"""

from __future__ import annotations

import argparse
import os
import sys


def _prog() -> str:
    """How the user started us, for the usage line: `tapegrad` (the console script) or
    `python -m tapegrad` (argv[0] is then this file)."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "python -m tapegrad" if name in ("", "__main__.py", "-c") else name


def _threads(text: str) -> int:
    value = int(text) if text.strip().lstrip("-").isdigit() else -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of threads (0 or more), got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    from .utils.cli import positive_int
    from .utils.hints import install_hint

    p = argparse.ArgumentParser(
        prog=_prog(),
        description="tapegrad: reverse-mode autograd on NumPy. Subcommands: demo, bench.",
    )
    p.add_argument("--version", action="version", version=f"tapegrad {__version__}")
    sub = p.add_subparsers(dest="command", metavar="{demo,bench}")
    d = sub.add_parser(
        "demo",
        help="train a small CNN on the 8x8 handwritten digits",
        description=(
            "Train a small network on the 8x8 handwritten digits (1,797 images; scikit-learn's "
            "copy when installed, else the one shipped with tapegrad), with a progress bar. "
            "Writes a safetensors checkpoint, history.json and, with matplotlib "
            f"({install_hint('plot')}), training_curve.png into --out."
        ),
    )
    d.add_argument(
        "--epochs",
        type=positive_int,
        default=None,
        help="passes over the training set (default: 10 for cnn, 20 for mlp)",
    )
    d.add_argument(
        "--model",
        choices=("cnn", "mlp"),
        default="cnn",
        help="cnn (default): two 3x3 conv layers, max-pool and two linear layers; "
        "mlp: three linear layers on the flattened image",
    )
    d.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the train/test split, the initial weights and the shuffling (default: 0)",
    )
    d.add_argument(
        "--out",
        default="tapegrad-demo",
        metavar="DIR",
        help="folder for the checkpoint, history.json and the curve PNG (default: ./tapegrad-demo)",
    )
    d.add_argument(
        "--batch-size", type=positive_int, default=32, help="training batch size (default: 32)"
    )
    d.add_argument(
        "--lr", type=float, default=3e-3, help="Adam's initial learning rate (default: 0.003)"
    )
    d.add_argument(
        "--threads",
        type=_threads,
        default=None,
        help="BLAS threads while training (default: $TAPEGRAD_NUM_THREADS, else 1: "
        "the matrices are small, so more threads rarely help; 0 leaves BLAS "
        "as it is; see docs/performance.md)",
    )
    d.add_argument("--no-progress", action="store_true", help="no progress bars")
    d.add_argument(
        "--compile",
        action="store_true",
        help="run each training step under tg.compile (traced once, then replayed)",
    )
    sub.add_parser(
        "bench", help="run the benchmark harness bench/run.py (source checkout)", add_help=False
    )
    return p


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return _bench(argv[1:])
    args = _parser().parse_args(argv)
    if args.command is None:
        _parser().print_help()
        return 2
    from .demo import run

    result = run(
        epochs=args.epochs,
        model_kind=args.model,
        seed=args.seed,
        out=args.out,
        batch_size=args.batch_size,
        lr=args.lr,
        progress=not args.no_progress,
        threads=args.threads,
        compile=args.compile,
    )
    return 0 if result["test_acc"] > 0.1 else 1


def _bench(argv) -> int:
    """Forward to bench/run.py of the source checkout (it is not part of the installed wheel)."""
    import runpy

    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, os.pardir, os.pardir, "bench", "run.py")
    if not os.path.exists(script):
        print(
            f"{_prog()} bench needs the source checkout: bench/run.py is not part of the "
            "installed package",
            file=sys.stderr,
        )
        return 2
    sys.argv = [script, *argv]
    try:
        runpy.run_path(os.path.normpath(script), run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
