"""Run PyTorch scripts unchanged under real PyTorch and under tapegrad's torch facade, and
compare what they print.

    python tools/torch_scripts.py                    # the scripts in tools/torch_scripts/
    python tools/torch_scripts.py path/to/scripts --rtol 1e-4 --json report.json
    python tools/torch_scripts.py path/to/scripts --run-only   # did each run succeed?

Each script runs twice, in fresh interpreters: `python script.py` (real torch) and
`python -m tapegrad.compat.run torch script.py` (the facade, nothing in the script edited).
The two outputs agree when every number matches within the tolerances and the text around
the numbers is the same. Scripts should print numbers (f-strings, .item(), .tolist()), not
tensor reprs, and seed-independent values (a fixed start instead of random init) where the
two random streams would differ. Scripts whose numbers depend on random init can still be
checked with `--run-only`: it reports only whether each run finished without an error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT / "tools" / "torch_scripts"
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b")


@dataclass
class Run:
    """One interpreter run of a script."""

    ok: bool
    stdout: str
    error: str = ""  # the last line of stderr when it failed


@dataclass
class Result:
    """A script's two runs and whether their outputs agree."""

    script: str
    torch: Run
    facade: Run
    agree: bool = False
    max_rel_diff: float = 0.0
    mismatch: str = ""  # the first differing line, when they do not agree
    numbers: int = 0  # how many numbers were compared
    notes: list[str] = field(default_factory=list)


def _env() -> dict:
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_script(script: Path, facade: bool, timeout: float) -> Run:
    """Run `script` under real torch (facade=False) or the facade; capture its output."""
    cmd = (
        [sys.executable, "-m", "tapegrad.compat.run", "torch", str(script)]
        if facade
        else [sys.executable, str(script)]
    )
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, cwd=script.parent, env=_env()
        )
    except subprocess.TimeoutExpired:
        return Run(False, "", f"timed out after {timeout:g} s")
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        return Run(False, proc.stdout, lines[-1] if lines else f"exit {proc.returncode}")
    return Run(True, proc.stdout)


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol + rtol * abs(b)


def compare_outputs(ours: str, theirs: str, rtol: float, atol: float):
    """(agree, max relative difference, first mismatching line, numbers compared)."""
    ours_lines, theirs_lines = ours.strip().splitlines(), theirs.strip().splitlines()
    if len(ours_lines) != len(theirs_lines):
        return (
            False,
            math.inf,
            (f"{len(ours_lines)} lines printed, PyTorch printed {len(theirs_lines)}"),
            0,
        )
    worst, count = 0.0, 0
    for mine, ref in zip(ours_lines, theirs_lines, strict=True):
        if _NUMBER.sub("#", mine) != _NUMBER.sub("#", ref):
            return False, worst, f"facade: {mine!r} / torch: {ref!r}", count
        for a, b in zip(_NUMBER.findall(mine), _NUMBER.findall(ref), strict=True):
            x, y = float(a), float(b)
            count += 1
            if not _close(x, y, rtol, atol):
                return False, math.inf, f"facade: {mine!r} / torch: {ref!r}", count
            if y != x:
                worst = max(worst, abs(x - y) / max(abs(y), atol))
    return True, worst, "", count


def check(
    script: Path,
    rtol: float = 1e-4,
    atol: float = 1e-6,
    timeout: float = 120.0,
    run_only: bool = False,
) -> Result:
    """Run one script both ways and compare (only run both when `run_only`)."""
    theirs = run_script(script, facade=False, timeout=timeout)
    ours = run_script(script, facade=True, timeout=timeout)
    result = Result(script.name, theirs, ours)
    if theirs.ok and ours.ok and not run_only:
        result.agree, result.max_rel_diff, result.mismatch, result.numbers = compare_outputs(
            ours.stdout, theirs.stdout, rtol, atol
        )
    return result


def scripts_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--run-only",
        action="store_true",
        help="report only whether each run succeeded; do not compare the printed numbers",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show both outputs")
    args = parser.parse_args(argv)

    results = []
    for script in scripts_in(args.directory.resolve()):  # each run starts in its own dir
        r = check(script, args.rtol, args.atol, args.timeout, args.run_only)
        results.append(r)
        if not r.torch.ok:
            status = f"torch failed: {r.torch.error}"
        elif not r.facade.ok:
            status = f"facade failed: {r.facade.error}"
        elif args.run_only:
            status = "runs"
        elif r.agree:
            status = f"agree ({r.numbers} numbers, max rel diff {r.max_rel_diff:.1e})"
        else:
            status = f"DIFFER: {r.mismatch}"
        print(f"{r.script:32s} {status}")
        if args.verbose:
            print("  torch:\n    " + r.torch.stdout.strip().replace("\n", "\n    "))
            print("  facade:\n    " + r.facade.stdout.strip().replace("\n", "\n    "))
    under_torch = [r for r in results if r.torch.ok]
    ran = [r for r in under_torch if r.facade.ok]
    agree = [r for r in ran if r.agree]
    if args.run_only:
        print(
            f"\n{len(results)} scripts; {len(under_torch)} run under PyTorch; of those "
            f"{len(ran)} run unchanged under the facade"
        )
        if args.json:
            args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
        return 0 if len(ran) == len(under_torch) else 1
    print(
        f"\n{len(results)} scripts; {len(under_torch)} run under PyTorch; of those "
        f"{len(ran)} run unchanged under the facade and {len(agree)} print the same numbers"
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0 if len(agree) == len(under_torch) else 1


if __name__ == "__main__":
    sys.exit(main())
