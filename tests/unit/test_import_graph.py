"""The import graph of the workbench package: no cycles, and layers that hold.

:data:`LAYERS` is the one statement of the package's layer order, bottom first: a module may import its
own layer and the layers below it, never one above (a lazy import inside a function counts too).

Every ``import`` statement counts, function-level ones included (a lazy import
is still a dependency), and so do imports under ``if TYPE_CHECKING:`` (a
type-only import is still a tie between two modules). The graph is built from the source, so a module does not have to
import cleanly on this machine to be checked.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"


#: The layers of the package, bottom first; each names a folder (subpackage) or root module of ``workbench``
#: (``"workbench"`` is the package's own ``__init__``), or a submodule that sits in another layer than its folder
#: (``roofs.probe`` and ``roofs.peaks`` measure this machine by running cells, so they sit above the harness
#: that the rest of ``roofs`` serves). Every module belongs to one layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core: the row, statuses, units, timestamps, threads, plain data", ("core", "version")),
    ("judge: statistics, verdicts, comparisons", ("judge",)),
    ("catalog: what a kernel is, its variants, loading by path", ("catalog",)),
    ("roofs: the limits a row is judged against, and what it reached", ("roofs",)),
    ("backends: one adapter per runtime", ("backends",)),
    ("device code: portable sources, execution plans", ("portable", "execution")),
    ("authoring: a helper per runtime, variant families", ("authoring",)),
    ("store: runs, rows, environments, import/export; the configuration file", ("store", "config")),
    ("history: series of a cell on a machine across runs, their change points", ("history",)),
    ("measure: one cell timed, audited and checked, in a worker", ("measure",)),
    ("runs: sweeps, verification, tuning, roof probes, clusters", ("roofs.probe", "roofs.peaks", "cluster", "sweep",
                                                                    "tuning")),
    ("report", ("report",)),
    ("entry points: Python API, notebooks, dashboard, command line", ("api", "adhoc", "tutorial", "ui", "magics",
                                                                      "cli", "__main__", "workbench")),
)

#: Upward imports that need a design change in a module another change owns, each with its reason; remove an
#: entry when its import goes. ``(importer, imported)`` module names.
TEMPORARY_EXCEPTIONS: dict[tuple[str, str], str] = {}


def unit(module: str) -> str:
    """The name :data:`LAYERS` places ``module`` by: the longest one that is it or a package above it
    (``workbench.catalog.spec`` -> ``catalog``, ``workbench.core.units`` -> ``report.units``); the package
    itself -> ``workbench``; a module no layer names -> its top-level name."""
    if module == "workbench":
        return module
    parts = module.split(".")[1:]
    placed = {u for _, units in LAYERS for u in units}
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in placed:
            return ".".join(parts[:n])
    return parts[0]


def layer_of() -> dict[str, int]:
    """Placed name -> its layer's index (0 at the bottom)."""
    return {u: i for i, (_, units) in enumerate(LAYERS) for u in units}


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` pairs where the imported module sits in a higher layer."""
    level = layer_of()
    return sorted((m, d) for m, deps in graph.items() for d in deps
                  if unit(d) in level and unit(m) in level and level[unit(d)] > level[unit(m)])


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth: under ``if TYPE_CHECKING:`` too (a type-only import still ties two
    modules together, and a loop through one is still a loop)."""
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


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
    assert "workbench.core.record" in graph["workbench.store.database"]


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_workbench_modules():
    graph = import_graph()
    found = cycles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in found]
    assert not found, json.dumps(detail, indent=1)


def test_every_module_has_a_layer():
    level = layer_of()
    assert len(level) == sum(len(units) for _, units in LAYERS), "a unit is named in two layers"
    unplaced = sorted({unit(m) for m in import_graph()} - set(level))
    assert not unplaced, f"place these in LAYERS (tests/unit/test_import_graph.py): {unplaced}"


def test_the_layer_checker_finds_an_upward_import():
    assert upward_imports({"workbench.catalog.registry": {"workbench.tuning.resolve", "workbench.core.dtypes"},
                           "workbench.tuning.resolve": {"workbench.catalog.spec"}}) == [
        ("workbench.catalog.registry", "workbench.tuning.resolve")]


def test_no_module_imports_a_layer_above_its_own():
    found = [pair for pair in upward_imports(import_graph()) if pair not in TEMPORARY_EXCEPTIONS]
    level = layer_of()
    detail = [f"{m} ({LAYERS[level[unit(m)]][0]}) imports {d} ({LAYERS[level[unit(d)]][0]})" for m, d in found]
    assert not found, "\n".join(detail)


def test_temporary_exceptions_are_still_needed():
    stale = set(TEMPORARY_EXCEPTIONS) - set(upward_imports(import_graph()))
    assert not stale, f"remove from TEMPORARY_EXCEPTIONS: {sorted(stale)}"


def test_the_record_is_the_bottom_layer():
    graph = import_graph()
    assert graph["workbench.core.status"] == set()
    # the status names, and nothing else of the package
    assert graph["workbench.core.record"] == {"workbench.core.status"}
    for layer in ("workbench.store.database", "workbench.judge.compare"):
        assert not {m for m in graph[layer] if m.startswith(("workbench.measure", "workbench.catalog"))}, layer
    readers = [m for m in graph if m.startswith(("workbench.report", "workbench.ui"))]
    assert not {d for m in readers for d in graph[m] if d.startswith("workbench.measure")}


def test_importing_the_store_does_not_import_the_harness(run_python):
    proc = run_python(code="import sys, workbench.store.database\n"
                           "print(sorted(m for m in sys.modules if m.startswith('workbench.')))")
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stdout
    assert "workbench.store.database" in loaded and "workbench.core.record" in loaded
    assert "workbench.measure" not in loaded, loaded
