"""The scripts of tools/framework_scripts/, with only their import lines pointed at the
facades, print the numbers the real frameworks printed (saved by
`tools/compare_frameworks.py --save`: Apache MXNet 1.9.1, MegEngine 1.13.0, PyTorch)."""

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

import tapegrad as tg

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tools" / "framework_scripts"
EXPECTED = SCRIPTS / "expected"

_IMPORT = re.compile(r"^import (mxnet|megengine|torch)((?:\.\w+)*)(?: as (\w+))?$", re.M)
_FROM = re.compile(r"^from (mxnet|megengine|torch)((?:\.\w+)*) import ", re.M)


def _compare_tool():
    spec = importlib.util.spec_from_file_location(
        "compare_frameworks", ROOT / "tools" / "compare_frameworks.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def facade_source(text: str) -> str:
    """The script with its framework imports pointed at the facades (nothing else changed)."""

    def plain(m):
        alias = m.group(3) or m.group(1)
        return f"import tapegrad.compat.{m.group(1)}{m.group(2)} as {alias}"

    text = _IMPORT.sub(plain, text)
    return _FROM.sub(lambda m: f"from tapegrad.compat.{m.group(1)}{m.group(2)} import ", text)


def test_import_rewrite_changes_only_import_lines():
    src = "import mxnet as mx\nfrom mxnet.gluon import nn\nimport torch\nx = 1\n"
    assert facade_source(src) == (
        "import tapegrad.compat.mxnet as mx\nfrom tapegrad.compat.mxnet.gluon import nn\n"
        "import tapegrad.compat.torch as torch\nx = 1\n"
    )


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*_*.py")))
def test_script_prints_the_frameworks_numbers(script):
    expected = EXPECTED / (Path(script).stem + ".txt")
    if not expected.exists():
        pytest.skip(f"no saved output of the real framework for {script}")
    source = facade_source((SCRIPTS / script).read_text())
    out = io.StringIO()
    tg.manual_seed(0)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, script, "exec"), {"__name__": "__main__"})
    finally:
        if script.startswith("mxnet"):  # npx.set_np() is process-wide, as in MXNet
            from tapegrad.compat import mxnet as mx

            mx.npx.reset_np()
    count, worst, problems = _compare_tool().compare(
        expected.read_text(), out.getvalue(), rtol=1e-4, atol=1e-5
    )
    assert not problems, "\n".join(problems)
    assert count > 10
