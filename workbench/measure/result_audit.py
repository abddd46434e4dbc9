"""A cell's result, audited after its timing: the parent's check of what a worker reported, the class of a
failed check, the precision settings in force, and the impossible-speed test.

- :func:`judge_reported` is the parent's side: statistics recomputed from the samples, and the samples' total
  within the parent's own clock of the cell;
- :func:`explain_failure` names the class of a failed check where the evidence says which (the output
  complete only later, another input set's answer, an error of the size lower-precision arithmetic gives);
  :func:`precision_settings` records what the loaded runtimes declare of their float32 precision (TF32);
- :func:`implausible_reason` is the impossible-speed test (the device's top roof, or a simple DRAM-multiple
  check where no top roof is measured).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.backends import registry
from workbench.catalog.spec import Arrays
from workbench.core.dtypes import reduced_float32_flags
from workbench.core.record import number_or_none
from workbench.core.status import Status
from workbench.measure.array_edits import same_bits
from workbench.measure.case import Case, CheckResult
from workbench.measure.case import (
    check as _check_outputs,  # bound here: replacing workbench.measure.case.check later does not reach audits
)
from workbench.measure.gaming import FINISHES_LATER, IMPOSSIBLE_SPEED, STALE, TAMPERS, TRADES_PRECISION
from workbench.roofs.model import above_top_roof

#: How long a failed check waits before reading the output again (a thread or side stream still writing it).
LATE_WAIT_S = 0.05

def check_reported(samples: Sequence[float] | None, median_s: float | None, calls_per_sample: int | None,
                   elapsed_s: float) -> list[str]:
    """Problems with timings a worker reported, judged with the parent's own clock: the median must be that of
    the samples, and the samples' total time at most the ``elapsed_s`` the parent waited for the cell."""
    if not samples:
        return []
    problems = []
    median = float(np.median(samples))
    if median_s is not None and not math.isclose(float(median_s), median, rel_tol=1e-9, abs_tol=1e-15):
        problems.append(f"its median {float(median_s):.3g} s is not the median {median:.3g} s of its samples")
    total = float(np.sum(samples)) * float(calls_per_sample or 1)
    if total > elapsed_s * 1.001 + 1e-3:
        problems.append(f"its samples add up to {total:.3g} s but the parent waited only {elapsed_s:.3g} s for it")
    return problems


def judge_reported(res: Any, elapsed_s: float) -> Any:
    """A :class:`~workbench.measure.result.CellResult` from a worker, made ``incorrect`` (timings kept) when
    :func:`check_reported` finds a problem; returned."""
    t = res.timing
    problems = check_reported(t.samples_s, t.median_s, t.calls_per_sample, elapsed_s)
    if problems and res.status in (Status.OK, Status.IMPLAUSIBLE):
        res.end(Status.INCORRECT, f"audit (parent): {'; '.join(problems)} ({TAMPERS})")
    return res


# -- explaining a failed check --------------------------------------------------------------------------------
#: Relative error bands of arithmetic narrower than the run's dtype: (run dtype, low, high, what).
PRECISION_BANDS = (("float32", 5e-5, 5e-2, "float16, bfloat16 or TF32"), ("float64", 1e-9, 1e-5, "float32"))


def precision_note(dtype: str, max_error: float | None, tolerance: float | None, rounding_like: bool = True) -> str:
    """A note when a failed check's error is the size lower-precision arithmetic gives and its pattern is one
    rounding gives (``rounding_like``: :attr:`~workbench.catalog.check.CheckResult.rounding_like`, errors spread
    over most elements, each small for its size; never a shifted or missing element), else ``""``."""
    if max_error is None or tolerance is None or not math.isfinite(max_error) or max_error <= tolerance:
        return ""
    if not rounding_like:
        return ""
    for run, low, high, what in PRECISION_BANDS:
        if dtype == run and low <= max_error <= high:
            return (f"; an error of {max_error:.2g} is what {what} arithmetic gives in a {dtype} run "
                    f"({TRADES_PRECISION})")
    return ""


#: What :meth:`workbench.measure.case.Case.run_and_check` says of writes outside an output and changed inputs: such a
#: failure is not about the output's values, so a right output later does not mean it finished late.
_NOT_VALUES = ("modified its input", "past the end of", "before the start of")


def explain_failure(case: Case, check: CheckResult,
                    others: Sequence[tuple[int, Arrays, Arrays]] = (),
                    own: tuple[Arrays, Arrays] | None = None) -> str:
    """Words naming the class of a failed check of ``case`` whose outputs were just written for ``own`` (host
    inputs, reference; default the case's): the output still changing, or right a moment later
    (:data:`FINISHES_LATER`); the answer for one of the ``others`` (set number, host inputs, reference) input
    sets of this cell (:data:`STALE`); or an error of lower precision (:data:`TRADES_PRECISION`)."""
    if check.passed:
        return ""
    host, ref = own if own is not None else (case.host_inputs, case.reference)
    try:
        first = case.fetch(case.outputs)
        time.sleep(LATE_WAIT_S)
        later = case.fetch(case.outputs)
        again = _check_outputs(case.spec, later, ref, case.dtype, host, case.params)
    except Exception:  # noqa: BLE001 - the failure stands as it is; this only names it
        return precision_note(case.dtype, check.max_error, check.tolerance, check.rounding_like)
    changed = not all(k in later and same_bits(v, later[k]) for k, v in first.items())
    if changed or (again.passed and not any(t in check.message for t in _NOT_VALUES)):
        return (f"; the output was {'still changing' if changed else 'right'} {LATE_WAIT_S * 1e3:.0f} ms after the "
                f"call returned: work went on after it ({FINISHES_LATER})")
    for i, h, r in others:
        if _check_outputs(case.spec, later, r, case.dtype, h, case.params).passed:
            return f"; it is the answer for input set {i}: a stale answer ({STALE})"
    return precision_note(case.dtype, check.max_error, check.tolerance, check.rounding_like)


def precision_settings() -> dict[str, bool | str] | None:
    """The precision settings in force for float32 math (TF32 lets a float32 matmul round its inputs to 10 bits),
    as each runtime that has them declares them (:attr:`~workbench.backends.runtime.Runtime.precision_settings`:
    read only where the runtime is loaded); None when no loaded runtime has any."""
    out: dict[str, bool | str] = {}
    for rt in registry.runtimes():
        if rt.precision_settings is not None:
            out.update(rt.precision_settings())
    return out or None


def reduced_precision(settings: Mapping[str, Any] | None, dtype: str) -> str:
    """Why a ``dtype`` run's float32 math may be rounded (TF32 allowed), or ``""``."""
    if not settings or dtype != "float32":
        return ""
    found = reduced_float32_flags(settings)
    return f"TF32 allowed in a float32 run ({', '.join(found)})" if found else ""


# -- impossible speed -----------------------------------------------------------------------------------------
#: The swappable roof test until a measured top roof (L1 bandwidth, peak FLOP/s) is known for the device: no
#: cache moves data more than this many times the DRAM roof.
FALLBACK_BANDWIDTH_FACTOR = 64.0


def implausible_reason(row: Mapping[str, Any], roofs: Any = None) -> str | None:
    """Why a measured rate is beyond the device, else None: the roofs' own test
    (:func:`workbench.roofs.model.above_top_roof`) where the device's roof set is known, and where it has no top
    bandwidth roof, a bandwidth above :data:`FALLBACK_BANDWIDTH_FACTOR` times the row's DRAM ceiling; FLOP/s is
    always judged against the roof the row names (its table's ceiling), as the roofs' test judges it."""
    if roofs is not None:
        reason = above_top_roof(row, roofs)
        if reason:
            return f"{reason} ({IMPOSSIBLE_SPEED})"
        if roofs.top_bandwidth() is not None:
            return None
    reasons = []
    gbps, bw = number_or_none(row.get("gbps")), number_or_none(row.get("ceiling_gbps"))
    if gbps is not None and bw and gbps > FALLBACK_BANDWIDTH_FACTOR * bw:
        reasons.append(f"{gbps:.3g} GB/s is {gbps / bw:.0f}x the {bw:.3g} GB/s DRAM roof: no cache level is that "
                       "much faster")
    # FLOP/s: the roof the row names, as the roofs' own test judges it (the probe's own workload is never beyond it)
    flops = above_top_roof({k: v for k, v in row.items() if k != "gbps"}, roofs)
    if flops:
        reasons.append(flops.removeprefix("implausible: ").split(": the timing")[0])
    if not reasons:
        return None
    return ("implausible: " + "; ".join(reasons)
            + f": the timing, not the kernel, is what was measured ({IMPOSSIBLE_SPEED})")
