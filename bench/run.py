#!/usr/bin/env python
"""Benchmark harness: every (framework, workload) pair runs in a fresh subprocess (worker.py).

  python run.py                       # everything
  python run.py -f torch jax -w w1 w2 --merge   # a subset, merged into results.json

Writes results.json (all raw numbers) and results.md (tables) next to this file.
Frameworks are discovered from adapters/*.py (see README.md to add one).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import adapters  # noqa: E402  (imports no framework)

WORKLOADS = ["w1", "w1_50", "w2", "w3", "w4_10k", "w4_100k", "w5", "w6_train", "w6_infer", "w7", "w8"]
THREADS = "2"
DEFAULT_TIMEOUT = 150


def child_env(cache_root: str) -> dict:
    env = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # they slow current numpy builds; always unset
        env.pop(k, None)
    env.update({
        "OMP_NUM_THREADS": THREADS, "OPENBLAS_NUM_THREADS": THREADS, "MKL_NUM_THREADS": THREADS,
        "NUMEXPR_NUM_THREADS": THREADS, "NUM_CPU_THREADS": THREADS,  # tinygrad CPU worker threads
        "JAX_PLATFORMS": "cpu", "DEV": env.get("DEV", "CPU"),  # tinygrad device
        "XDG_CACHE_HOME": cache_root,  # keep framework caches (tinygrad kernels, ...) inside bench/.cache
        "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "2",
    })
    return env


def run_worker(py, fw, wl, env, timeout, extra_args=()):
    cmd = [py, os.path.join(HERE, "worker.py"), fw, wl, *extra_args]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the worker's own process group (started above)
        out, err = p.communicate()
        return {"framework": fw, "workload": wl, "status": "timeout",
                "reason": f"exceeded {timeout}s wall (killed)", "wall_s": time.perf_counter() - t0,
                "stderr_tail": (err or "")[-1500:]}
    wall = time.perf_counter() - t0
    line = next((ln for ln in reversed(out.splitlines()) if ln.startswith("RESULT_JSON ")), None)
    if line is None:
        rc = p.returncode
        why = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
        return {"framework": fw, "workload": wl, "status": "crashed", "reason": f"process died ({why})",
                "wall_s": wall, "stderr_tail": (err or "")[-1500:]}
    res = json.loads(line[len("RESULT_JSON "):])
    res["wall_s"] = wall
    if res.get("status") != "ok" and err:
        res["stderr_tail"] = err[-1500:]
    return res


# ---------------------------------------------------------------- W7
SIZE_CODE = r"""
import json, os, sys
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
def tops(d):
    base = os.path.realpath(str(d.locate_file("")))
    s = set()
    for f in d.files or []:
        p = str(f)
        if p.startswith(".."): continue
        s.add(os.path.join(base, p.split("/")[0]))
    return s
def du(paths):
    tot = 0
    for p in paths:
        if os.path.isfile(p): tot += os.path.getsize(p); continue
        for r, _, fs in os.walk(p):
            for f in fs:
                fp = os.path.join(r, f)
                if not os.path.islink(fp): tot += os.path.getsize(fp)
    return tot
def closure(names):
    seen, todo = set(), [n.lower() for n in names]
    while todo:
        n = todo.pop()
        if n in seen: continue
        try: d = metadata.distribution(n)
        except metadata.PackageNotFoundError: continue
        seen.add(n)
        for r in d.requires or []:
            req = Requirement(r)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}): continue
            todo.append(req.name.lower().replace("_", "-"))
    return seen
out = {}
for fw, own in json.loads(sys.argv[1]).items():
    own_paths = set().union(*[tops(metadata.distribution(n)) for n in own])
    deps = sorted(closure(own) - {n.lower() for n in own})
    dep_paths = set().union(set(), *[tops(metadata.distribution(n)) for n in deps]) - own_paths
    np_paths = tops(metadata.distribution("numpy"))
    out[fw] = {"own_distributions": own, "own_MiB": du(own_paths) / 2**20,
               "dependencies": deps, "deps_excl_numpy_MiB": du(dep_paths - np_paths) / 2**20}
print(json.dumps(out))
"""


def measure_w7(py, reg, fws, env, repeats=5):
    results = []
    base = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        subprocess.run([py, "-c", "pass"], env=env, check=True)
        if i:
            base.append(time.perf_counter() - t0)
    sizes = json.loads(subprocess.run([py, "-c", SIZE_CODE, json.dumps({fw: reg[fw]["distributions"] for fw in fws})],
                                      env=env, check=True, capture_output=True, text=True).stdout)
    for fw in fws:
        stmt = reg[fw]["import"]
        ts, err = [], None
        for i in range(repeats + 1):  # first run warms the file cache
            t0 = time.perf_counter()
            p = subprocess.run([py, "-c", stmt], env=env, capture_output=True, text=True)
            dt = time.perf_counter() - t0
            if p.returncode:
                err = p.stderr[-500:]
                break
            if i:
                ts.append(dt)
        r = {"framework": fw, "workload": "w7"}
        if err:
            r.update(status="error", reason=err)
        else:
            st = sorted(ts)
            r.update(status="ok", metrics={
                "import_s": {"median": statistics.median(st), "min": st[0], "max": st[-1], "n": len(st)},
                "python_startup_s": statistics.median(base), "import_stmt": stmt, **sizes[fw]})
        results.append(r)
    return results


# ---------------------------------------------------------------- meta
PROBE = r"""
import json, sys, platform
import numpy, threadpoolctl
info = {"python": sys.version.split()[0], "numpy": numpy.__version__,
        "numpy_threadpools": [{k: d.get(k) for k in ("internal_api","prefix","version","num_threads","architecture")}
                              for d in threadpoolctl.threadpool_info()]}
print(json.dumps(info))
"""


def probe_meta(py, env):
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "platform": platform.platform(),
            "cpu": _cpu_model(), "cores": os.cpu_count(), "threads_per_framework": int(THREADS),
            "unset_env": ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"]}
    p = subprocess.run([py, "-c", PROBE], env=env, capture_output=True, text=True)
    meta.update(json.loads(p.stdout) if p.returncode == 0 else {"probe_error": p.stderr[-500:]})
    return meta


def _cpu_model():
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# ---------------------------------------------------------------- report
def _cell(m, key, fmt="{:.3g}"):
    v = m.get(key)
    if isinstance(v, dict):
        return f"{fmt.format(v['median'])} ({fmt.format(v['min'])}–{fmt.format(v['max'])})"
    return "" if v is None else (fmt.format(v) if isinstance(v, float) else str(v))


def _status(r):
    st = r.get("status")
    if st == "n/a":
        return f"n/a: {r.get('reason', '')}"
    return f"**{st}**: {r.get('reason', '')}"[:160]


def write_markdown(path, meta, results, frameworks):
    by = {(r["framework"], r["workload"]): r for r in results}
    L = ["# Autograd anchor benchmarks", "",
         f"{meta.get('date')} · {meta.get('cpu')} · {meta.get('cores')} cores · Python {meta.get('python')} · "
         f"{meta.get('threads_per_framework')} threads per framework · float32 · cells: median (min–max)", "",
         "Pairs run several times (fresh process each; `passes` and `pass_medians` in results.json): the cell is "
         "the median of the per-pass medians, min/max over all timed samples; 'first call' and losses from the "
         "first pass. Run-to-run spread on this shared 2-core VM is about ±15 % (up to 1.7x for a few cells).", ""]
    L.append("| framework | version / info | thread pools loaded in its W2 process (api, lib, version, threads, kernel) |")
    L.append("|---|---|---|")
    for fw in frameworks:
        info, pools = None, None
        for w in WORKLOADS:
            r = by.get((fw, w), {})
            info = info or r.get("info")
            pools = pools or (r.get("threadpools") if w in ("w2", "w3", "w1") else None)
        pools_s = "; ".join(f"{p.get('internal_api')} {p.get('prefix')} {p.get('version') or ''} "
                            f"x{p.get('num_threads')} {p.get('architecture') or ''}".strip() for p in pools or [])
        info_s = ", ".join(f"{k}={v}" for k, v in (info or {}).items())
        L.append(f"| {fw} | {info_s} | {pools_s} |")
    L.append("")
    L.append(f"NumPy BLAS (numpy-only process, OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset): {meta.get('numpy_threadpools')}")
    L.append("")

    def table(title, wl, cols, note=""):
        rows = [fw for fw in frameworks if (fw, wl) in by]
        if not rows:
            return
        L.extend([f"## {title}", ""] + ([note, ""] if note else []))
        L.append("| framework | " + " | ".join(c[0] for c in cols) + " |")
        L.append("|---" * (len(cols) + 1) + "|")
        for fw in rows:
            r = by[(fw, wl)]
            if r.get("status") != "ok":
                L.append(f"| {fw} | {_status(r)} |" + " |" * (len(cols) - 1))
                continue
            m = r["metrics"]
            L.append(f"| {fw} | " + " | ".join(_cell(m, c[1], *(c[2:] or [])) for c in cols) + " |")
        L.append("")

    table("W1 op overhead (16 elements, 200 elementwise ops, fwd+bwd)", "w1",
          [("µs per op", "us_per_op"), ("first call s", "first_call_s"), ("grad max rel err", "grad_max_rel_err_vs_f64")])
    table("W1b short chain: 50 elementwise ops (same cycle), fwd+bwd", "w1_50",
          [("µs per op", "us_per_op"), ("first call s", "first_call_s"), ("grad max rel err", "grad_max_rel_err_vs_f64")])
    table("W2 MLP training step (784-1024-1024-10, batch 256, SGD)", "w2",
          [("ms per step", "ms_per_step"), ("first call s", "first_call_s"), ("loss step 1", "loss_step1"),
           ("loss step 20", "loss_step20"), ("loss decreased", "loss_decreased")])
    table("W3 CNN training step (64x1x28x28, 2 conv + pool, linear, SGD)", "w3",
          [("ms per step", "ms_per_step"), ("first call s", "first_call_s"), ("loss first", "loss_step1"),
           ("loss decreased", "loss_decreased")])
    for wl, n in (("w4_10k", "10,000"), ("w4_100k", "100,000")):
        table(f"W4 deep graph: {n} iterations of x = x*1.0000001 + 0.0 (2 nodes each)", wl,
              [("forward s", "forward_s"), ("backward s", "backward_s"), ("grad ok", "grad_ok")])
    table("W5 BLAS floor: the 8 GEMMs of one W2 step (3 fwd + 5 bwd)", "w5",
          [("ms", "gemm_ms"), ("GFLOP", "gflop"), ("GFLOP/s", "gflops_at_median", "{:.1f}")])
    for wl, t in (("w6_train", "one W2 training step"), ("w6_infer", "W2 forward under no-grad/inference mode")):
        table(f"W6 memory: peak RSS increase for {t} (MiB)", wl,
              [("first call", "peak_delta_first_MiB", "{:.1f}"), ("steady state", "peak_delta_steady_MiB", "{:.1f}"),
               ("RSS after import", "rss_after_import_MiB", "{:.0f}"), ("RSS after data", "rss_after_data_MiB", "{:.0f}")])
    table("W8 optimizer step: Adam over 100 parameters of mixed shapes (189,230 float32 values)", "w8",
          [("µs per step", "us_per_step"), ("first call s", "first_call_s"),
           ("max err vs f64 / movement", "max_err_vs_f64_over_movement"), ("ok", "params_ok")])
    table("W7 import time and installed size", "w7",
          [("import s", "import_s"), ("own MiB", "own_MiB", "{:.1f}"), ("deps excl. numpy MiB", "deps_excl_numpy_MiB", "{:.1f}"),
           ("dependencies", "dependencies")])

    # compact summary (medians)
    L.extend(["## Summary (medians)", "",
              "| framework | W1 µs/op (200 / 50 ops) | W2 ms | W3 ms | W4 10k fwd/bwd s | W4 100k fwd/bwd s | W5 ms | W6 train/infer MiB | W7 import s / MiB | W8 µs |",
              "|---|---|---|---|---|---|---|---|---|---|"])

    def med(fw, wl, key, fmt="{:.3g}"):
        r = by.get((fw, wl))
        if r is None:
            return "—"
        if r.get("status") != "ok":
            return r.get("status")
        v = r["metrics"].get(key)
        v = v["median"] if isinstance(v, dict) else v
        return fmt.format(v) if isinstance(v, (int, float)) else str(v)
    for fw in frameworks:
        L.append("| " + " | ".join([
            fw, f"{med(fw, 'w1', 'us_per_op')} / {med(fw, 'w1_50', 'us_per_op')}", med(fw, "w2", "ms_per_step"), med(fw, "w3", "ms_per_step"),
            f"{med(fw, 'w4_10k', 'forward_s')} / {med(fw, 'w4_10k', 'backward_s')}",
            f"{med(fw, 'w4_100k', 'forward_s')} / {med(fw, 'w4_100k', 'backward_s')}",
            med(fw, "w5", "gemm_ms"),
            f"{med(fw, 'w6_train', 'peak_delta_first_MiB', '{:.0f}')} / {med(fw, 'w6_infer', 'peak_delta_first_MiB', '{:.0f}')}",
            f"{med(fw, 'w7', 'import_s')} / {med(fw, 'w7', 'own_MiB', '{:.0f}')}",
            med(fw, "w8", "us_per_step")]) + " |")
    L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


ORDER = ["tapegrad", "tapegrad-per-param", "torch", "torch-1thread", "torch-compile", "jax", "jax-jit", "tinygrad", "hips", "mygrad", "numpy-manual"]


def combine(runs):
    """Merge several runs of one (framework, workload) pair: per timing metric, median of the per-run
    medians, min of mins, max of maxes, and the list of per-run medians; other fields from the first ok run."""
    ok = [r for r in runs if r.get("status") == "ok"]
    if not ok:
        return runs[0]
    out = json.loads(json.dumps(ok[0]))
    out["passes"] = len(runs)
    if len(ok) < len(runs):
        out["failed_passes"] = [f"{r.get('status')}: {r.get('reason', '')}"[:200] for r in runs if r not in ok]
    for k, v in out["metrics"].items():
        if isinstance(v, dict) and "median" in v:
            meds = [r["metrics"][k]["median"] for r in ok]
            out["metrics"][k] = {"median": statistics.median(meds), "min": min(r["metrics"][k]["min"] for r in ok),
                                 "max": max(r["metrics"][k]["max"] for r in ok),
                                 "n": sum(r["metrics"][k]["n"] for r in ok), "pass_medians": meds}
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and k.startswith(("peak_delta", "gflops")):
            out["metrics"][k] = statistics.median(r["metrics"][k] for r in ok)
    return out


def combine_files(paths):
    docs = [json.load(open(p)) for p in paths]
    groups = {}
    for d in docs:
        for r in d["results"]:
            g = groups.setdefault((r["framework"], r["workload"]), [])
            if json.dumps(r, sort_keys=True) not in [json.dumps(x, sort_keys=True) for x in g]:  # merged copies
                g.append(r)
    return docs[-1]["meta"], [combine(g) for g in groups.values()]


def main():
    reg = adapters.discover()
    reg = {k: reg[k] for k in sorted(reg, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k))}
    ap = argparse.ArgumentParser()
    ap.add_argument("-f", "--frameworks", nargs="*", default=list(reg))
    ap.add_argument("-w", "--workloads", nargs="*", default=WORKLOADS)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    ap.add_argument("--merge", action="store_true", help="keep other results already in results.json")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--passes", type=int, default=1, help="fresh processes per pair; cells combine the passes")
    ap.add_argument("--combine", nargs="+", metavar="JSON",
                    help="only combine earlier results files (same pairs = extra passes) into results.json/.md")
    a = ap.parse_args()

    cache_root = os.path.join(HERE, ".cache")
    os.makedirs(cache_root, exist_ok=True)
    env = child_env(cache_root)
    jpath, mpath = os.path.join(a.out, "results.json"), os.path.join(a.out, "results.md")
    old = json.load(open(jpath)) if a.merge and os.path.exists(jpath) else {"meta": {}, "results": []}
    meta = probe_meta(a.python, env)
    results = [r for r in old["results"]
               if not (r["framework"] in a.frameworks and r["workload"] in a.workloads)]

    def save():
        order = {fw: i for i, fw in enumerate(reg)}
        results.sort(key=lambda r: (order.get(r["framework"], 99), WORKLOADS.index(r["workload"])))
        fws = [fw for fw in reg if any(r["framework"] == fw for r in results)]
        with open(jpath, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
        write_markdown(mpath, meta, results, fws)

    if a.combine:
        meta, results[:] = combine_files(a.combine)
        save()
        print(f"combined {a.combine} -> {jpath}, {mpath}")
        return
    t_all = time.perf_counter()
    for fw in a.frameworks:
        opts = reg[fw]["opts"]
        for wl in a.workloads:
            if "only" in opts and wl not in opts["only"]:
                continue
            if wl == "w7":
                continue
            wenv = dict(env)
            tmp = None
            if opts.get("compile"):  # cold torch.compile: a fresh inductor cache each run
                tmp = tempfile.mkdtemp(prefix="inductor-", dir=cache_root)
                wenv["TORCHINDUCTOR_CACHE_DIR"] = tmp
            timeout = opts.get("timeouts", {}).get(wl, a.timeout)
            if opts.get("compile"):
                timeout = max(timeout, 240)
            runs = []
            for _ in range(a.passes):
                print(f"[{time.perf_counter() - t_all:7.1f}s] {fw:14s} {wl:9s} ...", end=" ", flush=True)
                r = run_worker(a.python, fw, wl, wenv, timeout)
                print(f"{r['status']} ({r['wall_s']:.1f}s) {r.get('reason', '')[:100]}", flush=True)
                runs.append(r)
                if r["status"] in ("n/a", "timeout"):
                    break
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
            results.append(combine(runs) if len(runs) > 1 else runs[0])
            save()
    if "w7" in a.workloads:
        fws = [fw for fw in a.frameworks if "only" not in reg[fw]["opts"]]
        print(f"[{time.perf_counter() - t_all:7.1f}s] W7 import time / size for {fws}", flush=True)
        results.extend(measure_w7(a.python, reg, fws, env))
        save()
    print(f"done in {time.perf_counter() - t_all:.0f}s -> {jpath}, {mpath}")


if __name__ == "__main__":
    main()
