"""Run MegEngine 1.13's own autodiff tests, unchanged, against the tapegrad facade.

    python tools/megengine_conformance.py /path/to/MegEngine          # a checkout
    python tools/megengine_conformance.py /path/to/imperative/python/test

The five upstream files are copied into a temporary directory next to a generated
`conftest.py` (upstream's conftest reads MegEngine internals and is not used). That conftest
installs the facade under the name `megengine` (`tapegrad.compat.alias`), stands in for the
out-of-scope internals some files import at module level (so the file collects), and
deselects the out-of-scope tests, each with its reason. Nothing upstream is kept: the copy
is deleted when the run ends. Exit status 0 when every selected test passed.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

FILES = [
    "unit/autodiff/test_grad_manager.py",
    "unit/core/test_function.py",
    "unit/core/test_autodiff.py",
    "integration/test_grad_detach.py",
    "integration/test_converge.py",
    "unit/optimizer/test_clip_grad.py",
    "integration/test_optimizer.py",
    "unit/module/test_activation.py",
    "unit/module/test_batchnorm.py",
    "unit/module/test_conv.py",
    "unit/module/test_init.py",
    "unit/module/test_module.py",
    "unit/module/test_normalization.py",
    "unit/module/test_pool2d.py",
    "unit/functional/test_loss.py",
    "unit/functional/test_functional.py",
]
# files the upstream tests import as modules (copied next to them, not run)
HELPERS = ["helpers/utils.py"]

# what the facade does not do, and why each test that needs it is left out
_DIST = "several devices and dist.launcher (out of scope)"
_RT = (
    "megengine.core._imperative_rt internals: Grad / apply(Elemwise) (out of scope; "
    "the assertions are ported to the public API in tests/compat/)"
)
_TRACE = "jit.trace (comes with the compilation issue)"
_TRACED = "traced_module (out of scope)"

# (file, test name prefix) -> reason; the first matching row wins
DESELECT = [
    ("test_grad_manager.py", "test_remote_grad", f"{_DIST}; {_TRACE}"),
    ("test_grad_manager.py", "test_gather_grad", f"{_DIST}; {_TRACE}"),
    ("test_grad_manager.py", "test_scatter_grad", f"{_DIST}; {_TRACE}"),
    ("test_grad_manager.py", "test_reduce_grad", f"{_DIST}; {_TRACE}"),
    ("test_grad_manager.py", "test_broadcast_grad", f"{_DIST}; {_TRACE}"),
    ("test_autodiff.py", "test_dist_grad", _DIST),
    ("test_autodiff.py", "test_", _RT),
    ("test_converge.py", "test_training_converge[True-True-True]", _TRACED),
]

# module names the upstream files import at module level that the facade leaves out on
# purpose: stand-ins that accept anything at import time (only deselected tests use them)
STUBBED = [
    "megengine.core._imperative_rt",
    "megengine.core._imperative_rt.core2",
    "megengine.core.autodiff",
    "megengine.core.autodiff.grad",
    "megengine.core.ops",
    "megengine.core.ops.builtin",
    "megengine.functional.distributed",
    "megengine.traced_module",
]

# upstream tests that depend on NumPy 1.x (MegEngine 1.13 requires numpy<2): why they fail
# under NumPy 2 whatever runs them
NUMPY2 = {
    "test_attach_in_with_block": "int() of a 1-element array (b.grad.numpy()), an error "
    "since NumPy 2; passes under numpy<2",
}

_CONFTEST = '''\
import json
import sys
import types

import os

from tapegrad.compat import alias

alias.install("megengine")
# upstream's conftest puts helpers/ (utils.opr_test) on the path the same way
sys.path.append(os.path.join(os.path.dirname(__file__), "helpers"))

STUBBED = {stubbed!r}
DESELECT = {deselect!r}
REPORT = {report!r}


class _OutOfScope:
    """Stands in for an out-of-scope internal at import time; never used by a selected test."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return _OutOfScope(self._name + "." + attr)

    def __call__(self, *args, **kwargs):
        return _OutOfScope(self._name + "()")


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _OutOfScope(self.__name__ + "." + attr)


import megengine  # noqa: E402  (the facade, through the alias)

for _name in STUBBED:
    if _name not in sys.modules:
        try:
            __import__(_name)
            continue  # the facade provides it after all
        except ImportError:
            pass
        sys.modules[_name] = _StubModule(_name)
        parent, _, leaf = _name.rpartition(".")
        __import__(parent)
        setattr(sys.modules[parent], leaf, sys.modules[_name])

_results = {{}}
_deselected = []


def _reason(item):
    fname = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
    for f, prefix, why in DESELECT:
        if fname == f and item.name.startswith(prefix):
            return why
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "require_ngpu(n): upstream marker")
    config.addinivalue_line("markers", "isolated_distributed: upstream marker")
    config.addinivalue_line("markers", "distributed_isolated: upstream marker")
    config.addinivalue_line("markers", "require_higher_order_directive: upstream marker")


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        why = _reason(item)
        if why is None:
            keep.append(item)
        else:
            drop.append(item)
            _deselected.append([item.nodeid, why])
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        fname = report.nodeid.split("::")[0].rsplit("/", 1)[-1]
        outcome = report.outcome
        if report.when != "call":
            outcome = f"{{outcome}} ({{report.when}})"
        if report.nodeid not in _results.get(fname, {{}}) or report.outcome != "passed":
            _results.setdefault(fname, {{}})[report.nodeid] = outcome


def pytest_collectreport(report):
    if report.outcome != "passed":
        fname = report.nodeid.rsplit("/", 1)[-1]
        _results.setdefault(fname, {{}})[report.nodeid] = "collection error"


def pytest_sessionfinish(session):
    with open(REPORT, "w") as f:
        json.dump({{"results": _results, "deselected": _deselected}}, f)
'''


def _test_root(path: pathlib.Path) -> pathlib.Path:
    for candidate in (path, path / "imperative" / "python" / "test", path / "test"):
        if (candidate / FILES[0]).is_file():
            return candidate
    raise SystemExit(
        f"{path}: no {FILES[0]} under it; pass a MegEngine checkout or its "
        "imperative/python/test directory"
    )


def run(path: pathlib.Path, pytest_args: list[str], files: list[str] | None = None) -> int:
    files = list(FILES if files is None else files)
    root = _test_root(path)
    src = pathlib.Path(__file__).resolve().parent.parent / "src"
    with tempfile.TemporaryDirectory(prefix="mge-conformance-") as tmp:
        work = pathlib.Path(tmp)
        report = work / "report.json"
        for rel in files + [h for h in HELPERS if (root / h).is_file()]:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(root / rel, work / rel)
        (work / "conftest.py").write_text(
            _CONFTEST.format(stubbed=STUBBED, deselect=DESELECT, report=str(report))
        )
        (work / "pytest.ini").write_text("[pytest]\n")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:benchmark",
            "--continue-on-collection-errors",
            "--rootdir",
            str(work),
            "-c",
            str(work / "pytest.ini"),
            *pytest_args,
            *files,
        ]
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
        if not report.is_file():
            print(proc.stdout[-4000:], proc.stderr[-4000:])
            return 2
        data = json.loads(report.read_text())
    return _print_report(data, proc, files)


def _print_report(data: dict, proc: subprocess.CompletedProcess, files: list[str]) -> int:
    results, deselected = data["results"], data["deselected"]
    total_pass = total = 0
    import numpy

    print(f"MegEngine 1.13 autodiff tests on the tapegrad facade (NumPy {numpy.__version__})\n")
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        outcomes = results.get(name, {})
        n_pass = sum(1 for o in outcomes.values() if o == "passed")
        n_desel = sum(1 for nid, _ in deselected if nid.split("::")[0].endswith(name))
        total_pass += n_pass
        total += len(outcomes)
        print(f"{rel:40s} {n_pass:3d}/{len(outcomes):<3d} passed   {n_desel:3d} deselected")
        for nid, outcome in sorted(outcomes.items()):
            if outcome != "passed":
                test = nid.split("::", 1)[-1]
                why = NUMPY2.get(test) if int(numpy.__version__.split(".")[0]) >= 2 else None
                print(f"    {outcome:12s} {test}" + (f"   [NumPy 2: {why}]" if why else ""))
    print(f"\n{'in scope':40s} {total_pass:3d}/{total:<3d} passed")
    print(f"\ndeselected ({len(deselected)}):")
    for nid, why in deselected:
        print(f"    {nid.split('::', 1)[-1]:45s} {why}")
    if total_pass != total:
        print("\n--- pytest output (tail) ---")
        print(proc.stdout[-6000:])
    return 0 if total_pass == total and total else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "path",
        type=pathlib.Path,
        help="a MegEngine checkout, or its imperative/python/test directory",
    )
    parser.add_argument(
        "--files",
        nargs="+",
        choices=FILES,
        default=list(FILES),
        metavar="FILE",
        help="run only these upstream files (default: all of them)",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    # everything after "--" goes to pytest (split here: argparse would give it to PATH's
    # neighbour only when no option comes between them)
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = parser.parse_args(argv)
    return run(args.path, pytest_args, args.files)


if __name__ == "__main__":
    sys.exit(main())
