"""Module paths that moved when the package's folders became its layers, kept importable under the old names.

``import workbench.verdicts`` (or ``workbench.harness.timer``) still works: the old name resolves to the
module's new home, the same module object, so a user's notebook or script keeps running. New code imports
the new paths; this map is the one record of what moved where. (``workbench.store``, ``workbench.sweep``
and ``workbench.roofs`` are packages now, whose ``__init__`` keeps the former modules' names.)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: Former dotted name under ``workbench`` -> the new one (a moved package's submodules follow it).
MOVED: dict[str, str] = {
    "case": "measure.case",
    "ceilings": "roofs.ceilings",
    "claims": "report.claims",
    "conditions": "core.conditions",
    "datasets": "core.datasets",
    "dtypes": "core.dtypes",
    "environment": "store.environment",
    "frames": "core.frames",
    "harness": "measure",
    "harness.rounds": "measure.rounds",
    "harness.stats": "judge.stats",
    "harness.throughput": "roofs.throughput",
    "import_schema": "store.import_schema",
    "import_stream": "store.import_stream",
    "judge_many": "judge.many",
    "output_guard": "core.output_guard",
    "peaks": "roofs.peaks",
    "processes": "core.processes",
    "progress": "core.progress",
    "record": "core.record",
    "report.units": "core.units",
    "roof_probe": "roofs.probe",
    "selection": "sweep.selection",
    "stats_compare": "judge.compare",
    "status": "core.status",
    "suites": "sweep.suites",
    "sweep_plan": "sweep.plan",
    "sweep_run": "sweep.run",
    "threads": "core.threads",
    "timestamps": "core.timestamps",
    "verdicts": "judge.verdicts",
    "verification": "sweep.verification",
}


def new_name(old: str) -> str | None:
    """The new dotted name of a former ``workbench.<old>`` module, or None if it did not move."""
    parts = old.split(".")
    for n in range(len(parts), 0, -1):
        head = ".".join(parts[:n])
        if head in MOVED:
            return ".".join([MOVED[head], *parts[n:]])
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:  # already executed under its new name
        pass


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds ``workbench.<former name>`` and hands back the module at its new path."""

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("workbench."):
            return None
        new = new_name(fullname[len("workbench."):])
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(f"workbench.{new}"))


def install() -> None:
    """Let the former module paths import (once per process)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())  # ahead of the path finder, which would load a second copy
