"""The tutorials and guides run as written.

Each page's ```python blocks run in order, in one namespace, in a fresh directory. Every
block is followed (before the next python block) by a ```text block holding exactly what
it prints; the test compares the two, numbers to within rounding (rel 1e-4). A block
without an output block is an error, so no code on these pages goes unchecked. A page
whose code imports torch is skipped when PyTorch is not installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = [
    "index.md",
    "getting-started.md",
    "tutorials/ambient.md",
    "tutorials/record-scope.md",
    "tutorials/gradmanager.md",
    "guides/devices.md",
    "guides/exporting-to-pytorch.md",
]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NUMBER = re.compile(r"([-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)")


def examples(page: str) -> list[tuple[int, str, str | None]]:
    """(line, code, expected output or None) for each python block of `page`, in order."""
    text = (DOCS / page).read_text()
    found: list[list] = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        if lang == "python":
            found.append([text.count("\n", 0, m.start()) + 1, body, None])
        elif lang == "text" and found and found[-1][2] is None:
            found[-1][2] = body
    return [tuple(f) for f in found]


def same_output(actual: str, expected: str) -> bool:
    """Equal line by line; numbers may differ in the last printed digit."""
    a_lines = [line.rstrip() for line in actual.strip("\n").splitlines()]
    e_lines = [line.rstrip() for line in expected.strip("\n").splitlines()]
    if len(a_lines) != len(e_lines):
        return False
    for a, e in zip(a_lines, e_lines):
        a_parts, e_parts = NUMBER.split(a), NUMBER.split(e)
        if len(a_parts) != len(e_parts):
            return False
        for i, (x, y) in enumerate(zip(a_parts, e_parts)):
            if i % 2 == 0:
                if x != y:
                    return False
            elif not math.isclose(float(x), float(y), rel_tol=1e-4, abs_tol=1e-6):
                return False
    return True


def test_same_output_compares_what_it_should():
    assert same_output("tensor([2., 4., 6.])\n", "tensor([2., 4., 6.])")
    assert same_output("loss 0.123456", "loss 0.123457")
    assert not same_output("tensor([2., 4., 7.])", "tensor([2., 4., 6.])")
    assert not same_output("True", "False")
    assert not same_output("a\nb", "a")


@pytest.mark.parametrize("page", PAGES)
def test_every_python_block_shows_its_output(page):
    blocks = examples(page)
    assert blocks, f"{page} has no python blocks"
    missing = [line for line, _, expected in blocks if expected is None]
    assert not missing, (
        f"docs/{page}: the python blocks at lines {missing} have no ```text output block "
        f"after them; print what the block shows and put the output below it"
    )


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_and_prints_what_it_says(page, tmp_path, monkeypatch):
    blocks = examples(page)
    if (
        any(re.search(r"^\s*(import torch|from torch)\b", code, re.M) for _, code, _ in blocks)
        and importlib.util.find_spec("torch") is None
    ):
        pytest.skip(f"{page} needs PyTorch")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for line, code, expected in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile("\n" * line + code, f"docs/{page}", "exec"), namespace)  # noqa: S102
        assert expected is not None and same_output(out.getvalue(), expected), (
            f"docs/{page}, the block at line {line} printed\n{out.getvalue()}\n"
            f"but the page says\n{expected}"
        )
