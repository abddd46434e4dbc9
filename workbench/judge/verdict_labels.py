"""A verdict in words: the one place a verdict, its floor and its basis become a label.

The basis is a required argument everywhere here: a pair left too few rounds at speed (the host's slow rounds set
aside, :mod:`workbench.judge.few_rounds`) reads "could not tell (too few rounds at speed: 1 set aside)", never
"disturbed", and that needs the basis. Three callers once passed none (the report's key findings, ``workbench
compare``, the speed-up figure's labels) and read "disturbed" beside a tutorial reading "could not tell" of the
same pair (issue 39). :func:`verdict_labels` reads a whole table's columns, so a caller cannot drop one.
"""

from __future__ import annotations

import math
from typing import Any

from workbench.judge.disturbed import is_disturbed, pct
from workbench.judge.few_rounds_basis import too_few_words

#: Verdicts a floor past :data:`~workbench.judge.disturbed.DISTURBED_FLOOR` turns into "disturbed" (or a too-few
#: label); every other verdict ("baseline", "insufficient samples", ...) reads as it is.
JUDGED = ("same", "inconclusive", "faster", "slower")


def verdict_label(verdict: str, floor: Any, basis: Any) -> str:
    """"same (within ±X%)" / "inconclusive (±X%)" with the floor; "disturbed" (and "faster, disturbed") past
    :data:`~workbench.judge.disturbed.DISTURBED_FLOOR`, where no floor is printed; other verdicts as they are. Past
    it on a ``basis`` of too few rounds at speed (:func:`workbench.judge.few_rounds_basis.too_few_words`) the label
    says that instead of "disturbed": "could not tell (too few rounds at speed: 1 set aside)" (05 read "disturbed"
    of two shared rounds at 1.35-1.45x, neither cell noisy, on a machine not busy: the width was an assumed drift,
    no disturbance). ``basis`` is required (None where the verdict has none) so no caller can forget it."""
    if verdict in JUDGED and is_disturbed(floor):
        if few := too_few_words(basis):
            return f"could not tell ({few})" if verdict in ("same", "inconclusive") else \
                f"{verdict}, amount unknown ({few})"
        return "disturbed" if verdict in ("same", "inconclusive") else f"{verdict}, disturbed"
    if verdict in ("same", "inconclusive") and floor is not None and math.isfinite(float(floor)):
        return f"same (within ±{pct(float(floor))})" if verdict == "same" else f"inconclusive (±{pct(float(floor))})"
    return verdict


def verdict_labels(table: Any, *, past_floor_only: bool = False) -> list[str]:
    """:func:`verdict_label` of every row of a verdict table (a DataFrame, or a mapping of columns): its "verdict",
    "floor" and "basis" columns, a missing floor or basis read as none. ``past_floor_only``: rows whose floor can
    inform keep their bare verdict ("inconclusive", not "inconclusive (±12%)"), as a count of verdicts prints them."""
    verdicts = [str(v) for v in table["verdict"]]
    floors = _column(table, "floor", len(verdicts), math.nan)
    bases = _column(table, "basis", len(verdicts), None)
    return [verdict_label(v, f, b) if not past_floor_only or is_disturbed(f) else v
            for v, f, b in zip(verdicts, floors, bases, strict=True)]


def reads_disturbed(floor: Any, basis: Any) -> bool:
    """Whether a verdict reads "disturbed": its interval is too wide to inform
    (:func:`~workbench.judge.disturbed.is_disturbed`) and not because too few rounds were left at speed to pair
    (whose label and caveat say that instead). The test every "disturbed" printed of a judged pair applies."""
    return is_disturbed(floor) and not too_few_words(basis)


def _column(table: Any, name: str, n: int, missing: Any) -> list[Any]:
    """The column ``name`` of ``table`` as a list, NaN/None read as ``missing``; ``missing`` n times where absent."""
    col = table.get(name) if hasattr(table, "get") else None
    if col is None:
        return [missing] * n
    return [missing if x is None or (isinstance(x, float) and x != x) else x for x in col]
