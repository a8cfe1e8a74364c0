"""No import cycles at import time in src/tapegrad.

Reads every module with `ast` (nothing is imported), builds the graph of module-level imports
between tapegrad's own modules and fails on a cycle, printing it. Imports inside functions and
under `if TYPE_CHECKING:` run later (or never), so they are not edges; everything else at
module level, including inside `try:` and plain `if`, runs when the module is imported.

An edge goes to the module that holds the imported name: `from . import x` inside a package
points at the submodule `x` when there is one, `from .x import y` at `x` (and, as Python runs
it, at the packages on the way: importing `a.b.c` first runs `a/__init__` and `a/b/__init__`).
"""

from __future__ import annotations

import ast
import pathlib

import tapegrad

ROOT = pathlib.Path(tapegrad.__file__).parent
PACKAGE = "tapegrad"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time_statements(body: list[ast.stmt]):
    """The import statements that run when the module body runs (not in def/class bodies'
    functions, not under `if TYPE_CHECKING:`)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _import_time_statements(node.body)
            yield from _import_time_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _import_time_statements(block)
            for handler in node.handlers:
                yield from _import_time_statements(handler.body)
        elif isinstance(node, (ast.With, ast.For, ast.While, ast.ClassDef)):
            # a class body runs at import time too (a def body does not)
            yield from _import_time_statements(node.body)


def _with_parents(name: str, modules, importer: str) -> list[str]:
    """Importing `a.b.c` runs `a`, `a.b` and `a.b.c`: every one that is ours, except the
    importer's own packages, which are already running when it runs."""
    parts = name.split(".")
    chain = (".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return [m for m in chain if m in modules and not importer.startswith(m + ".")]


def _edges(name: str, path: pathlib.Path, modules) -> set[str]:
    """The modules whose body must have run for this module's body to run.

    `from pkg import sub` needs only the submodule `sub` when there is one; `from pkg import
    name` needs `pkg` itself, even when `pkg` is this module's own package (its body has not
    finished when this module runs: that is the cycle `pkg -> pkg.mod -> pkg`)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _import_time_statements(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.update(_with_parents(alias.name, modules, name))
            continue
        if node.level:
            base = package.split(".")
            if node.level > 1:
                base = base[: -(node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        out.update(_with_parents(target, modules, name))
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in modules:
                out.update(_with_parents(sub, modules, name))
            elif target in modules:
                out.add(target)  # a name defined in the module (or package) body
    out.discard(name)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _edges(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module, as one cycle each
    (iterative Tarjan, then one concrete path through the component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return [_cycle_through(c, graph) for c in components]


def _cycle_through(component: list[str], graph) -> list[str]:
    """One closed path inside a strongly connected component, starting at its first module."""
    members = set(component)
    start = component[0]
    parents = {start: None}
    queue = [start]
    while queue:  # breadth-first: the shortest way back to `start`
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while parents[path[-1]] is not None:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if child not in parents:
                parents[child] = node
                queue.append(child)
    return component  # unreachable for a real component


def test_the_graph_sees_the_modules():
    graph = import_graph()
    assert "tapegrad.ops.registry" in graph
    assert "tapegrad.tensor" in graph["tapegrad.ops.registry"]


def test_find_cycles_reports_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles at import time:\n" + "\n".join(
        "  " + " -> ".join(c) for c in cycles
    )
