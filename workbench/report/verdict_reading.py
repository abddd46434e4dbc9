"""What a verdict lets a sentence say (:func:`reading`), and the tests that decide it.

Split from :mod:`workbench.report.claims` so that the sentence writer (``claims``) and the tables shown beside its
sentences (:mod:`workbench.report.verdict_tables`) read a verdict by one rule without importing each other: a pair
whose medians part from its interval, that rests on a disturbed cell or whose side is bimodal reads "inconclusive"
in both. ``claims`` re-exports every name here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from workbench.judge.few_rounds import too_few_words
from workbench.judge.verdicts import SAME_WITHIN, is_disturbed
from workbench.report.claims_rows import _num, disturbed_bimodal_direction

Reading = Literal["faster", "slower", "same", "inconclusive", "no call"]

#: The widest floor (relative) at which "same" is said as "same": beyond it a difference of that size could
#: hide in the noise, so "same" would claim more than was measured. The verdicts' own bound (a "same" verdict
#: now has its whole interval within it); rows judged before that rule are held to it here.
SAME_MAX_FLOOR = SAME_WITHIN


def medians_ratio(v: Mapping[str, Any]) -> float:
    """The speed-up the two cells' own headline medians give (``median_a / median_b``; NaN where not known)."""
    a, b = _num(v, "median_a"), _num(v, "median_b")
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else float("nan")


#: How far outside the paired interval the medians' ratio must lie to disagree with it (relative): each median
#: has its own error, and "0.94x paired against 0.95x from the medians" read to every reader as agreement; but
#: 3% let "the same within ±5%: the whole interval (0.973-1.02x)" stand beside medians 0.952x apart, and a
#: "slower, 1.06x" beside medians that coincide.
MEDIANS_TOLERANCE = 0.01


def medians_disagree(v: Mapping[str, Any]) -> bool:
    """Whether the ratio of the two cells' own medians lies outside the paired estimate's interval (by more than
    :data:`MEDIANS_TOLERANCE`): then the paired figure and the medians printed beside it tell two stories, and
    neither is stated as a finding."""
    if str(v.get("verdict")) not in ("faster", "slower", "same", "inconclusive", "ambiguous"):
        return False
    m, lo, hi = medians_ratio(v), _num(v, "ci_low"), _num(v, "ci_high")
    return all(math.isfinite(x) for x in (m, lo, hi)) and not lo / (1 + MEDIANS_TOLERANCE) <= m <= hi * (
        1 + MEDIANS_TOLERANCE)


#: How far past the ±5% "same" band every estimate of a pair must lie, on one side, for its direction to be said
#: while its size is not settled (:func:`settled_direction`): twice the band.
DIRECTION_MARGIN = 2 * SAME_WITHIN


def settled_direction(v: Mapping[str, Any]) -> tuple[str, float, float] | None:
    """("faster" | "slower", lowest, highest estimate) where a pair reads "inconclusive" only because its
    estimates part (:func:`medians_disagree`, a ``bimodal_note``) yet every one of them (the paired speed-up, the
    medians' ratio, and any ``mode_ratios`` of a bimodal side's modes against the other side) lies on the same
    side, past :data:`DIRECTION_MARGIN`: then who was faster is settled and only the size is not (08 read "could
    not tell torch from numpy" at 2.20× paired against 2.76× from the medians). None otherwise, and None for a
    disturbed pair (its paired figure informs nothing) unless a side is bimodal and every mode lies on one side past
    the noise (:func:`~workbench.report.claims_rows.disturbed_bimodal_direction`)."""
    if rests_on_disturbed(v) or not (medians_disagree(v) or v.get("bimodal_note")):
        return None
    if is_disturbed(_num(v, "floor")):   # only a bimodal side's modes, each past the noise, settle it (06)
        return disturbed_bimodal_direction(v, DIRECTION_MARGIN)
    estimates = [_num(v, "speedup"), medians_ratio(v)] + [float(x) for x in (v.get("mode_ratios") or [])]
    if not all(math.isfinite(x) and x > 0 for x in estimates):
        return None
    if min(estimates) > 1 + DIRECTION_MARGIN:
        return "faster", min(estimates), max(estimates)
    if max(estimates) < 1 / (1 + DIRECTION_MARGIN):
        return "slower", min(estimates), max(estimates)
    return None


def rests_on_disturbed(v: Mapping[str, Any]) -> bool:
    """Whether a comparison rests on a cell that reads disturbed (``cells_disturbed`` > 0,
    :func:`~workbench.report.claims.mark_busy`): a cell whose quartiles lie half its median or more apart
    (:func:`~workbench.judge.disturbed.cell_disturbed`), the cell its figure draws as a cross, "no value to
    read", and its tables read "disturbed". Such a comparison reads "disturbed", whatever its paired interval: no
    "faster", no cause, the rerun hint (:func:`~workbench.report.claims.verdict_sentence`). 01 printed "numpy @
    numpy was faster: numba @ numba took 1.35× its time" beside a figure crossing numba's cell out; 05 gave
    "portable-fused ran 1.2× faster" and its cause for two crossed-out cells."""
    return _num(v, "cells_disturbed") > 0


def comparison_disturbed(v: Mapping[str, Any]) -> bool:
    """Whether a comparison reads "disturbed": its interval reaches :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`
    (a verdict reached, :func:`~workbench.judge.verdicts.is_disturbed`), or it rests on a disturbed cell
    (:func:`rests_on_disturbed`). The one test the sentence, its check and the table beside it apply."""
    return reading(v) in ("faster", "slower", "inconclusive") and (
        (is_disturbed(_num(v, "floor")) and not too_few_words(v.get("basis"))) or rests_on_disturbed(v))


def may_state_cause(v: Mapping[str, Any]) -> bool:
    """Whether a sentence may give a cause for this pair ("tiling pays: ...", "fusion saves a pass"): only under
    a settled verdict, i.e. "faster" or "slower" (:func:`reading`: the medians agree with the interval and no
    side is bimodal) and not disturbed (its floor within
    :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`). Every tutorial's cause sentence is conditional on it."""
    return reading(v) in ("faster", "slower") and not is_disturbed(_num(v, "floor"))


settled = may_state_cause


def reading(v: Mapping[str, Any]) -> Reading:
    """What a verdict lets a sentence say: ``v`` is a row of a speed-up table or a verdict's dict (keys
    ``verdict``, ``speedup``, ``ci_low``, ``ci_high``, ``floor``; with ``median_a``/``median_b`` a pair whose
    medians disagree with its interval reads "inconclusive", :func:`medians_disagree`; so does one with a
    ``bimodal_note``, a side whose rounds fell in two modes; and so does one that rests on a disturbed cell,
    :func:`rests_on_disturbed`)."""
    verdict = str(v.get("verdict"))
    if verdict in ("faster", "slower", "same", "inconclusive", "ambiguous") and rests_on_disturbed(v):
        return "inconclusive"   # a side the figure crosses out: no call rests on it (rests_on_disturbed)
    if medians_disagree(v) or v.get("bimodal_note"):
        return "inconclusive"
    if verdict in ("faster", "slower"):
        return verdict  # type: ignore[return-value]
    if verdict == "same":
        floor = _num(v, "floor")
        return "same" if math.isfinite(floor) and floor <= SAME_MAX_FLOOR else "inconclusive"
    if verdict in ("inconclusive", "ambiguous"):
        return "inconclusive"
    return "no call"


def summary_reading(v: Mapping[str, Any]) -> str:
    """What a summary may list a pair under, as its sentence reads it: :func:`reading`, except that a pair resting on a
    disturbed cell with every quartile of one side beyond the other's (``quartiles_apart``) reads "faster,
    disturbed" or "slower, disturbed", as its sentence says who was faster, the amount not readable. 01's summary
    said "could not be told from it" of pairs its sentences had just called faster."""
    way = str(v.get("quartiles_apart") or "")
    if way in ("faster", "slower") and rests_on_disturbed(v):
        return f"{way}, disturbed"
    return reading(v)


#: A summary's group for each :func:`summary_reading`, in the order it lists them.
SUMMARY_GROUPS: dict[str, str] = {
    "faster": "faster beyond the noise",
    "faster, disturbed": "faster, the amount not readable (disturbed)",
    "same": "the same within ±5%",
    "slower": "slower beyond the noise",
    "slower, disturbed": "slower, the amount not readable (disturbed)",
    "inconclusive": "not told apart (whatever order the plot's medians show)",
    "no call": "no verdict",
}


def readings_summary(said: Mapping[str, str], base: str) -> str:
    """What the verdict lines at one size add up to, every pair in one group by its :func:`summary_reading`
    (``said``: pair name -> reading), each against ``base`` named in full: "against numpy @ numpy: faster beyond
    the noise: numba @ numba; slower beyond the noise: wgsl @ vulkan". 01's summary listed the faster pairs and a
    disturbed one, and left out a pair settled 56× slower; its "it" stood for the baseline."""
    unknown = set(said.values()) - set(SUMMARY_GROUPS)
    if unknown:
        raise ValueError(f"readings {sorted(unknown)} have no summary group; valid: {list(SUMMARY_GROUPS)}")
    groups = [f"{words}: {', '.join(k for k, r in said.items() if r == want)}"
              for want, words in SUMMARY_GROUPS.items() if want in said.values()]
    return f"against {base}, " + "; ".join(groups) if groups else f"no pair compared against {base}"
