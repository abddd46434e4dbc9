"""The classes of gaming a timed kernel is caught at, and the exception that names one.

A variant that computes only when it sees the poison, memoizes by a cheap fingerprint of its input, finishes
its work after the call returns, patches the harness, or computes in a lower precision was timed as "faster"
than any honest one (issue 23); each audit (:mod:`workbench.measure.audit` and the modules beside it) names
the class of what it found in the cell's message, in these words.
"""

from __future__ import annotations

from workbench.catalog.check import CheckResult

WORKS_ONLY_WHEN_CHECKED = "works only when checked"
MEMOIZES = "memoizes by fingerprint"
FINISHES_LATER = "finishes later"
TAMPERS = "tampers with the harness"
TRADES_PRECISION = "trades precision for speed"
IMPOSSIBLE_SPEED = "impossible speed"
CLASSES = (WORKS_ONLY_WHEN_CHECKED, MEMOIZES, FINISHES_LATER, TAMPERS, TRADES_PRECISION, IMPOSSIBLE_SPEED)
#: A stale answer has three explanations the output alone cannot tell apart.
STALE = f"{MEMOIZES} or replays a captured graph, or it copies a reference it found: {TAMPERS}"


class AuditFailed(Exception):
    """A timed call's output was wrong, or the harness was tampered with; the message names the class."""

    def __init__(self, message: str, kind: str, check: CheckResult | None = None):
        super().__init__(message)
        self.kind, self.check = kind, check
