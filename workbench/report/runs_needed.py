"""How many runs a side the run-to-run scatter needs, said once and used by every sentence that advises runs.

07's summary said "about 60 runs a side to settle ±5%: no practical number of runs does" while each cell above it
advised "compare several runs a side (workbench compare A1,A2,A3 B1,B2,B3)": two figures for one question, and the
cells advised what the summary called impractical. :func:`runs_rerun_hint` gives each cell the figure
:func:`runs_needed_text` gives the summary.
"""

from __future__ import annotations

import math

from workbench.judge.verdicts import K_BETWEEN, SAME_WITHIN
from workbench.report.ratio_text import sigma_pct

#: The most runs a side called a practical number to rerun.
PRACTICAL_RUNS = 20


def runs_a_side(sigma: float) -> int:
    """Runs a side that a run-to-run scatter ``sigma`` (log, of one run's ratio to the other's) needs for the
    :data:`~workbench.judge.verdicts.K_BETWEEN` sigmas an interval spans to fit inside the ±5% band "same" is
    said within: n runs a side give sigma / sqrt(n). Two at least: one run a side is what was compared."""
    return max(math.ceil((K_BETWEEN * abs(sigma) / math.log1p(SAME_WITHIN)) ** 2), 2)


def practical(sigma: float) -> bool:
    """Whether :func:`runs_a_side` is at most :data:`PRACTICAL_RUNS`."""
    return runs_a_side(sigma) <= PRACTICAL_RUNS


def _side(letter: str, n: int) -> str:
    return ",".join(f"{letter}{i}" for i in range(1, n + 1)) if n <= 4 else f"{letter}1,{letter}2,...,{letter}{n}"


def runs_command(n: int) -> str:
    """The compare command over ``n`` runs a side."""
    return f"workbench compare {_side('A', n)} {_side('B', n)}"


def runs_needed_text(sigma: float) -> str:
    """The summary's sentence: the scatter, the runs a side it needs, and whether that is a practical number."""
    n = runs_a_side(sigma)
    said = f"the run-to-run scatter ({sigma_pct(sigma)}) needs about {n:,} runs a side to settle ±{SAME_WITHIN:.0%}"
    return said + (": no practical number of runs does; quieter runs (less scatter between them) could"
                   if not practical(sigma) else f" ({runs_command(n)})")


def runs_rerun_hint(sigma: float) -> str:
    """Each cell's rerun advice between two runs, with the summary's figure: "about n runs a side" where that is
    practical, else that no practical number does and quieter runs would."""
    n = runs_a_side(sigma)
    if practical(sigma):
        return (f"run each side again and compare about {n} runs a side ({runs_command(n)}): the noise between runs "
                "shrinks with runs, not with rounds")
    return (f"no practical number of runs settles it (the run-to-run scatter, {sigma_pct(sigma)}, needs about "
            f"{n:,} runs a side); quieter runs (less scatter between them) could")


def is_runs_hint(hint: str | None) -> bool:
    """Whether ``hint`` is advice about runs between two runs (:func:`runs_rerun_hint`, or the older fixed
    :data:`workbench.report.claims.RUNS_RERUN_HINT`), not about a cell's rounds."""
    return bool(hint) and ("runs a side" in hint)
