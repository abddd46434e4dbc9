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
STATUSES = {"ok", "incorrect", "unsupported", "oom", "error", "timeout", "crashed", "implausible",
            "skipped", "noisy"}


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
            if isinstance(node, ast.Compare):
                for side in [node.left, *node.comparators]:
                    if isinstance(side, ast.Constant) and side.value in STATUSES:
                        status_literals += 1
                    if isinstance(side, (ast.Tuple, ast.Set, ast.List)):
                        status_literals += sum(isinstance(e, ast.Constant) and e.value in STATUSES
                                               for e in side.elts)
            if isinstance(node, ast.keyword) and node.arg == "status" and isinstance(node.value, ast.Constant):
                status_literals += 1
            if isinstance(node, ast.Dict):
                status_literals += sum(isinstance(k, ast.Constant) and k.value == "status"
                                       and isinstance(v, ast.Constant) and v.value in STATUSES
                                       for k, v in zip(node.keys, node.values, strict=True))
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                                                    and t.slice.value == "status" for t in node.targets) \
                    and isinstance(node.value, ast.Constant):
                status_literals += 1
    longest.sort(reverse=True)
    return {"lines": lines, "functions > 50 lines": long50, "functions > 80 lines": long80,
            "longest": ", ".join(f"{name} ({n})" for n, name in longest[:5]),
            "functions returning dict[str, Any]": dict_returns, "row mutation sites": row_sites,
            "status literals in comparisons/assignments": status_literals,
            "package imports inside functions": inner_imports}


if __name__ == "__main__":
    for key, value in figures(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE).items():
        print(f"{key}: {value}")
