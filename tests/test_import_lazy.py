"""What `import tapegrad` leaves for first use, and that the lazy names resolve to the right
objects (bench W7 measures the time; this checks the mechanism, in fresh interpreters)."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

import tapegrad as tg

# loaded on first use: importing tapegrad must not pull these in
_DEFERRED = (
    "tapegrad.nn",
    "tapegrad.data",
    "tapegrad.distributed",
    "tapegrad.func",
    "tapegrad.io",
    "tapegrad.interop",
    "tapegrad.sampling",
    "tapegrad.threads",
    "tapegrad.autograd.anomaly",
    "tapegrad.autograd.forward_ad",
    "tapegrad.autograd.function",
    "tapegrad.autograd.functional",
    "tapegrad.autograd.grad_manager",
    "tapegrad.autograd.graph",
    "json",  # tg.save / tg.load (its regexes are compiled when it is imported)
    "numpy.typing",  # annotations only
    "concurrent.futures",  # the intra-op thread pool (off by default), and logging with it
)


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_import_tapegrad_defers_the_optional_parts():
    loaded = _run(
        f"import sys, tapegrad\nprint(' '.join(m for m in {_DEFERRED!r} if m in sys.modules))"
    )
    assert loaded == ""


def test_a_submodule_imported_later_does_not_replace_the_function_of_its_name():
    # `tg.autograd.record` and `tg.autograd.gradcheck` are functions living in modules of
    # the same name; importing those modules later must leave the functions in place
    out = _run(
        "import tapegrad as tg, tapegrad.autograd.record, tapegrad.autograd.gradcheck\n"
        "print(type(tg.autograd.record).__name__, type(tg.autograd.gradcheck).__name__)"
    )
    assert out == "function function"


def test_every_lazy_autograd_name_resolves():
    for name in tg.autograd.__all__:
        value = getattr(tg.autograd, name)
        assert not isinstance(value, types.ModuleType), name
        assert name in dir(tg.autograd)
    assert tg.autograd.Function.__module__ == "tapegrad.autograd.function"
    assert tg.autograd.GradManager.__module__ == "tapegrad.autograd.grad_manager"
    for sub in ("anomaly", "forward_ad", "function", "functional", "grad_manager", "graph"):
        assert isinstance(getattr(tg.autograd, sub), types.ModuleType), sub
    namespace: dict[str, object] = {}
    exec("from tapegrad.autograd import *", namespace)
    assert namespace["Function"] is tg.autograd.Function
    assert namespace["detect_anomaly"] is tg.autograd.detect_anomaly


def test_lazy_top_level_functions_resolve_and_are_listed():
    from tapegrad.io import load, save

    assert tg.save is save and tg.load is load
    assert tg.from_dlpack.__module__ == "tapegrad.interop"
    assert tg.multinomial.__module__ == "tapegrad.sampling"
    assert tg.get_num_threads() >= 1 and callable(tg.set_num_threads)
    assert {"save", "load", "from_dlpack", "multinomial"} <= set(dir(tg))
    out = _run("from tapegrad import save, multinomial\nprint(save.__module__)")
    assert out == "tapegrad.io"


def test_an_unknown_name_still_raises_attribute_error_naming_it():
    for module in (tg, tg.autograd):
        with pytest.raises(AttributeError, match="no_such_thing"):
            _ = module.no_such_thing


def _declared_for_type_checkers(package) -> dict[str, str]:
    """name -> "module.name" that `package`'s `if TYPE_CHECKING:` block imports."""
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(package.__file__).read_text())
    block = next(
        n
        for n in tree.body
        if isinstance(n, ast.If)
        and isinstance(n.test, ast.Attribute)
        and n.test.attr == "TYPE_CHECKING"
    )
    declared = {}
    for node in block.body:
        if isinstance(node, ast.Import):
            continue  # a module the annotations need, not a lazy name
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            assert alias.asname == alias.name  # `as` re-exports it under --strict
            declared[alias.name] = f"{node.module or ''}.{alias.name}".strip(".")
    return declared


def test_type_checkers_see_every_lazy_name():
    """`tg.nn`, `tg.save`, ... exist only through `__getattr__` at run time, which a type
    checker reads as `object` (`tg.nn.Linear` was an error to mypy); the package declares each
    one under TYPE_CHECKING, as the module or function `__getattr__` returns."""
    declared = _declared_for_type_checkers(tg)
    expected = set(tg._LAZY_SUBPACKAGES) | set(tg._LAZY_FUNCTIONS) | {"compile", "bfloat16"}
    assert set(declared) == expected
    for name, where in tg._LAZY_FUNCTIONS.items():
        assert declared[name] == f"{where}.{name}"
    assert declared["compile"] == "compile.api.compile"


def test_type_checkers_see_the_lazy_names_of_autograd_and_compile():
    import importlib

    autograd = importlib.import_module("tapegrad.autograd")
    declared = _declared_for_type_checkers(autograd)
    assert set(declared) == set(autograd._LAZY) | autograd._LAZY_SUBMODULES
    for name, where in autograd._LAZY.items():
        assert declared[name] == f"{where}.{name}"
    utils = importlib.import_module("tapegrad.utils")
    assert _declared_for_type_checkers(utils) == {name: name for name in utils._LAZY}
    compile_package = sys.modules["tapegrad.compile"]  # `tg.compile` is the function
    declared = _declared_for_type_checkers(compile_package)
    assert declared == {name: f"api.{name}" for name in compile_package._FROM_API}


def test_the_package_re_exports_its_explicit_imports():
    """`from .tensor import Tensor` alone is private to a checker that wants re-exports
    explicit (mypy --strict said `tg.Tensor` was not defined): each name the package imports
    by name at the top level is written `name as name` (star imports re-export `__all__`)."""
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(tg.__file__).read_text())
    plain = [
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
        if alias.name != "*" and alias.asname != alias.name
    ]
    assert plain == []
    assert {"Tensor", "float32", "manual_seed", "autograd"} <= set(vars(tg))
