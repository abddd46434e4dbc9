"""Sweeps: what to measure (``spec``, ``suites``, ``selection``), one checked request (``request``), the plan of
its cells (``plan``), and the run that measures them (``driver``, ``run``).

``from workbench.sweep import SweepSpec, run_sweep`` keeps working as it did when this was one module.
"""

from __future__ import annotations

from workbench.sweep.driver import SweepOutcome, log, run_request, run_sweep
from workbench.sweep.request import RunOptions, SweepRequest
from workbench.sweep.spec import DEFAULT_ROUNDS, SizeEntry, SweepSpec, shape_label

__all__ = ["DEFAULT_ROUNDS", "RunOptions", "SizeEntry", "SweepOutcome", "SweepRequest", "SweepSpec", "log",
           "run_request", "run_sweep", "shape_label"]
