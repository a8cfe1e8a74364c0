#!/usr/bin/env python
"""Run small scripts under a real framework and under tapegrad's facade; diff the numbers.

Each script in tools/framework_scripts/ is named `<framework>_*.py` and imports the real
framework (`import mxnet as mx`). It runs twice: with the framework's own Python (a
virtual environment that has it), and with this Python through `python -m
tapegrad.compat.run <framework>` (the same file, unchanged: the facade is imported under
the framework's name). Every number each script prints is compared, line by line, with a
tolerance; text around the numbers (reprs) is ignored. Not run in CI.

    python tools/compare_frameworks.py mxnet --python /tmp/mxvenv/bin/python
    python tools/compare_frameworks.py megengine --python /tmp/mgevenv/bin/python
    python tools/compare_frameworks.py torch              # torch installed here

`--save DIR` writes each script's real output to DIR/<script>.txt; `--expected DIR`
compares the facade against such saved outputs instead of running the framework (the
test suite does this with tools/framework_scripts/expected/).

Setting up the real frameworks (never dependencies of tapegrad):

    python3.11 -m venv /tmp/mxvenv
    /tmp/mxvenv/bin/pip install mxnet==1.9.1 numpy==1.23.5     # newer NumPy breaks mxnet
    python3.10 -m venv /tmp/mgevenv                              # no MegEngine wheels past 3.10
    /tmp/mgevenv/bin/pip install megengine==1.13.0              # ~1 GB wheel
    /tmp/mgevenv/bin/pip install "numpy<2"   # opencv pulls NumPy 2 in, which breaks megengine
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NUMBER = re.compile(
    r"(?<![\w.])(?:[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan|True|False)(?![\w])"
)


def numbers(text: str) -> list[list[float]]:
    """The numbers of each output line (True/False count as 1/0)."""
    out = []
    for line in text.splitlines():
        flags = {"True": 1.0, "False": 0.0}
        out.append([flags[tok] if tok in flags else float(tok) for tok in NUMBER.findall(line)])
    return out


def run(cmd: list[str], timeout: int) -> tuple[int, str, str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    return proc.returncode, proc.stdout, proc.stderr


def compare(real: str, facade: str, rtol: float, atol: float) -> tuple[int, float, list[str]]:
    """(numbers compared, largest absolute difference, problems)."""
    a, b = numbers(real), numbers(facade)
    problems, count, worst = [], 0, 0.0
    if len(a) != len(b):
        problems.append(f"{len(a)} output lines from the framework, {len(b)} from the facade")
    for i, (ra, rb) in enumerate(zip(a, b)):
        if len(ra) != len(rb):
            problems.append(f"line {i + 1}: {len(ra)} numbers vs {len(rb)}")
            continue
        for x, y in zip(ra, rb):
            count += 1
            if math.isnan(x) and math.isnan(y):
                continue
            diff = abs(x - y)
            worst = max(worst, diff)
            if not diff <= atol + rtol * abs(x):
                problems.append(f"line {i + 1}: {x!r} vs {y!r}")
    return count, worst, problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("framework", choices=["mxnet", "megengine", "torch"])
    ap.add_argument(
        "--python",
        default=sys.executable,
        help="the Python that has the real framework (default: this one)",
    )
    ap.add_argument("--scripts", default=str(HERE / "framework_scripts"))
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--save", help="write the framework's outputs to this folder")
    ap.add_argument("--expected", help="compare against saved outputs instead of running it")
    args = ap.parse_args(argv)

    scripts = sorted(Path(args.scripts).glob(f"{args.framework}_*.py"))
    if not scripts:
        print(f"no {args.framework}_*.py scripts in {args.scripts}", file=sys.stderr)
        return 2
    failed = 0
    print(f"{'script':36} {'numbers':>8} {'max |diff|':>11}  result")
    for script in scripts:
        if args.expected:
            real = (Path(args.expected) / (script.stem + ".txt")).read_text()
            rc_real, err_real = 0, ""
        else:
            rc_real, real, err_real = run([args.python, str(script)], args.timeout)
            if args.save:
                Path(args.save).mkdir(parents=True, exist_ok=True)
                (Path(args.save) / (script.stem + ".txt")).write_text(real)
        rc_fac, fac, err_fac = run(
            [sys.executable, "-m", "tapegrad.compat.run", args.framework, str(script)], args.timeout
        )
        problems = []
        if rc_real:
            problems.append(f"the framework run failed: {err_real.strip().splitlines()[-1:]}")
        if rc_fac:
            problems.append(f"the facade run failed: {err_fac.strip().splitlines()[-1:]}")
        count, worst, diffs = compare(real, fac, args.rtol, args.atol)
        problems += diffs
        status = "same numbers" if not problems else "DIFFERENT"
        failed += bool(problems)
        print(f"{script.name:36} {count:>8} {worst:>11.3g}  {status}")
        for p in problems[:10]:
            print(f"    {p}")
    print(
        f"\n{len(scripts) - failed} of {len(scripts)} scripts give the same numbers "
        f"(rtol={args.rtol}, atol={args.atol})"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
