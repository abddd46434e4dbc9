"""Sweeps: what to measure (spec, suites, selection), the plan of its cells, and the run that measures them.

``from workbench.sweep import ...`` keeps the names of the
former module ``workbench.sweep`` (now ``workbench.sweep.driver``).
"""

from __future__ import annotations

from workbench.sweep.driver import (  # noqa: F401
    DEFAULT_ROUNDS,
    SizeEntry,
    SweepOutcome,
    SweepSpec,
    log,
    run_sweep,
    shape_label,
)

__all__ = [
    'log', 'SizeEntry', 'DEFAULT_ROUNDS', 'SweepSpec', 'shape_label', 'SweepOutcome', 'run_sweep',
]
