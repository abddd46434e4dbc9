"""The import graph of the workbench package: no cycles, and the record at the bottom.

Every ``import`` statement counts, function-level ones included (a lazy import
is still a dependency); imports under ``if TYPE_CHECKING:`` do not run and do
not count. The graph is built from the source, so a module does not have to
import cleanly on this machine to be checked.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the workbench modules it imports (``from pkg import sub`` points at ``pkg.sub``)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        package = name if is_pkg else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    while parts and ".".join(parts) not in mods:
                        parts.pop()
                    if parts:
                        deps.add(".".join(parts))
                continue
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] != "workbench":
                continue
            for alias in node.names:
                deps.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    assert "workbench.api" in graph["workbench"]  # workbench.benchmark loads it on first use
    assert "workbench.record" in graph["workbench.store"]


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_workbench_modules():
    graph = import_graph()
    found = cycles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in found]
    assert not found, json.dumps(detail, indent=1)


def test_the_record_is_the_bottom_layer():
    graph = import_graph()
    assert graph["workbench.record"] == set()
    for layer in ("workbench.store", "workbench.stats_compare"):
        assert not {m for m in graph[layer] if m.startswith(("workbench.harness", "workbench.catalog"))}, layer
    readers = [m for m in graph if m.startswith(("workbench.report", "workbench.ui"))]
    assert not {d for m in readers for d in graph[m] if d.startswith("workbench.harness")}


def test_importing_the_store_does_not_import_the_harness(run_python):
    proc = run_python(code="import sys, workbench.store\n"
                           "print(sorted(m for m in sys.modules if m.startswith('workbench.')))")
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout
    assert "workbench.store" in loaded and "workbench.record" in loaded
    assert "workbench.harness" not in loaded, loaded
