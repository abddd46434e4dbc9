"""A runtime the package has never heard of, defined here alone, runs end to end through the public hooks.

``toyrt`` is a numpy-backed adapter (:class:`ToyBackend`) with its declaration (:class:`Runtime`: marker,
guard zones, the module its arrays come from, what ``graph`` means on it), and a variant of the catalog's
``saxpy`` for it. Nothing in the package names it: it joins through ``register_runtime``, ``register_backend``
and ``variant``, and ``workbench.benchmark`` measures it to an ok, checked row that the report shows in the
runtime's own marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import workbench
from workbench.backends import (
    Backend,
    Capabilities,
    DeviceInfo,
    Probe,
    Runtime,
    register_backend,
    register_runtime,
    registry,
)
from workbench.backends.memory import TracemallocMemory
from workbench.catalog import variant
from workbench.catalog.registry import unregister_variant
from workbench.catalog.spec import BuildContext, KernelCall

NAME = "toyrt"


class ToyArray(np.ndarray):
    """toyrt's device array: a numpy array of its own type, so the declaration's ``modules`` can find it."""


class ToyBackend(Backend):
    """toyrt on the host CPU: its arrays are :class:`ToyArray`, its device a name."""

    name = NAME
    runtime = NAME
    device_class = "cpu"

    def __init__(self) -> None:
        self.meter = TracemallocMemory()

    def probe(self) -> Probe:
        return Probe.ok()

    def device_info(self) -> DeviceInfo:
        return DeviceInfo(name="toy device", vendor="tests", versions={NAME: "0.1"})

    def capabilities(self) -> Capabilities:
        return Capabilities(dtypes=("float32", "float64"))

    def from_numpy(self, a: np.ndarray) -> ToyArray:
        return np.ascontiguousarray(a).copy().view(ToyArray)

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def empty(self, shape: tuple[int, ...], dtype: str) -> ToyArray:
        return np.empty(shape, dtype=dtype).view(ToyArray)

    def cast(self, x: Any, dtype: str) -> ToyArray:
        return x.astype(dtype)

    def synchronize(self) -> None:
        pass


DECLARATION = Runtime(NAME, modules=(__name__.split(".")[0],), marker="8", guards_outputs=True,
                      array_backend=lambda x: NAME if isinstance(x, ToyArray) else None,
                      mode_meanings={"graph": "toyrt records nothing: its graph is its eager run"})


def toy_saxpy(ctx: BuildContext) -> KernelCall:
    """out = 1.7 * x + y, written into the output toyrt gives the kernel"""
    alpha = np.dtype(ctx.dtype).type(1.7)

    def run(inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        np.multiply(inputs["x"], alpha, out=outputs["out"])
        outputs["out"] += inputs["y"]
    return run


@pytest.fixture
def toyrt(fresh_registry, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToyBackend]:
    """toyrt declared, its backend registered and its saxpy variant in the catalog; all gone afterwards."""
    monkeypatch.setattr(registry, "_registered", dict(registry._registered))  # forgotten afterwards
    register_runtime(DECLARATION)
    backend = ToyBackend()
    register_backend(backend)
    variant("saxpy", NAME, NAME, description=toy_saxpy.__doc__)(toy_saxpy)
    try:
        yield backend
    finally:
        unregister_variant("saxpy", NAME)


def test_a_runtime_declared_outside_the_package_is_read_like_a_built_in_one(toyrt):
    assert registry.runtime(NAME) is DECLARATION and DECLARATION in registry.runtimes()
    assert registry.get(NAME) is toyrt and NAME in registry.available_backends()
    from workbench.adhoc.devices import array_backend
    from workbench.execution import GRAPH_MEANING
    from workbench.report.styles import style_map

    assert array_backend(toyrt.from_numpy(np.zeros(3))) == NAME
    assert GRAPH_MEANING[NAME] == DECLARATION.mode_meanings["graph"]
    assert style_map([f"{NAME} @ {NAME}"])[f"{NAME} @ {NAME}"].marker == "8"


def test_a_new_runtime_runs_end_to_end_to_a_checked_row_and_a_report(toyrt, tmp_path):
    res = workbench.benchmark(kernel="saxpy", variants=[NAME], backends=[NAME], sizes=[4099], rounds=1,
                              budget_s=0.05, isolation="in-process", store=tmp_path / "s.sqlite", progress=False)
    assert len(res.df) == 1
    row = res.df.iloc[0]
    assert (row["status"], row["backend"], row["runtime"], row["variant"]) == ("ok", NAME, NAME, NAME), row["message"]
    assert row["max_error"] <= row["tolerance"] and row["median_s"] > 0  # checked against the float64 reference, timed
    report = res.to_markdown(tmp_path / "report.md").read_text()
    assert f"| saxpy | n=4099 | {NAME} @ {NAME} |" in report  # the summary's line of the new series

    def wrong(ctx: BuildContext) -> KernelCall:
        return lambda inputs, outputs: outputs["out"].fill(0.0)

    variant("saxpy", f"{NAME}-wrong", NAME, description="writes zeros")(wrong)
    try:
        bad = workbench.benchmark(kernel="saxpy", variants=[f"{NAME}-wrong"], backends=[NAME], sizes=[4099],
                                  rounds=1, budget_s=0.05, isolation="in-process", store=tmp_path / "s.sqlite",
                                  progress=False)
    finally:
        unregister_variant("saxpy", f"{NAME}-wrong")
    assert bad.df.iloc[0]["status"] == "incorrect"  # the check is real on the new runtime too


#: Modules that once listed runtimes by name (guard zones, mode meanings, markers, versions, array types,
#: audit hooks) and now read the declarations; numpy, the host every install has, may still be named.
READERS = ("measure/case.py", "execution/modes.py", "report/styles.py", "store/environment.py", "adhoc/devices.py",
           "measure/audit.py", "measure/audit_versions.py", "measure/harness_audit.py", "measure/result_audit.py",
           "measure/array_edits.py", "backends/registry.py", "core/dtypes.py", "execution/device_plan.py",
           "portable/runtimes.py", "portable/program.py", "report/env_summary.py", "cli/cmd_info.py",
           "adhoc/timing.py")
BUILT_IN = ("numba", "torch", "cupy", "cupyx", "opencl", "pyopencl", "triton", "wgpu", "vulkan")


def _named_in_code(path: Path, names: tuple[str, ...], end: str = r"\b") -> list[str]:
    """Where a string outside a docstring names one of ``names`` (a word, or ended as the pattern ``end`` says),
    or an import takes one's package."""
    import ast
    import re

    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    strings = [(node.lineno, node.value) for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]
    imports = [(node.lineno, alias.name) for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names]
    imports += [(node.lineno, node.module) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    return [f"{path.name}:{line}: {text!r}" for line, text in strings
            if any(re.search(rf"\b{name}{end}", text) for name in names)] + \
           [f"{path.name}:{line}: import {module}" for line, module in imports if module.split(".")[0] in names]


def test_the_layers_above_the_adapters_name_no_runtime():
    """What the package knows of a runtime is in its own module: a string naming one, outside a docstring, in
    a module that reads the declarations would be a second home."""
    root = Path(workbench.__file__).parent
    found = [hit for rel in READERS for hit in _named_in_code(root / rel, BUILT_IN)]
    assert not found, found


def test_cupy_is_named_only_in_the_cupy_modules():
    """CuPy's home is its modules (``cupy_*.py``: the adapter, its portable glue, its authoring helpers and
    verbs, NVRTC through its binding): no other module's code names it (``cupy_tf32`` included) or imports it.
    An install hint may name its wheels (``cupy-cuda13x``)."""
    root = Path(workbench.__file__).parent
    found = [hit for path in sorted(root.rglob("*.py")) if not path.name.startswith("cupy_")
             for hit in _named_in_code(path, ("cupy", "cupyx", "cupy_backends"), end="(?!-)")]
    assert not found, found
