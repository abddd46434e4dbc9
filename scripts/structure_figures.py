"""Structure figures of the `workbench` package, for before/after comparisons of refactors.

Prints: lines, functions over 50 and 80 lines (and the longest), functions annotated to return
``dict[str, Any]``, row-mutation sites (``row.update`` / ``row[...] =``), status names written as string
literals, and package-internal imports made inside functions. Run: ``python scripts/structure_figures.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"


def _status_names(package: Path) -> set[str]:
    """The values of ``workbench.core.status.Status``, read from its source (the script imports nothing of
    the package)."""
    tree = ast.parse((package / "core" / "status.py").read_text(encoding="utf-8"))
    enum = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Status")
    return {n.value.value for n in enum.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)}


def _status_literals(node: ast.AST, names: set[str]) -> int:
    """Status names written as string literals where a status is compared (``row["status"] == "ok"``,
    ``r.status in ("ok", "incorrect")``: another operand mentions ``status``) or set (``status="ok"``,
    ``{"status": "ok"}``, ``row["status"] = "ok"``). The same words used otherwise (a compiler diagnostic's
    ``"error"``, SQLite's ``"ok"``) are not statuses and do not count."""
    def is_name(n: ast.AST) -> bool:
        return isinstance(n, ast.Constant) and n.value in names

    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        literals = [sum(map(is_name, s.elts)) if isinstance(s, (ast.Tuple, ast.Set, ast.List)) else int(is_name(s))
                    for s in sides]
        mentions = ["status" in ast.unparse(s) for s in sides]
        return sum(n for i, n in enumerate(literals) if any(m for j, m in enumerate(mentions) if j != i))
    if isinstance(node, ast.keyword):
        return int(node.arg == "status" and is_name(node.value))
    if isinstance(node, ast.Dict):
        return sum(isinstance(k, ast.Constant) and k.value == "status" and is_name(v)
                   for k, v in zip(node.keys, node.values, strict=True))
    if isinstance(node, ast.Assign):
        return int(is_name(node.value) and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                                               and t.slice.value == "status" for t in node.targets))
    return 0


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _inner_package_imports(fn: ast.AST) -> int:
    count = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("workbench")):
            count += 1
        elif isinstance(node, ast.Import) and any(a.name.startswith("workbench") for a in node.names):
            count += 1
    return count


def figures(package: Path = PACKAGE) -> dict[str, object]:
    lines = long50 = long80 = dict_returns = row_sites = status_literals = inner_imports = 0
    longest: list[tuple[int, str]] = []
    names = _status_names(package)
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines += text.count("\n")
        tree = ast.parse(text)
        rel = path.relative_to(package.parent)
        for fn in _functions(tree):
            n = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            longest.append((n, f"{rel}:{fn.name}"))
            long50 += n > 50
            long80 += n > 80
            if fn.returns is not None and ast.unparse(fn.returns).replace(" ", "") == "dict[str,Any]":
                dict_returns += 1
        # package imports inside any function (nested ones counted once, at the outermost function)
        outer = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        seen: set[int] = set()
        for fn in outer:
            for inner in ast.walk(fn):
                if inner is not fn and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    seen.add(id(inner))
        inner_imports += sum(_inner_package_imports(fn) for fn in outer if id(fn) not in seen)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "row":
                row_sites += 1
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                row_sites += sum(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                                 and t.value.id == "row" for t in targets)
            status_literals += _status_literals(node, names)
    longest.sort(reverse=True)
    return {"lines": lines, "functions > 50 lines": long50, "functions > 80 lines": long80,
            "longest": ", ".join(f"{name} ({n})" for n, name in longest[:5]),
            "functions returning dict[str, Any]": dict_returns, "row mutation sites": row_sites,
            "status literals in comparisons/assignments": status_literals,
            "package imports inside functions": inner_imports}


if __name__ == "__main__":
    for key, value in figures(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE).items():
        print(f"{key}: {value}")
