"""Where the noise of a comparison between two runs comes from, said over the same cells as the lines beside it,
and the rerun advice that follows from it, one rule for each cell's line and for the summary under them.

Tutorial 07's summary said "of each cell's noise (one sigma) its own rounds give ±7.7% to ±14%" over the
undisturbed cells alone, beside lines reading "its own rounds (±25%)" and "within its ±25% noise floor"; and it
advised "about 2 runs a side" from the ±1.0% run-to-run scatter while every line above it said its own rounds made
most of its noise and advised more rounds. Here the summary names which cells each range covers, gives their
floors as the lines print them, and advises what the lines advise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.judge.disturbed import is_disturbed, pct
from workbench.judge.verdicts import K_BETWEEN
from workbench.report.ratio_text import sigma_pct
from workbench.report.runs_needed import practical, runs_a_side, runs_command, runs_needed_text, runs_rerun_hint

#: The rerun advice of a cell whose own rounds make most of its noise (its subject: "it" or "them").
OWN_ROUNDS = "its own rounds make most of its noise"


def own_part(noise: float, run_sigma: float) -> float:
    """A cell's own rounds' part of its noise (log, one sigma): the run-to-run part taken out in quadrature."""
    return math.sqrt(max(noise ** 2 - run_sigma ** 2, 0.0)) if math.isfinite(noise) else 0.0


def own_rounds_dominate(noise: float, run_sigma: float) -> bool:
    """Whether a cell's own rounds make the larger part of its noise: the one rule its line ("rests on its own
    rounds more than the runs' scatter") and its advice follow. 07 said the first and then advised "about 7 runs
    a side" alone, because this also asked that the runs' part leave a floor within 5%."""
    return own_part(noise, run_sigma) > run_sigma


def runs_alone_settle(run_sigma: float) -> bool:
    """Whether the run-to-run part alone leaves a floor within the 5% a change must reach."""
    return math.expm1(K_BETWEEN * run_sigma) < 0.05


def rerun_advice(noise: float, run_sigma: float, busy: bool, subject: str = "it") -> str:
    """What would settle a comparison, from the part of its noise that dominates: more runs a side (the summary's
    own figure, :func:`~workbench.report.runs_needed.runs_rerun_hint`) where the run-to-run part is the larger;
    else its own rounds first: more rounds in each run, or on a busy machine a rerun while it is otherwise idle
    (more rounds there add its disturbance), and more runs a side too where the runs' part alone leaves a floor
    past 5%."""
    if not own_rounds_dominate(noise, run_sigma):
        return runs_rerun_hint(run_sigma)
    mostly = OWN_ROUNDS if subject == "it" else "their own rounds make most of their noise"
    head = (f"a rerun while the machine is otherwise idle could settle {subject} ({mostly}; more rounds on a busy "
            "machine add its disturbance too)" if busy else
            f"more rounds in each run could settle {subject} ({mostly})")
    if runs_alone_settle(run_sigma):
        return head
    n = runs_a_side(run_sigma)
    runs = (f"about {n} runs a side ({runs_command(n)})" if practical(run_sigma) else
            f"quieter runs (the run-to-run scatter, {sigma_pct(run_sigma)}, would need about {n:,} runs a side)")
    return f"{head}; the run-to-run part alone still needs {runs}"


def summary_advice(noises: Sequence[float], run_sigma: float, busy: bool) -> str:
    """The summary's advice, from the same rule as each line's (:func:`rerun_advice`): the runs a side the
    run-to-run scatter needs where every line's advice is about runs; the lines' own-rounds advice where every
    line's is that; both, each said of the cells it holds for, where the lines differ."""
    own = [own_rounds_dominate(n, run_sigma) for n in noises]
    if not any(own):
        return runs_needed_text(run_sigma)
    hint = rerun_advice(next(n for n, o in zip(noises, own, strict=True) if o), run_sigma, busy, "them")
    if all(own):
        return hint
    return (f"where the run-to-run part dominates ({own.count(False)} of {len(own)} cells) "
            f"{runs_needed_text(run_sigma)}; where their own rounds do ({own.count(True)}), {hint}")


def _one(value: float) -> str:
    """A relative noise as a ± within ±50%, past it as a factor, as
    :func:`~workbench.report.claims_cause.scatter_text` says a sigma: 07, one core busy, printed "±41% to ±729%",
    a ± past what an interval can inform within, and its claim check refused the summary."""
    return f"±{pct(value)}" if value <= 0.5 else f"{1 + value:.2g}× either way"


def _range(values: list[float]) -> str:
    lo, hi = _one(min(values)), _one(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def _mostly(own: list[float], noise: list[float], subject: str) -> str:
    share = [o ** 2 / n ** 2 if n > 0 else 0.0 for o, n in zip(own, noise, strict=True)]
    if all(s > 0.5 for s in share):
        return f"most of {subject} comes from the cells' own rounds"
    if all(s < 0.5 for s in share):
        return f"most of {subject} comes from the run-to-run part"
    return "the two parts weigh differently at different sizes"


def noise_parts_text(rows: Iterable[Mapping[str, Any]], run_sigma: float, run_basis: str) -> str:
    """Where the noise of ``rows`` (comparisons with ``noise``, a log sigma, and ``floor``; said as comparisons, not
    cells: 07's "the 5 disturbed cells' noise" quoted comparisons beside cells it calls disturbed) comes from, one
    thing a sentence: for the undisturbed cells, their noise and floors as the lines print them, then their own rounds'
    part; for the disturbed ones, their own rounds' part apart (they print no floor); the run-to-run noise they
    share, once; which part weighs more. "" where no row has a finite noise."""
    cells = [(float(r["noise"]), float(r["floor"])) for r in rows
             if r.get("noise") is not None and math.isfinite(float(r["noise"]))]
    if not cells:
        return ""
    calm = [(n, f) for n, f in cells if not is_disturbed(f)]
    wild = [n for n, f in cells if is_disturbed(f)]
    parts = []
    if calm:
        noise = [n for n, _ in calm]
        own = [own_part(n, run_sigma) for n in noise]
        parts.append(
            f"Of the {len(calm)} undisturbed comparisons' noise ({_range([math.expm1(n) for n in noise])} one sigma; "
            f"noise floors, as the lines print them, {_range([f for _, f in calm])}), their own rounds give "
            f"{_range([math.expm1(o) for o in own])}.")
    if wild:
        own = [own_part(n, run_sigma) for n in wild]
        total, mine = _range([math.expm1(n) for n in wild]), _range([math.expm1(o) for o in own])
        parts.append(
            f"Of the {len(wild)} disturbed comparisons' noise ({total} one sigma; floors past ±50%, so the lines print "
            "none), " + ("nearly all comes from their own rounds." if mine == total else
                         f"their own rounds give {mine}."))
    parts.append(f"The run-to-run noise is ±{pct(math.expm1(run_sigma))} ({run_basis}).")
    groups = [(own_all, n_all) for own_all, n_all in
              (([own_part(n, run_sigma) for n, _ in calm], [n for n, _ in calm]),
               ([own_part(n, run_sigma) for n in wild], wild)) if n_all]
    own_all = [o for g, _ in groups for o in g]
    noise_all = [n for _, g in groups for n in g]
    # which part weighs more, only where the sentences above have not said it: 07 printed "nearly all comes from
    # their own rounds" and then "most of the noise comes from the cells' own rounds"
    if calm or not wild or _range([math.expm1(o) for o in own_all]) != _range([math.expm1(n) for n in noise_all]):
        parts.append(f"The parts add in quadrature: {_mostly(own_all, noise_all, 'the noise')}.")
    return " ".join(parts)
