"""Timing a built case: its first call and the check before timing, the audited loop over rotated input sets,
the check after timing, and what the samples say (rates, peak memory, ``ok`` or ``implausible``).

Verification comes first: a variant that fails it is recorded as ``incorrect`` with its error and is not timed
(the time of a wrong answer is not a result). The output is verified again after timing, on every rotated
input set; a failure there keeps the timings but marks the row ``incorrect``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import time

import numpy as np

from workbench.backends.base import Backend, Timer
from workbench.core.conditions import ConditionsMeter
from workbench.core.dtypes import itemsize
from workbench.core.status import Status
from workbench.judge.dips import HOST_SLOW
from workbench.judge.stats import Stats
from workbench.measure.audit import (
    Call,
    explain_failure,
    implausible_reason,
    precision_settings,
    reduced_precision,
    reset_persisting_l2,
)
from workbench.measure.backend_facts import gpu_monitor
from workbench.measure.case import Case, output_dtype, reference_outputs
from workbench.measure.cell_facts import note_tuned_config
from workbench.measure.gpu_visit import begin_visit, end_visit
from workbench.measure.host_settle import count_visit, retries_allowed, settle, settle_cap
from workbench.measure.input_cache import InputCache
from workbench.measure.input_set import InputSet
from workbench.measure.limits import CellTimeout, Clock
from workbench.measure.memory import peak_memory
from workbench.measure.partner import note_pairing, partner, partner_case, timing_arrays
from workbench.measure.request import CellRequest
from workbench.measure.result import CellResult, Memory, Rates
from workbench.measure.rotation import auditor, check_rotations, identical_sets, rotation_count
from workbench.measure.timer import Partner, PartnerFailed, Timing, TimingConfig, time_calls, timer_overhead
from workbench.measure.timing_modes import choose_timer, on_cpu
from workbench.roofs.throughput import Peaks, published_ceilings, rates


def time_case(request: CellRequest, config: TimingConfig, case: Case, backend: Backend, res: CellResult,
              clock: Clock, inputs: InputCache | None) -> None:
    """Time the built case (after the first call and the check, in a first round), then check it again."""
    reset_persisting_l2(backend)  # no L2 lines pinned by an earlier cell (or this variant's last round)
    choice = choose_timer(backend, getattr(config, "timing_mode", None))
    timer = backend.timer()  # the first call and check: launch time, whatever the mode
    res.timing.timer_kind, res.timing.timing_mode = choice.timer.kind, choice.mode
    res.timing.timer_overhead_s = timer_overhead(backend)
    res.note(choice.note)  # every round: a merged row's message is its last round's
    if not request.role.later:
        ran = time.perf_counter()
        if not first_call_passes(case, timer, res, clock):
            return
        config = warmup_left(config, time.perf_counter() - ran, backend.device_class)
    sets, calls, other, other_sets = _prepare(request, config, case, res, clock, inputs)
    choice, visit = begin_visit(backend, choice, calls, config, res, clock.deadline, not request.role.later)
    timer, config = choice.timer, visit.config if visit is not None else config
    seed = request.seed
    flush = backend.flush_cache if config.cache == "cold" else None
    beside = None if other is None else partner(other, other_sets, calls, request, inputs, res, clock)
    meter = ConditionsMeter(gpu_monitor(backend))
    meter.start()
    try:
        how = {"flush": flush, "deadline": clock.deadline, "cancel": clock.cancel, "sync": backend.synchronize,
               "gate": visit.gate if visit is not None else None}
        timing, beside = _timed_at_speed(on_cpu(backend), timer, calls, config, case, sets, seed, inputs, how,
                                         beside, res)
    finally:
        res.conditions = meter.stop()
    end_visit(visit, backend, calls, res, timing, not request.role.later)
    del calls
    if beside is not None:
        note_pairing(res, request, timing)
    st = res.timing.take(timing)
    if not _judged(request, config, case, sets, timing, st, res, clock, inputs):
        return
    del sets  # the rotated sets' arrays freed before peak memory is read
    if not request.role.later:
        _first_round_facts(case, backend, request.cell.dtype, config, timing, st, res)
    end_timed(res, request.cell.dtype, request.ceilings)


def _timed_at_speed(cpu: bool, timer: Timer, calls: list[Call], config: TimingConfig, case: Case,
                    sets: list[InputSet], seed: int, inputs: InputCache | None, how: dict, beside: Partner | None,
                    res: CellResult) -> tuple[Timing, Partner | None]:
    """The audited timing loop (with its baseline beside it while that works); on a CPU with the host waited for
    before it (:func:`~workbench.measure.host_settle.settle`) and, where the host ran slow around it, timed once
    more (:data:`~workbench.measure.host_settle.HOST_RETRIES`): a round taken while the host ran slow is measured
    again, not only set aside later. A failed audit is never timed away."""
    retries = 0
    while True:
        started = time.perf_counter()
        host = settle(how["deadline"], settle_cap(config)) if cpu else None  # the core at speed as timing starts
        try:
            timing = time_calls(timer, calls, config, audit=auditor(case, sets, seed, inputs, config), **how,
                                partner=beside)
        except PartnerFailed as exc:  # the baseline's fault: the cell is timed alone
            res.note(f"its baseline was not timed beside it: {type(exc.__cause__).__name__}: {exc.__cause__}")
            beside = None
            timing = time_calls(timer, calls, config, audit=auditor(case, sets, seed, inputs, config), **how)
        if host is None:
            return timing, beside
        host.end()
        res.timing.host_settle_s = (res.timing.host_settle_s or 0.0) + host.settle_s
        res.timing.host_slowdown, res.timing.host_retries = host.slowdown, retries
        res.timing.host_probe_s = host.probe_s
        now = time.perf_counter()  # a retry that could not finish before the cell's limit would turn ok into timeout
        if (host.slowdown <= HOST_SLOW or retries >= retries_allowed() or timing.audit_failure
                or now + 2 * (now - started) >= how["deadline"]):
            count_visit(retries)
            return timing, beside
        retries += 1


def _prepare(request: CellRequest, config: TimingConfig, case: Case, res: CellResult, clock: Clock,
             inputs: InputCache | None) -> tuple[list[InputSet], list[Call], Case | None, list[InputSet] | None]:
    """The cell's rotated input sets and a call on each, and the baseline to time beside it with its own sets
    (None when there is none); the first round notes input sets that are identical."""
    n_inputs, note = rotation_count(case, config.n_inputs)
    res.note(note)
    other = partner_case(request, inputs, res)
    sets, other_sets = timing_arrays(case, other, n_inputs, request.seed, inputs)
    same = [] if request.role.later else identical_sets([host for _, host in sets])  # the first round says so
    if same:
        res.note("rotated input sets " + ", ".join(f"{i} and {j}" for i, j in same)
                 + " are identical: a replayed answer would pass on them")
    out = case.outputs
    calls = [functools.partial(case.call, inp, out) for inp, _ in sets]  # the timer calls the kernel itself
    res.timing.n_inputs = len(sets)
    clock.check("while preparing rotation inputs")
    return sets, calls, other, other_sets


def _judged(request: CellRequest, config: TimingConfig, case: Case, sets: list[InputSet], timing: Timing,
            st: Stats, res: CellResult, clock: Clock, inputs: InputCache | None) -> bool:
    """The rates of the loop's samples (``st``), then its audits and the check after timing; False when the
    cell ended ``incorrect`` there (its timings kept)."""
    dtype = request.cell.dtype
    res.rates = Rates(**rates(res.rates.flops or 0.0, res.rates.bytes or 0.0, st.median, dtype,
                              request.ceilings, published_ceilings(res.device, dtype), case.spec.bound,
                              chain_steps=case.spec.chain(case.params) if case.spec.chain else None,
                              who=_who(res)))
    if timing.stopped_by == "deadline" and st.n < config.min_samples:
        raise CellTimeout(f"timed out after {st.n} of {config.min_samples} samples (limit {clock.limit_s:g} s)")
    note_tuned_config(res, case.call)
    # a failed audit has the outputs of every rotated set checked too, whatever the round
    if ((request.role.check_after or timing.audit_failure)
            and not checked_after(case, sets, request.seed, inputs, res)):
        res.note(timing.audit_failure)
        return False
    if timing.audit_failure:
        res.end(Status.INCORRECT, timing.audit_failure)
        return False
    return True


def _first_round_facts(case: Case, backend: Backend, dtype: str, config: TimingConfig, timing: Timing, st: Stats,
                       res: CellResult) -> None:
    """What only a cell's first round records: the peak memory of one call, and a spread above its target."""
    res.memory = Memory(*peak_memory(backend, case.run, resident_bytes(case, dtype)))
    if timing.stopped_by != "spread" and st.rel_spread > config.target_spread:  # "0.017 above 0.02" read wrong
        res.note(spread_note(st.rel_spread, config.target_spread, timing.stopped_by, timing.precision,
                             config.precision))


def spread_note(spread: float, target: float, stopped_by: str, reached: float = math.inf,
                asked: float = 0.0) -> str:
    """A round whose samples spread past their target, each measure named: the samples' spread (interquartile
    range over median) against the spread target, and, where the loop stopped on the median's precision, that
    precision (how well the median is known) reached against the one asked. 11 printed "spread 0.053 above its
    target 0.02 (its median reached the precision asked)": two targets read as one."""
    said = (f"the samples' spread (interquartile range over median) {spread:.3f} is above the spread target "
            f"{target:g}")
    if stopped_by == "precision" and math.isfinite(reached) and asked > 0:
        return (f"{said}; sampling stopped on the median's precision instead, which reached ±{reached:.1%} "
                f"(asked: ±{asked:.1%})")
    return f"{said} (sampling stopped by {stopped_by})"


def end_timed(res: CellResult, dtype: str, ceilings: Peaks | None) -> None:
    """A timed cell that passed every check: the precision settings in force recorded (in the row's extra),
    and ``implausible`` when its rate is beyond the device (its peak note then explains nothing away)."""
    settings = precision_settings()
    if settings:
        res.placement["precision"] = json.dumps(settings, sort_keys=True)
        res.note(reduced_precision(settings, dtype))
    # the round's own median rate against the roof its row names (``ceiling_gflops``): a merged row is judged
    # again on its pooled median (:func:`workbench.measure.rounds.merge_rounds`)
    why = implausible_reason({**vars(res.rates), **_who(res), "dtype": dtype, "precision": settings},
                             getattr(ceilings, "roof_set", None))
    if why:
        res.rates.peak_note = None
        res.end(Status.IMPLAUSIBLE, why)
        return
    res.end(Status.OK)


def _who(res: CellResult) -> dict[str, str]:
    """The row's kernel and backend: what tells the probe's own workload (numpy's GEMM) from any other call."""
    return {"kernel": res.cell.kernel, "backend": res.cell.backend}


def warmup_left(config: TimingConfig, ran_s: float, device_class: str) -> TimingConfig:
    """The timing config with the warm-up still owed after a first call and check that took ``ran_s``.

    On a CPU they warmed the processor (the kernel, and the reference on the same cores): their time counts
    towards the warm-up (one numpy cell through the CLI warmed up for 0.1 s after 20 ms of calls; the warm-up
    still makes a call). A GPU sat idle through the CPU reference, and a first call's compile warms nothing:
    credited there, round 1 of 28 of 65 GPU cells on an H100 read over 1.3x the later rounds (8 of 65 on an
    H200 without the credit), so a GPU warms up in full."""
    if isinstance(config, TimingConfig) and config.warmup_s > 0 and device_class == "cpu":
        return dataclasses.replace(config, warmup_s=max(0.0, config.warmup_s - ran_s))
    return config


def first_call_passes(case: Case, timer: Timer, res: CellResult, clock: Clock) -> bool:
    """A first round's first call (timed alone: compilation, lazy set-up) and the check before timing; a
    failed check ends the cell ``incorrect``, untimed (the time of a wrong answer is not a result)."""
    res.timing.first_call_s = timer.measure(case.run).device_s
    if clock.first_call_done is not None:
        clock.first_call_done()
    clock.check("in the first call")
    check = case.run_and_check()
    res.max_error, res.tolerance = check.max_error, check.tolerance
    if not check.passed:
        res.end(Status.INCORRECT, f"verification failed (not timed): {check.message}{explain_failure(case, check)}")
        return False
    clock.check("during verification")
    return True


def checked_after(case: Case, sets: list[InputSet], seed: int, inputs: InputCache | None, res: CellResult) -> bool:
    """The outputs of every rotated input set checked after timing; a failure keeps the timings but ends the
    cell ``incorrect``."""
    after, which = check_rotations(case, sets, seed, inputs)
    res.max_error = max(res.max_error if res.max_error is not None else -math.inf, after.max_error)
    res.tolerance = res.tolerance if res.tolerance is not None else after.tolerance
    if not after.passed:
        where = f" on rotated input set {which} (seed {seed + which})" if which else ""
        refs = [(i, host, reference_outputs(case.spec, host, case.params)) for i, (_, host) in enumerate(sets)]
        res.end(Status.INCORRECT, f"verification after timing failed{where}: {after.message}"
                + explain_failure(case, after, [r for r in refs if r[0] != which], own=refs[which][1:]))
        return False
    return True


def resident_bytes(case: Case, dtype: str) -> int:
    """Bytes of the case's inputs and outputs (what a peak-memory reading is compared with)."""
    return sum(int(a.size) * itemsize(dtype) for a in case.host_inputs.values()) + sum(
        int(np.prod(shape)) * itemsize(output_dtype(case.spec, name, dtype)) for name, shape in case.out_shapes.items())
