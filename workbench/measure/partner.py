"""A baseline timed beside the cell, in alternating blocks (:attr:`CellRequest.partner`).

Anything wrong with the baseline is its own fault: the cell is then timed alone, with a note saying why.
"""

from __future__ import annotations

import functools
import secrets

from workbench.backends import registry as backend_registry
from workbench.catalog import registry as catalog
from workbench.measure.audit import Call
from workbench.measure.case import Case
from workbench.measure.input_cache import InputCache, SharedInputCase
from workbench.measure.input_set import InputSet
from workbench.measure.limits import CellTimeout, Clock
from workbench.measure.request import CellRequest
from workbench.measure.result import CellResult
from workbench.measure.rotation import auditor, rotation_sets
from workbench.measure.timer import Cancelled, Partner, Timing, TimingConfig


def partner_case(request: CellRequest, inputs: InputCache | None, res: CellResult) -> Case | None:
    """The baseline to time beside the cell (:attr:`CellRequest.partner`), built on the same seeded inputs; None
    (with a note) when none is asked for or it cannot be built (the baseline's fault: the cell is timed alone)."""
    p = request.partner
    if p is None:
        return None
    try:
        spec, backend = catalog.get_kernel(p.kernel), backend_registry.get(p.backend)
        variant = catalog.get_variant(p.kernel, p.variant)
        params = spec.validate_params(p.params_dict)
        return (Case(spec, variant, backend, params, p.dtype, seed=request.seed) if inputs is None
                else SharedInputCase(spec, variant, backend, params, p.dtype, request.seed, inputs))
    except (CellTimeout, Cancelled):
        raise
    except Exception as exc:  # noqa: BLE001
        res.note(f"its baseline {p.variant} was not timed beside it: {type(exc).__name__}: {exc}")
        return None


def timing_arrays(case: Case, other: Case | None, n: int, seed: int, inputs: InputCache | None
                  ) -> tuple[list[InputSet], list[InputSet] | None]:
    """The rotated input sets of the cell (and of the partner, when there is one). Side by side, both sides'
    device inputs and outputs are made afresh here, in a random order: arrays made earlier or later land
    differently in memory and caches, and with the cell's made first every visit one side was 3-10% faster
    than the other running the very same code (an A/A pair, 4 MiB arrays, tests/perf/power.py)."""
    if other is None:
        return rotation_sets(case, n, seed, inputs), None
    made = {}
    for x in (case, other) if secrets.randbits(1) else (other, case):
        x.poison()
        x.inputs = x.device_inputs(x.host_inputs)
        made[id(x)] = rotation_sets(x, n, seed, inputs)
    return made[id(case)], made[id(other)]


def partner(other: Case, sets: list[InputSet], cell_calls: list[Call], request: CellRequest,
            inputs: InputCache | None, res: CellResult, clock: Clock) -> Partner | None:
    """The partner's calls and audit, after one untimed call of each side (the partner's may compile; the
    cell's keeps the two alike); None (with a note) when its first call fails."""
    out = other.outputs
    calls = [functools.partial(other.call, inp, out) for inp, _ in sets]
    try:
        calls[0]()
        other.backend.synchronize()
    except Exception as exc:  # noqa: BLE001 - the baseline's fault: the cell is timed alone
        name = request.partner.variant if request.partner is not None else "?"
        res.note(f"its baseline {name} was not timed beside it: {type(exc).__name__}: {exc}")
        return None
    cell_calls[0]()
    other.backend.synchronize()
    clock.check("while preparing its baseline to time beside it")
    config = request.what if isinstance(request.what, TimingConfig) else TimingConfig()
    return Partner(calls, auditor(other, sets, request.seed, inputs, config))


def note_pairing(res: CellResult, request: CellRequest, timing: Timing) -> None:
    """The pairs timed with the baseline, kept with the result; or, when the baseline failed an audit, a note."""
    if request.partner is None:
        return
    if timing.partner_failure:
        res.note(f"its baseline timed beside it failed an audit: {timing.partner_failure}")
    else:
        res.pair_with, res.pair_log_ratios = request.partner.key, list(timing.pair_log_ratios)
