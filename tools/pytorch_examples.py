"""Run the upstream pytorch/examples scripts, unchanged, through tapegrad's torch facade.

    python tools/pytorch_examples.py /tmp/pyex                # the facade
    python tools/pytorch_examples.py /tmp/pyex --torch        # real PyTorch (the control)
    python tools/pytorch_examples.py /tmp/pyex -k word_language_model --json out.json

The argument is a checkout of https://github.com/pytorch/examples (nothing of it is copied
into this project). Each example directory is copied to a scratch directory, any data it needs
is generated there (a tiny word corpus, the sine waves), and each script runs as
`python -m tapegrad.compat.run torch script.py ARGS` in a fresh interpreter with small
arguments (one epoch, a dry run, tiny sizes) and a timeout. The table says, per script, ok or
the last line of its error.

Third-party packages the examples import and this environment lacks come from
tools/pytorch_examples_stubs/ (put first on PYTHONPATH only for the scripts that name them):
a minimal torchvision (synthetic MNIST/FakeData, a few transforms, save_image writing nothing,
an untrained resnet18), a no-op matplotlib, an offline requests serving a synthetic Cora
archive and a gymnasium with CartPole-v1 only. These stand-ins
are test fixtures, not part of tapegrad; the facade itself has no torchvision. Examples that
need what no stand-in gives (PIL images, pretrained weights, spacy/torchtext, torch.fx,
multi-process distributed) are listed as skipped with the reason.

Measured on pytorch/examples 77f55b9 (23 scripts, 2 shared CPU cores):

    real PyTorch 2.13 (--torch):       22 of 23 (the ONNX export wants onnxscript)
    the facade at 811ce43 (before):    19 of 23
    the facade now:                    23 of 23

The per-script table is in docs/migrating-from-pytorch.md ("pytorch/examples, unchanged").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUBS = ROOT / "tools" / "pytorch_examples_stubs"


def _corpus(workdir: Path) -> None:
    """A tiny corpus in word_language_model's layout: data/tiny/{train,valid,test}.txt."""
    text = (
        "the cat sat on the mat and the dog ran to the park while a bird sang "
        "in the tree near the river where the fish swam under the old bridge"
    )
    words = text.split(" ")
    out = workdir / "data" / "tiny"
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in (("train", 40), ("valid", 8), ("test", 8)):
        text = "\n".join(
            " ".join(words[(i * 7 + j) % len(words)] for j in range(12)) for i in range(lines)
        )
        (out / f"{name}.txt").write_text(text + "\n")


@dataclass
class Case:
    """One script of one example directory, with the arguments it runs with."""

    name: str
    directory: str  # inside the pytorch/examples checkout
    script: str  # inside that directory
    args: list[str] = field(default_factory=list)
    stubs: tuple[str, ...] = ()  # stand-in packages from tools/pytorch_examples_stubs/
    setup: Callable[[Path], None] | None = None  # makes data in the scratch copy
    env: dict[str, str] = field(default_factory=dict)  # extra environment variables
    timeout: float = 300.0


_WLM = ["--epochs", "1", "--dry-run", "--data", "./data/tiny", "--emsize", "16"]
_WLM += ["--nhid", "16", "--bptt", "8", "--batch_size", "4", "--log-interval", "1"]
_GEN = ["--data", "./data/tiny", "--words", "20", "--log-interval", "10"]
_TV = ("torchvision",)

CASES: list[Case] = [
    Case("regression", "regression", "main.py"),
    Case("mnist", "mnist", "main.py", ["--epochs", "1", "--dry-run"], _TV),
    Case("mnist_rnn", "mnist_rnn", "main.py", ["--epochs", "1", "--dry-run"], _TV),
    Case(
        "mnist_hogwild",
        "mnist_hogwild",
        "main.py",
        ["--epochs", "1", "--dry-run", "--num-processes", "2"],
        _TV,
    ),
    Case(
        "mnist_forward_forward",
        "mnist_forward_forward",
        "main.py",
        ["--epochs", "2", "--no_accel", "--train_size", "128", "--test_size", "64"],
        _TV,
    ),
    Case("vae", "vae", "main.py", ["--epochs", "1", "--no-accel", "--batch-size", "32"], _TV),
    Case(
        "dcgan",
        "dcgan",
        "main.py",
        ["--dataset", "fake", "--dry-run", "--batchSize", "4", "--workers", "0", "--niter", "1"],
        _TV,
    ),
    Case(
        "siamese_network",
        "siamese_network",
        "main.py",
        ["--epochs", "1", "--dry-run", "--no-accel", "--batch-size", "16"]
        + ["--test-batch-size", "32"],
        _TV,
    ),
    Case(
        "reinforcement_learning/reinforce",
        "reinforcement_learning",
        "reinforce.py",
        # seed 543 (the default) collapses to one action under the facade's random stream
        # (as other seeds can under torch's); seeds 1-3 train under both
        ["--seed", "1"],
        stubs=("gymnasium",),
        env={"PYEX_REWARD_THRESHOLD": "12"},  # CartPole's 475 takes hundreds of episodes
    ),
    Case(
        "reinforcement_learning/actor_critic",
        "reinforcement_learning",
        "actor_critic.py",
        stubs=("gymnasium",),
        env={"PYEX_REWARD_THRESHOLD": "12"},
    ),
    Case("gcn", "gcn", "main.py", ["--epochs", "1", "--dry-run"], ("requests",)),
    Case("gat", "gat", "main.py", ["--epochs", "1", "--dry-run"], ("requests",)),
    Case(
        "time_sequence_prediction/generate_sine_wave",
        "time_sequence_prediction",
        "generate_sine_wave.py",
    ),
    Case(
        "time_sequence_prediction/train",
        "time_sequence_prediction",
        "train.py",
        ["--steps", "1"],
        ("matplotlib",),
        # it torch.loads a pickled NumPy array: torch >= 2.6 refuses that by default
        # (weights_only), the upstream script included; torch's own switch lets it load
        env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
        timeout=600.0,
    ),
    Case("word_language_model LSTM", "word_language_model", "main.py", _WLM, setup=_corpus),
    Case("word_language_model generate (LSTM)", "word_language_model", "generate.py", _GEN),
    Case("word_language_model GRU", "word_language_model", "main.py", [*_WLM, "--model", "GRU"]),
    Case(
        "word_language_model RNN_TANH",
        "word_language_model",
        "main.py",
        [*_WLM, "--model", "RNN_TANH"],
    ),
    Case(
        "word_language_model RNN_RELU",
        "word_language_model",
        "main.py",
        [*_WLM, "--model", "RNN_RELU", "--tied"],
    ),
    Case(
        "word_language_model Transformer",
        "word_language_model",
        "main.py",
        [*_WLM, "--model", "Transformer", "--nhead", "2"],
    ),
    Case("word_language_model generate (Transformer)", "word_language_model", "generate.py", _GEN),
    Case(
        "word_language_model LSTM --use-optimizer",
        "word_language_model",
        "main.py",
        [*_WLM, "--use-optimizer"],
    ),
    Case(
        "word_language_model LSTM --onnx-export",
        "word_language_model",
        "main.py",
        [*_WLM, "--onnx-export", "model.onnx"],
    ),
]

SKIPPED: dict[str, str] = {
    "imagenet": "imports torch.distributed (process groups) at the top",
    "super_resolution": "torchvision + PIL images + the BSDS300 download",
    "fast_neural_style": "torchvision.models.vgg16 + PIL images",
    "language_translation": "spacy and torchtext are not installed",
    "legacy/snli": "torchtext.legacy is not installed",
    "fx": "torch.fx (graph tracing) is outside the facade",
    "distributed": "multi-process NCCL/Gloo process groups",
}


@dataclass
class Outcome:
    """How one script's run ended."""

    name: str
    ok: bool
    seconds: float
    error: str = ""  # the last line of stderr when it failed


SRC = ROOT / "src"  # the tapegrad under test (--src)


def _env(stub_dir: Path | None) -> dict:
    env = dict(os.environ)
    paths = [str(SRC)]
    if stub_dir is not None:
        paths.insert(0, str(stub_dir))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("PYEX_TRAIN_N", "128")
    env.setdefault("PYEX_TEST_N", "64")
    env["MPLBACKEND"] = "Agg"
    return env


def _stub_dir(scratch: Path, stubs: tuple[str, ...]) -> Path | None:
    """A directory holding only the stand-ins this case asked for."""
    if not stubs:
        return None
    d = scratch / ("_stubs_" + "_".join(stubs))
    if not d.exists():
        d.mkdir()
        for name in stubs:
            src = STUBS / name if (STUBS / name).is_dir() else STUBS / f"{name}.py"
            (d / src.name).symlink_to(src)
    return d


def run_case(case: Case, examples: Path, scratch: Path, real_torch: bool) -> Outcome:
    """Run one case in its scratch copy of the example directory."""
    work = scratch / case.directory
    if not work.exists():
        shutil.copytree(examples / case.directory, work, ignore=shutil.ignore_patterns("data"))
    if case.setup is not None:
        case.setup(work)
    elif case.directory == "word_language_model":
        _corpus(work)  # any of its cases can run alone (-k); generate needs a main run first
    cmd = [sys.executable] + ([] if real_torch else ["-m", "tapegrad.compat.run", "torch"])
    cmd += [case.script, *case.args]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            cwd=work,
            env={**_env(_stub_dir(scratch, case.stubs)), **case.env},
            capture_output=True,
            text=True,
            timeout=case.timeout,
        )
    except subprocess.TimeoutExpired:
        return Outcome(case.name, False, case.timeout, f"timed out after {case.timeout:g} s")
    seconds = time.perf_counter() - start
    if proc.returncode == 0:
        return Outcome(case.name, True, seconds)
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return Outcome(case.name, False, seconds, lines[-1] if lines else f"exit {proc.returncode}")


def table(outcomes: list[Outcome]) -> str:
    """The results as a Markdown table, then the skipped examples."""
    rows = ["| script | result | s |", "|---|---|---|"]
    for o in outcomes:
        result = "ok" if o.ok else "failed: " + o.error.replace("|", "\\|")[:140]
        rows.append(f"| {o.name} | {result} | {o.seconds:.1f} |")
    ran = sum(o.ok for o in outcomes)
    rows.append(f"\n{ran} of {len(outcomes)} ran.\n\nNot run:")
    rows += [f"- {name}: {why}" for name, why in SKIPPED.items()]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("examples", type=Path, help="a checkout of pytorch/examples")
    p.add_argument("--torch", action="store_true", help="run under real PyTorch instead")
    p.add_argument("-k", default="", help="only the cases whose name contains this")
    p.add_argument("--json", type=Path, help="also write the outcomes here")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--src", type=Path, help="the tapegrad source tree to test (default: ./src)")
    args = p.parse_args(argv)
    global SRC
    if args.src is not None:
        SRC = args.src.resolve()
    if not (args.examples / "word_language_model").is_dir():
        p.error(f"{args.examples} is not a pytorch/examples checkout")
    scratch = Path(tempfile.mkdtemp(prefix="pytorch_examples_"))
    outcomes = []
    try:
        for case in CASES:
            if args.k and args.k not in case.name:
                continue
            outcome = run_case(case, args.examples.resolve(), scratch, args.torch)
            print(
                f"{'ok' if outcome.ok else 'FAIL':4} {outcome.seconds:6.1f}s {case.name}"
                + ("" if outcome.ok else f"  -- {outcome.error}"),
                flush=True,
            )
            outcomes.append(outcome)
    finally:
        if args.keep:
            print(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print()
    print(table(outcomes))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
