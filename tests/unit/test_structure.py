"""The package's shape, held: few modules at the root, no long files or functions, rows typed to the store.

The limits are the ones issue 35 set when the folders became the layers; ``scripts/structure_figures.py``
prints the figures behind them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"

#: Most modules directly in ``workbench/`` (``__init__`` and ``__main__`` included).
MAX_ROOT_MODULES = 8
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 60
#: ``dict[str, Any]`` annotations in the package: half of the 287 before issue 35, and only ever fewer.
MAX_DICT_STR_ANY = 143


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_few_modules_at_the_root():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, f"{len(root)} modules at the package root: {root}; place them in a layer"


def test_no_file_is_longer_than_the_limit():
    long = {str(p.relative_to(PACKAGE)): n for p in _sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES}
    assert not long, f"files over {MAX_FILE_LINES} lines: {long}"


def test_no_function_is_longer_than_the_limit():
    long = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_untyped_dicts_stay_under_the_limit():
    found = sum(len(re.findall(r"dict\[str, Any\]", p.read_text(encoding="utf-8"))) for p in _sources())
    assert found <= MAX_DICT_STR_ANY, f"{found} `dict[str, Any]` annotations (limit {MAX_DICT_STR_ANY}): type them"

