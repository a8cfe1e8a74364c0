"""The API reference (docs/reference/*.md) shows every public name.

mkdocstrings renders a `::: module` directive from griffe's view of the module, and it
silently leaves out a member griffe cannot resolve or that the directive's filters drop.
These tests load the package through griffe exactly as mkdocs.yml configures it and check,
name by name, what the built pages would show. They need the `docs` extra (griffe, PyYAML)
and skip without it; `mkdocs build --strict` in .ci/run checks the rest of the site.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")
yaml = pytest.importorskip("yaml")

from test_public_docstrings import public_names  # noqa: E402  (tests/docs is on sys.path)

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: ([\w.]+)\n((?:(?:    .*)?\n)*)", re.MULTILINE)

# what the issue asks the reference to cover (module level for the facades)
REQUIRED = {
    "tapegrad",
    "tapegrad.Tensor",
    "tapegrad.nn",
    "tapegrad.nn.functional",
    "tapegrad.optim",
    "tapegrad.data",
    "tapegrad.autograd",
    "tapegrad.autodiff",
    "tapegrad.func",
    "tapegrad.linalg",
    "tapegrad.distributed",
    "tapegrad.distributions",
    "tapegrad.compat.torch",
    "tapegrad.compat.mxnet",
    "tapegrad.compat.megengine",
}


def _handler_config() -> dict:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            return plugin["mkdocstrings"]["handlers"]["python"]
    raise AssertionError("mkdocs.yml: no mkdocstrings plugin")


def directives() -> list[tuple[str, str, dict]]:
    """(page name, identifier, options) for every `::: identifier` in the reference."""
    found = []
    for page in sorted(REFERENCE.glob("*.md")):
        for m in DIRECTIVE.finditer(page.read_text()):
            block = yaml.safe_load(textwrap.dedent(m.group(2))) or {}
            found.append((page.name, m.group(1), block.get("options", {})))
    return found


@pytest.fixture(scope="module")
def loaded():
    """The package as mkdocstrings sees it: griffe with mkdocs.yml's paths and options."""
    handler = _handler_config()
    options = handler["options"]
    loader = griffe.GriffeLoader(
        search_paths=[str(ROOT / p) for p in handler["paths"]] + sys.path,
        force_inspection=options.get("force_inspection", False),
        extensions=griffe.load_extensions(*[str(ROOT / e) for e in options.get("extensions", [])]),
    )
    package = loader.load("tapegrad")
    loader.resolve_aliases(implicit=False, external=None)
    return package, options


def _passes(name: str, member, filters) -> bool:
    if filters == "public":
        return member.is_public
    # mkdocstrings' regex filters: "!pattern" drops matching names, "pattern" keeps them
    return all(
        (re.search(f[1:], name) is None) if f.startswith("!") else (re.search(f, name) is not None)
        for f in filters
    )


def test_every_required_module_has_a_reference_directive():
    missing = REQUIRED - {ident for _, ident, _ in directives()}
    assert not missing, f"no `::: name` directive in docs/reference/ for {sorted(missing)}"


def test_every_reference_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [p.name for p in REFERENCE.glob("*.md") if f"reference/{p.name}" not in nav]
    assert not missing, f"reference pages missing from mkdocs.yml's nav: {missing}"


@pytest.mark.parametrize(
    "page,ident,page_options",
    [d for d in directives() if d[1] != "tapegrad.Tensor"],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_each_public_name_is_rendered(loaded, page, ident, page_options):
    package, options = loaded
    module = importlib.import_module(ident)
    filters = page_options.get("filters", options.get("filters", ["!^_[^_]"]))
    documented_elsewhere = {i for _, i, _ in directives()}
    node = package[ident.removeprefix("tapegrad.")] if ident != "tapegrad" else package
    problems = []
    for name in public_names(module):
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            continue  # a subpackage gets a page (or a section) of its own
        if not (inspect.isclass(obj) or callable(obj)):
            continue  # data: checked against the page text below
        member = node.members.get(name)
        if member is None:
            problems.append(f"{name}: griffe does not see it")
            continue
        try:
            doc = member.docstring
        except griffe.AliasResolutionError:
            problems.append(
                f"{name}: griffe cannot resolve where it is defined "
                f"(a factory-made function needs __qualname__ set?)"
            )
            continue
        if not _passes(name, member, filters):
            if f"{ident}.{name}" not in documented_elsewhere:
                problems.append(f"{name}: the page's filters {filters} drop it")
        elif doc is None or not doc.value.strip():
            problems.append(f"{name}: no docstring as griffe reads it")
    assert not problems, f"{page} (::: {ident}) would not show: {problems}"


def _installed_by_a_facade(attr) -> bool:
    # the MXNet facade adds its array methods to the core class at import (noted in the
    # issue tracker); they are the facade's, documented in docs/migrating-from-mxnet.md
    fn = attr.fget if isinstance(attr, property) else attr
    return (getattr(fn, "__module__", "") or "").startswith("tapegrad.compat")


def test_tensor_methods_are_rendered(loaded):
    import tapegrad as tg

    package, _ = loaded
    tensor = package["Tensor"]
    text = (REFERENCE / "tensor.md").read_text()
    missing = []
    names = [n for n in dir(tg.Tensor) if not n.startswith("_")]
    for name in names:
        attr = inspect.getattr_static(tg.Tensor, name)
        if _installed_by_a_facade(attr):
            continue
        if inspect.ismemberdescriptor(attr):  # a __slots__ entry: no docstring possible
            if f"`{name}`" not in text:
                missing.append(f"{name} (a slot: describe it in tensor.md)")
            continue
        member = tensor.members.get(name)
        if member is None or not (member.docstring and member.docstring.value.strip()):
            missing.append(name)
    assert len(names) > 150 and not missing, f"tensor.md would not show: {missing}"


def test_top_level_data_is_on_the_tapegrad_page():
    import tapegrad as tg

    text = (REFERENCE / "tapegrad.md").read_text()
    data = [
        n
        for n in dir(tg)
        if not n.startswith("_")
        and n != "annotations"
        and not isinstance(getattr(tg, n), types.ModuleType)
        and not callable(getattr(tg, n))
    ]
    assert "float32" in data
    missing = [n for n in data if f"`tg.{n}`" not in text]
    assert not missing, f"docs/reference/tapegrad.md does not mention: {missing}"


def _plumbing():
    import importlib.util

    spec = importlib.util.spec_from_file_location("plumbing", ROOT / "docs/_griffe/plumbing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_doctest_examples_become_fenced_code():
    fence = _plumbing().fence_doctests
    assert fence("Sum.\n>>> tg.ones(2).sum()\ntensor(2.)\n\nMore.") == (
        "Sum.\n\n```pycon\n>>> tg.ones(2).sum()\ntensor(2.)\n```\n\nMore."
    )
    # indented by four (a code block to Markdown already): the fence goes to column 0
    assert fence("Top.\n\n    >>> f(1)\n    [0, 1]") == "Top.\n\n```pycon\n>>> f(1)\n[0, 1]\n```"
    assert fence("No example here.") == "No example here."


def test_the_reference_sees_fenced_examples(loaded):
    package, _ = loaded
    doc = package["randperm"].docstring.value
    assert "```pycon\n>>> sorted(tg.randperm(4).tolist())" in doc
