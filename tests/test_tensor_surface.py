"""Tensor's one method table, the generated typed surface, and what may change Tensor.

The typed surface (`src/tapegrad/_tensor_surface.py`) is generated from
`tapegrad.ops.tensor_methods.TENSOR_METHODS` by tools/gen_tensor_surface.py; these tests fail
when it is stale or when Tensor at run time has an attribute neither tensor.py nor the
surface declares.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import tapegrad as tg
from tapegrad.ops.tensor_methods import FORWARDS_TO, TENSOR_METHODS

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "tapegrad"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_tensor_surface", ROOT / "tools" / "gen_tensor_surface.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _class_names(path: Path, cls: str) -> set[str]:
    """Names a class body in `path` defines (methods, assignments, slots)."""
    tree = ast.parse(path.read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "__slots__":
                        names.update(ast.literal_eval(node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _run(code: str) -> object:
    """Run `code` in a fresh interpreter (no facade imported by other tests) and return the
    JSON it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_surface_file_is_current():
    expected = _generator().render()
    current = (SRC / "_tensor_surface.py").read_text()
    assert current == expected, (
        "src/tapegrad/_tensor_surface.py is stale: run python tools/gen_tensor_surface.py"
    )


def test_surface_declares_every_table_entry_once():
    surface = _class_names(SRC / "_tensor_surface.py", "TensorSurface")
    assert surface == set(TENSOR_METHODS)
    # the table never silently replaces something tensor.py defines
    assert not set(TENSOR_METHODS) & _class_names(SRC / "tensor.py", "Tensor")


def test_surface_stubs_take_an_unannotated_self():
    """A stub rendered from `abs(input: Tensor)` must not read `abs(self: Tensor)`: Tensor
    subclasses TensorSurface, so mypy rejects such a `self` (it did, 24 times)."""
    tree = ast.parse((SRC / "_tensor_surface.py").read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef)).body
    stubs = [n for n in body if isinstance(n, ast.FunctionDef)]
    assert len(stubs) == len(TENSOR_METHODS)
    annotated = [n.name for n in stubs if n.args.args and n.args.args[0].annotation is not None]
    assert annotated == []
    assert all(n.args.args and n.args.args[0].arg == "self" for n in stubs)


def test_runtime_tensor_is_tensor_py_plus_the_surface():
    """In a fresh `import tapegrad`: every attribute of Tensor comes from tensor.py's class
    body or the surface, and every surface name is installed, as the table's own object."""
    runtime = _run(
        "import json, tapegrad as tg\n"
        "from tapegrad.ops.tensor_methods import TENSOR_METHODS as M\n"
        "v = vars(tg.Tensor)\n"
        "print(json.dumps({'names': sorted(v), 'public': sorted(dir(tg.Tensor)),\n"
        "  'not_table': sorted(n for n in M if v.get(n) is not M[n])}))\n"
    )
    surface = _class_names(SRC / "_tensor_surface.py", "TensorSurface")
    own = _class_names(SRC / "tensor.py", "Tensor")
    implicit = {
        "__module__",
        "__qualname__",
        "__doc__",
        "__dict__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
        "__orig_bases__",
    }
    extra = set(runtime["names"]) - own - surface - implicit
    assert not extra, f"Tensor attributes neither tensor.py nor the surface declares: {extra}"
    assert not surface - set(runtime["names"]), "surface names that aren't installed"
    assert runtime["not_table"] == [], "installed objects that aren't the table's"
    public = {n for n in runtime["public"] if not n.startswith("_")}
    assert public <= own | surface
    assert {"sum", "backward", "softmax", "exp_", "T"} <= public  # the check sees real names


def test_inplace_variant_takes_its_ops_parameters():
    t = tg.tensor([1.0, 4.0])
    assert t.pow_(2) is t
    assert t.tolist() == [1.0, 16.0]
    assert "y" in inspect.signature(TENSOR_METHODS["pow_"].inplace_of.forward).parameters


@pytest.mark.parametrize("name", sorted(FORWARDS_TO))
def test_forwarder_has_its_targets_signature(name):
    """Methods defined outside the op table forward to their function: same parameters."""
    module_name, fn_name = FORWARDS_TO[name].split(":")
    target = getattr(importlib.import_module(module_name), fn_name)
    mine = list(inspect.signature(TENSOR_METHODS[name]).parameters.values())
    theirs = list(inspect.signature(target).parameters.values())
    assert [(p.name, p.kind, p.default) for p in mine[1:]] == [
        (p.name, p.kind, p.default) for p in theirs[1:]
    ]
    assert mine[0].kind is theirs[0].kind


def test_forwarders_reach_their_functions():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.log_softmax(0)
    assert tg.allclose(y, tg.nn.functional.log_softmax(x, 0))
    assert tg.allclose(x.softmax(0), y.exp())
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    z = tg.tensor([1.0, 2.0])
    z.attach_grad()
    assert z.grad.tolist() == [0.0, 0.0]


def test_package_ships_py_typed():
    assert resources.files("tapegrad").joinpath("py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"py.typed"' in pyproject


def test_importing_facades_changes_nothing_in_tensor():
    changed = _run(
        "import json, tapegrad as tg\n"
        "before = dict(vars(tg.Tensor)); names = dir(tg.Tensor)\n"
        "import tapegrad.compat.mxnet, tapegrad.compat.megengine, tapegrad.compat.torch\n"
        "after = vars(tg.Tensor)\n"
        "print(json.dumps({'dir_same': dir(tg.Tensor) == names,\n"
        "  'changed': sorted(n for n in set(before) | set(after)\n"
        "                    if before.get(n) is not after.get(n))}))\n"
    )
    assert changed == {"dir_same": True, "changed": []}
