"""W7 in parts: what `import tapegrad` costs on top of `import numpy`, in fresh interpreters.

    python bench/import_cost.py [-n 20] [SRC ...]      (SRC: a src/ folder; default ./src)

For each SRC, alternating, N fresh processes each of: `import numpy`, and `import numpy`
then `import tapegrad` timed inside the process (CPU time and wall time; minima and medians:
the machine is shared). Then the same process once more without bytecode caching
(PYTHONDONTWRITEBYTECODE=1 and no `__pycache__`: every module is compiled from source, as a
source checkout is when that variable is set), and the size of what was imported.

Why both: a wheel installed by pip has its bytecode compiled, as numpy's has; a checkout run
with PYTHONDONTWRITEBYTECODE=1 recompiles tapegrad's ~50 modules on every start, which is
most of the difference between `import tapegrad` and `import numpy` then (bench/NOTES.md W7).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

_TIMED = (
    "import time, numpy\n"
    "c, w = time.process_time(), time.perf_counter()\n"
    "import tapegrad\n"
    "c, w = time.process_time() - c, time.perf_counter() - w\n"
    "import os, sys\n"
    "mods = [m for m in sys.modules.values() if m.__name__.split('.')[0] == 'tapegrad']\n"
    "print(c, w, len(mods), sum(os.path.getsize(m.__file__) for m in mods))\n"
)


def _env(src: str, cache: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.path.abspath(src)
    if not cache:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _timed(src: str, cache: bool) -> tuple[float, float, int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _TIMED], env=_env(src, cache), capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"import tapegrad failed for {src}:\n{out.stderr[-2000:]}")
    c, w, n, size = out.stdout.split()
    return float(c), float(w), int(n), int(size)


def _numpy_alone(src: str) -> float:
    code = "import time\nc = time.process_time()\nimport numpy\nprint(time.process_time() - c)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(src, True), capture_output=True, text=True
    )
    return float(out.stdout)


def _uncached_copy(src: str, into: str) -> str:
    dst = os.path.join(into, os.path.basename(os.path.abspath(src)) or "src")
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _ms(xs: list[float]) -> str:
    return f"{min(xs) * 1e3:6.1f} / {statistics.median(xs) * 1e3:6.1f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("srcs", nargs="*", default=["src"])
    a = ap.parse_args()
    for src in a.srcs:  # write the bytecode once, as an install does
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL
        )
    with tempfile.TemporaryDirectory() as tmp:
        cold = {}
        for i, src in enumerate(a.srcs):
            os.makedirs(os.path.join(tmp, str(i)))
            cold[src] = _uncached_copy(src, os.path.join(tmp, str(i)))
        numpy_cpu: list[float] = []
        rows = {src: ([], [], [], []) for src in a.srcs}  # cpu, wall, cpu uncached, wall unc.
        sizes = {}
        for _ in range(a.n):
            numpy_cpu.append(_numpy_alone(a.srcs[0]))
            for src in a.srcs:
                c, w, n, size = _timed(src, True)
                rows[src][0].append(c)
                rows[src][1].append(w)
                cu, wu, _, _ = _timed(cold[src], False)
                rows[src][2].append(cu)
                rows[src][3].append(wu)
                sizes[src] = n, size
    print(f"import numpy alone: CPU min / median {_ms(numpy_cpu)} ms ({a.n} fresh processes)")
    print("import tapegrad after numpy, ms (min / median):")
    print(f"{'src':40s} {'CPU':>15s} {'wall':>15s} {'CPU uncached':>15s} {'wall uncached':>15s}")
    for src, (c, w, cu, wu) in rows.items():
        n, size = sizes[src]
        print(f"{src:40s} {_ms(c):>15s} {_ms(w):>15s} {_ms(cu):>15s} {_ms(wu):>15s}", end="")
        print(f"   {n} modules, {size // 1000} KB source")


if __name__ == "__main__":
    main()
