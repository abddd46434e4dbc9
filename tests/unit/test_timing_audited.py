"""No timing path in the package times a variant without the audit (issue 23), checked on the source.

Samples come from a timer's ``measure``; the only loop that takes them is :func:`workbench.measure.timer.time_calls`,
whose ``audit`` is a required keyword. So: every ``time_calls(...)`` call in the package names ``audit=``, the one
unaudited form (:class:`~workbench.measure.audit.NoAudit`) is used only by ``workbench.timeit`` (a callable with
no spec and no reference), and every other ``.measure(...)`` call is one of the listed ones, none of which
yields a result's samples. A new timing path fails here until it is audited (or listed, with its reason).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from workbench.measure.timer import time_calls

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"

#: (file, the measured expression's source) -> why it is not a timing of a variant's result.
MEASURE_ALLOWED = {
    ("measure/timer.py", "timer.measure(_noop)"): "timer overhead, of an empty function",
    ("measure/timer.py", "self.timer.measure(fn)"): "inside time_calls' own watch: every sample of the audited loop",
    ("measure/timer.py", "self.watch.measure(fn)"): "time_calls' loop itself (each side of a paired loop)",
    ("measure/timer.py", "self.watch.measure(last)"): "time_calls' last, audited call when its certain audit never "
                                                      "came",
    ("measure/timed.py", "timer.measure(case.run)"): "the first call (compilation, lazy set-up): first_call_s, "
                                                     "never a sample, verified right after",
    ("adhoc/timing.py", "be.timer().measure(call)"): "timeit's first call of a user's callable (launch time: "
                                                      "lazy set-up and compilation), never a sample",
    ("measure/gpu_visit.py", "timer.measure(call if k == 1 else _repeat(call, k))"): "a GPU's clock warm-up "
                                                      "before the timed loop: device-busy time, never a sample",
    ("tuning/search.py", "self.measure(full, len(result.trials))"): "a tuning trial: run_cell, the audited harness",
}
#: Files that may construct NoAudit: timeit times a callable that has no spec and no reference.
NO_AUDIT_ALLOWED = {"adhoc/timing.py", "measure/audit.py"}


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            yield node, f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "backends" in path.relative_to(PACKAGE).parts:
            continue  # the timers' own implementations
        text = path.read_text()
        yield path.relative_to(PACKAGE).as_posix(), text, ast.parse(text)


def test_audit_is_a_required_keyword_of_the_timing_loop():
    p = inspect.signature(time_calls).parameters["audit"]
    assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty


def test_every_time_calls_call_passes_an_audit():
    found = []
    for rel, _, tree in _sources():
        for node, name in _calls(tree):
            if name == "time_calls":
                found.append(rel)
                assert any(k.arg == "audit" for k in node.keywords), f"{rel}:{node.lineno} times without audit="
    assert "measure/timed.py" in found and "measure/timer.py" in found  # the sweep's cells and verify's exercise


def test_no_audit_only_where_nothing_can_be_audited():
    for rel, _, tree in _sources():
        for node, name in _calls(tree):
            if name == "NoAudit":
                assert rel in NO_AUDIT_ALLOWED, f"{rel}:{node.lineno} builds NoAudit"


def test_every_other_measure_call_is_listed_with_its_reason():
    seen = set()
    for rel, text, tree in _sources():
        for node, name in _calls(tree):
            if name == "measure" and isinstance(node.func, ast.Attribute):
                key = (rel, ast.get_source_segment(text, node))
                assert key in MEASURE_ALLOWED, f"{rel}:{node.lineno}: {key[1]} takes a timing outside time_calls"
                seen.add(key)
    assert seen == set(MEASURE_ALLOWED), set(MEASURE_ALLOWED) - seen  # a stale entry is removed from the list
