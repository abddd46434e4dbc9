"""The source of a notebook's callables, for promoting an ad-hoc comparison to catalog files.

A function gives its ``def`` (numba dispatchers their Python function, decorators included); a lambda the
expression itself, found among the lambdas of its line by compiling each and comparing bytecode; a library
function (``np.sum``, ``torch.softmax``) a reference to where it is imported from. The module-level
names a source uses become imports where they are modules or importable objects; a helper defined only in
the notebook is named in a TODO, since its source is not copied.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Source:
    """How a promoted file gets one callable: ``definition`` (code to paste, may be empty), ``expr`` (the
    expression naming it afterwards), ``imports`` it needs and ``todos`` the user must resolve."""

    definition: str
    expr: str
    imports: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)


def identifier(label: str, prefix: str = "fn_") -> str:
    """A Python identifier from a label (``"torch-out"`` -> ``fn_torch_out``)."""
    return prefix + re.sub(r"\W+", "_", label).strip("_")


def _library_path(fn: Any) -> str | None:
    """``module.qualname`` when ``fn`` is what that path imports (a library function, not the notebook's)."""
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not mod or not qual or mod == "__main__" or "<" in qual:
        return None
    try:
        obj: Any = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return f"{mod}.{qual}" if obj is fn else None


def _shape(code: types.CodeType) -> tuple[Any, ...]:
    """What tells two lambdas of one line apart (bytecode differs between compile modes; names do not)."""
    return (code.co_argcount, code.co_varnames, code.co_names, code.co_freevars,
            tuple(c for c in code.co_consts if not isinstance(c, types.CodeType)))


def _lambda_source(fn: types.FunctionType) -> str | None:
    """The text of lambda ``fn`` among the lambdas of its line (compiled and matched by bytecode)."""
    try:
        lines, _ = inspect.findsource(fn)
    except (OSError, TypeError):
        return None
    text = "".join(lines)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    line = fn.__code__.co_firstlineno
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == line]
    for node in found:
        segment = ast.get_source_segment(text, node)
        if segment is None:
            continue
        try:
            code = compile(ast.Expression(body=node), "<promote>", "eval")
        except (SyntaxError, ValueError):
            continue
        inner = next((c for c in code.co_consts if isinstance(c, types.CodeType)), None)
        if inner is not None and _shape(inner) == _shape(fn.__code__):
            return " ".join(segment.split()) if "\n" in segment else segment
    return None


def _imports(code_text: str, namespace: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Imports for the module-level names ``code_text`` uses (modules, importable objects), and TODOs for
    names defined only in the notebook."""
    try:
        tree = ast.parse(code_text)
    except SyntaxError:
        return [], []
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, *filter(None, [n.vararg, n.kwarg])]}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    used = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound)
    imports, todos = [], []
    for name in used:
        if name not in namespace:
            continue
        obj = namespace[name]
        if isinstance(obj, types.ModuleType):
            imports.append(f"import {obj.__name__}" if obj.__name__ == name else f"import {obj.__name__} as {name}")
        elif _library_path(obj) is not None:
            mod, _, qual = _library_path(obj).rpartition(".")
            imports.append(f"from {mod} import {qual}" + (f" as {name}" if qual != name else ""))
        elif isinstance(obj, (int, float, str, bool)) or obj is None:
            imports.append(f"{name} = {obj!r}")
        else:
            todos.append(f"`{name}` ({type(obj).__name__}) is defined in the notebook: copy its definition here")
    return imports, todos


def source_of(fn: Callable[..., Any], name: str) -> Source:
    """How to write ``fn`` into a promoted file under the identifier ``name`` (used for lambdas)."""
    py = getattr(fn, "py_func", None)  # a numba dispatcher: its Python function, decorators included
    target = py if isinstance(py, types.FunctionType) else fn
    library = _library_path(fn)
    if library is not None and not isinstance(py, types.FunctionType):
        mod = library.rpartition(".")[0] if "." in library else library
        return Source("", library, [f"import {mod.split('.')[0]}"] if "." in library else [])
    if isinstance(target, types.FunctionType):
        namespace = target.__globals__
        if target.__name__ == "<lambda>":
            text = _lambda_source(target)
            if text is not None:
                imports, todos = _imports(text, namespace)
                return Source(f"{name} = {text}", name, imports, todos)
        else:
            try:
                text = textwrap.dedent(inspect.getsource(target))
            except (OSError, TypeError):
                text = None
            if text is not None:
                imports, todos = _imports(text, namespace)
                return Source(text.rstrip() + "\n", target.__name__ if py is None else fn.__name__, imports, todos)
    return Source(f"{name} = None  # TODO: the source of {fn!r} was not found: define it here", name, [],
                  [f"the source of {fn!r} was not found: define `{name}`"])
