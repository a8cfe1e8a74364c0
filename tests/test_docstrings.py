"""Every `>>>` example in the docstrings of `src/tapegrad` runs and prints what it shows.

One test per module. Each example sees the module's own names plus `tg` (tapegrad) and `np`
(NumPy), the names the docs use throughout, and inside a facade its usual short name (`mx`
under `tapegrad.compat.mxnet`, `mge` under `tapegrad.compat.megengine`); anything else it must
import or define itself. Examples run in a fresh temporary directory (they may write files)
with tapegrad's generator seeded with 0. Output is compared exactly, except that runs of
whitespace are equal and `...` matches anything (`doctest.ELLIPSIS | NORMALIZE_WHITESPACE`).

Also here: the "Layout" tree of docs/design.md lists every module of src/tapegrad, and no other.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pathlib
import pkgutil
import sys

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.engine import state as engine_state

# Modules whose examples cannot run here, and why. Keep this short: an example that could run
# with a line of setup should get that line instead.
SKIPPED = {
    # runs a script under a real framework's name; its examples are shell command lines
    "tapegrad.compat.run": "runs scripts as the real frameworks; no in-process example",
}
# Modules that need an optional extra: their examples run when the extra is installed.
NEEDS = {
    "tapegrad.viz": "graphviz",
    "tapegrad.utils.tensorboard": "tensorboard",
    "tapegrad.compat.torch.utils.tensorboard": "tensorboard",
}


# the name a facade's own docs use for it, as its users write `import mxnet as mx`
FACADE_NAMES = {
    "tapegrad.compat.mxnet": "mx",
    "tapegrad.compat.megengine": "mge",
}


def _module_names() -> list[str]:
    names = ["tapegrad"]
    for info in pkgutil.walk_packages(tg.__path__, prefix="tapegrad."):
        names.append(info.name)
    return sorted(names)


def _examples(name: str, globs: dict | None = None) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name, globs=globs)
    return [t for t in tests if t.examples]


ALL_MODULES = _module_names()


def _missing_extra(name: str) -> bool:
    return name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None


# the ones with something to run (a module needing an absent extra is listed, then skipped)
MODULES = [m for m in ALL_MODULES if _missing_extra(m) or _examples(m, {})]


def _state_snapshot() -> tuple:
    st = engine_state.state
    return (st.active, st.training, st.inference, st.anomaly, len(st.saved_modes))


FRAMEWORK_NAMES = ("torch", "mxnet", "megengine")


def _aliases() -> tuple:
    """tapegrad's import hooks, and the framework names that import a facade (compat.alias)."""
    hooks = tuple(f for f in sys.meta_path if type(f).__module__.startswith("tapegrad."))
    names = tuple(
        n
        for n in FRAMEWORK_NAMES
        if getattr(sys.modules.get(n), "__name__", "").startswith("tapegrad.")
    )
    return hooks, names


def test_every_module_is_collected():
    # a walk that silently found nothing would make every test below pass
    assert "tapegrad.tensor" in ALL_MODULES and "tapegrad.engine.backward" in ALL_MODULES
    assert len(ALL_MODULES) > 100
    assert "tapegrad.tensor" in MODULES and "tapegrad.autograd.record" in MODULES
    assert len(MODULES) > 50


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    if name in SKIPPED:
        pytest.skip(SKIPPED[name])
    if _missing_extra(name):
        pytest.skip(f"needs {NEEDS[name]} (an optional extra)")
    globs = {**vars(importlib.import_module(name)), "tg": tg, "np": np}
    for package, short in FACADE_NAMES.items():
        if name == package or name.startswith(package + "."):
            globs[short] = importlib.import_module(package)
    examples = _examples(name, globs)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    monkeypatch.chdir(tmp_path)
    before = _state_snapshot()
    aliases_before = _aliases()
    report: list[str] = []
    try:
        for test in examples:
            tg.manual_seed(0)  # examples that draw random numbers show seeded values
            runner.run(test, out=report.append, clear_globs=True)
    finally:
        after = _state_snapshot()
        aliases_after = _aliases()
        if aliases_after != aliases_before:  # leave the next test a clean interpreter
            from tapegrad.compat import alias

            alias.uninstall(*aliases_after[1])
            sys.meta_path[:] = [f for f in sys.meta_path if f not in aliases_after[0]]
        st = engine_state.state
        st.active, st.training, st.inference, st.anomaly = before[:4]
        del st.saved_modes[before[4] :]
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} examples in {name} failed:\n" + "".join(report)
    assert after == before, (
        f"the examples of {name} left the recording state changed "
        f"(active, training, inference, anomaly, open scopes): {before} -> {after}; "
        "an example must restore what it changes (use the mode as a `with` block)"
    )
    assert aliases_after == aliases_before, (
        f"the examples of {name} left a facade installed under a framework's name "
        f"{aliases_after}; undo it in the example (alias.uninstall)"
    )


def _design_layout() -> tuple[set[str], set[str], set[str]]:
    """The "Layout" tree of docs/design.md: (module files, packages, packages listed whole)."""
    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    files, entries = set(), []
    stack: list[tuple[int, str]] = []  # (indent, directory) of the enclosing packages
    for line in block.splitlines()[1:]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        name = line.split()[0]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([d for _, d in stack] + [name.rstrip("/")])
        if name.endswith("/"):
            stack.append((indent, name.rstrip("/")))
            entries.append(path)
        elif name.endswith(".py"):
            files.add(path)
    # a package line with nothing listed under it stands for all of its modules
    whole = {p for p in entries if not any(f.startswith(p + "/") for f in files | set(entries))}
    return files, set(entries), whole


def test_design_layout_lists_every_module():
    src = pathlib.Path(tg.__file__).resolve().parents[1]
    actual = {p.relative_to(src).as_posix() for p in (src / "tapegrad").rglob("*.py")}
    files, packages, whole = _design_layout()
    covered = {
        f
        for f in actual
        if f in files
        or any(f.startswith(w + "/") for w in whole)
        or (f.endswith("/__init__.py") and f.rsplit("/", 1)[0] in packages)  # the package line
    }
    missing = sorted(actual - covered)
    stale = sorted(files - actual)
    assert not missing and not stale, (
        "docs/design.md, section Layout, is out of step with src/: "
        f"add a line for {missing}; remove the lines for {stale}"
    )
