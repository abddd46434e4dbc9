"""A cell only verified (:class:`~workbench.measure.request.CheckOnly`): checked on several seeds, then its calls
exercised under audit, so that a check-only run also sees calls it cannot tell from timed ones."""

from __future__ import annotations

import threading

from workbench.catalog.spec import Arrays
from workbench.core.status import Status
from workbench.measure.audit import explain_failure
from workbench.measure.case import Case
from workbench.measure.cell_facts import execution_cache_facts
from workbench.measure.input_cache import InputCache
from workbench.measure.limits import deadline_check
from workbench.measure.request import Cell
from workbench.measure.result import CellResult
from workbench.measure.rotation import rotation_sets, set_reference, shared_versions
from workbench.measure.timer import exercise


def verify_only(cell: Cell, case: Case, seeds: tuple[int, ...], res: CellResult, deadline: float,
                cancel: threading.Event | None, limit_s: float, inputs: InputCache | None) -> None:
    """The case checked on each of ``seeds``; when every check passed, its calls audited."""
    check_seeds(case, seeds, res, deadline, cancel, limit_s)
    execution_cache_facts(cell, res)  # the checks' calls, before the audit exercise adds its own
    if res.status == Status.OK:  # calls the variant cannot tell from timed ones, audited
        exercise(case.backend.timer(), case, rotation_sets(case, 2, case.seed, inputs), deadline=deadline,
                 reference_of=lambda s: set_reference(case, s, case.seed, inputs),
                 shared_version=shared_versions(case, case.seed, inputs), cancel=cancel)


def check_seeds(case: Case, seeds: tuple[int, ...], res: CellResult, deadline: float,
                cancel: threading.Event | None, limit_s: float | None = None) -> None:
    """The case checked on each seed in turn: the first failure ends the cell ``incorrect`` (naming an earlier
    seed's answer when the output is one); otherwise ``ok``, with the worst check's error and seed."""
    worst, worst_seed = -1.0, seeds[0]
    earlier: list[tuple[int, Arrays, Arrays]] = []  # a stale answer is named so
    for i, s in enumerate(seeds):
        if i:
            earlier.append((i - 1, case.host_inputs, case.reference))
            case.reseed(s)
        res.seed = s  # where an error or timeout struck
        check = case.run_and_check()
        if not check.passed:
            why = check.message or f"max error {check.max_error:.3g} > tolerance {check.tolerance:.3g}"
            res.end(Status.INCORRECT, why + explain_failure(case, check, earlier),
                    max_error=check.max_error, tolerance=check.tolerance)
            return
        if check.max_error > worst:
            worst, worst_seed = check.max_error, s
            res.max_error, res.tolerance = check.max_error, check.tolerance
        deadline_check(deadline, cancel, "during verification", limit_s)
    res.end(Status.OK, seed=worst_seed)
