"""When a comparison may be called "beyond the noise": never where its interval, or one of its cells, reads
"disturbed".

10 printed "numba-flash was slower at L=4,096 (beyond the noise)" from a settled paired verdict, and "graph beat
eager beyond the noise" from a "faster" verdict, while the same cells were called disturbed further on (a cell's
quartiles spanning ±50% of its median, or the pair's interval past ±50%). A disturbed cell is never beyond the
noise: :func:`beyond_noise` asks both, and :func:`direction_said` labels a pair the way the summary lines count it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.judge.few_rounds_basis import too_few_words
from workbench.judge.verdict_labels import reads_disturbed
from workbench.judge.verdicts import is_disturbed
from workbench.report.claims import may_state_cause, medians_disagree, reading
from workbench.report.claims_rows import quartiles_wide

#: The one meaning of "not settled" in a summary: the paired figure and the ratio of the two cells' medians part
#: (:func:`~workbench.report.claims.medians_disagree`), as the tutorials' notes define it. A pair that is merely
#: undecided reads "could not tell", a disturbed one says "disturbed" (10 printed "not settled" for three
#: disturbed comparisons beside a note defining it as the medians disagreeing).
NOT_SETTLED = "not settled"
UNDECIDED = "could not tell"
#: The qualifier a label carries where the pair's interval is too wide only because too few of its rounds were left
#: at speed to pair (:mod:`workbench.judge.few_rounds`): its verdict tables read "could not tell (too few rounds at
#: speed ...)", never "disturbed", and a summary of it says the same (10 summed such a pair up as "disturbed").
FEW_ROUNDS = "too few rounds at speed"


def disturbed_cells(cells: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The cells whose quartiles span ±50% of their median or more (the summary's "disturbed")."""
    return [c for c in cells if quartiles_wide(c)]


def beyond_noise(v: Mapping[str, Any], cells: Iterable[Mapping[str, Any]] = ()) -> bool:
    """Whether the pair ``v`` may be called faster or slower "beyond the noise": a settled verdict
    (:func:`~workbench.report.claims.may_state_cause`: its interval within ±50%) on cells none of which reads
    "disturbed" (``cells``: the pair's own rows, each with ``median_s`` and ``iqr_s`` or ``q1_s``/``q3_s``)."""
    return may_state_cause(v) and not disturbed_cells(cells)


def direction_said(v: Mapping[str, Any], cells: Iterable[Mapping[str, Any]] = ()) -> str:
    """"faster" / "slower" beyond the noise (:func:`beyond_noise`); "faster, disturbed" / "slower, disturbed" where
    the direction is the verdict's but the interval or a cell is disturbed; :data:`NOT_SETTLED` only where the
    paired figure and the medians' ratio part; else "same" or :data:`UNDECIDED`, each with ", disturbed" where the
    interval or a cell is (a summary never drops the word its sentence printed); ", too few rounds at speed"
    (:data:`FEW_ROUNDS`) instead of ", disturbed" where the interval is wide only because too few rounds were left
    at speed to pair and no cell is disturbed."""
    r, wide_cells = reading(v), bool(disturbed_cells(cells))
    few = is_disturbed(v.get("floor")) and bool(too_few_words(v.get("basis"))) and not wide_cells
    disturbed = reads_disturbed(v.get("floor"), v.get("basis")) or wide_cells
    if r in ("faster", "slower"):
        return r if beyond_noise(v, cells) else f"{r}, {FEW_ROUNDS}" if few else f"{r}, disturbed"
    if medians_disagree(v):
        return NOT_SETTLED
    said = "same" if r == "same" else UNDECIDED
    return f"{said}, disturbed" if disturbed else f"{said}, {FEW_ROUNDS}" if few else said


def disturbed_why(v: Mapping[str, Any], cells: Iterable[Mapping[str, Any]] = ()) -> str:
    """Which part of the pair ``v`` made :func:`direction_said` add "disturbed", named as the table and the line
    print it: each disturbed cell by its variant ("numba-eager's quartiles lie half its median or more apart", the
    table's ", disturbed") and/or the comparison ("its interval reaches ±50% or more"); "" where neither is. 10
    summed up "numba: disturbed (the comparison or a cell)" beside a line within a ±26% floor and a table that marked
    no cell, so the reader could not find what was disturbed."""
    names = [str(c.get("variant", "a cell")) for c in disturbed_cells(cells)]
    parts = ([f"{' and '.join(names)}'s quartiles lie half {'its median' if len(names) == 1 else 'their medians'} "
              "or more apart (the table's ', disturbed')"] if names else [])
    if reads_disturbed(v.get("floor"), v.get("basis")):
        parts.append("the comparison's interval reaches ±50% or more")
    return "; ".join(parts)


def label_word(label: str) -> str:
    """The one word a summary prints for a :func:`direction_said` label: "disturbed" for any label that carries it,
    naming no direction and no "could not tell" beside it (10 summed up "could not tell at L=256 (the comparison or
    a cell is disturbed)" and "faster, disturbed" comparisons as "ran faster" beside a table reading "disturbed");
    the label itself otherwise."""
    return "disturbed" if label.endswith(", disturbed") else label


def settled_count(pairs: Iterable[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]], way: str) -> int:
    """How many of ``pairs`` ((verdict, its cells)) read ``way`` ("faster" / "slower") beyond the noise
    (:func:`direction_said`): a count of settled results never counts a disturbed one. 10 said "the verdicts settle
    that it was faster than both others at 2 of 3 lengths", counting a length whose two comparisons it printed as
    disturbed ("at least 6.7×, by how much is unknown: the comparison was disturbed")."""
    return sum(direction_said(v, cells) == way for v, cells in pairs)


#: Said with "beyond the noise" where a cell of the pair is marked noisy (the tables' "~", hollow in the figures): 10
#: printed "beyond the noise" on cells every figure marked noisy, and said nothing of why both could hold.
#: said beside "beyond the noise" on noisy cells, as a claim, not a double negative (10 printed "a spread the paired
#: interval already carries and still excludes no change with", read as if the interval did not exclude it)
NOISY_ASIDE = ("its cells are marked noisy (~, hollow in the figures) for their own rounds' spread or a busy "
               "machine; the paired interval is built from those same rounds, so it carries that spread, and it still "
               "lies wholly on one side of no change")


def beyond_text(noisy: bool) -> str:
    """"beyond the noise", with :data:`NOISY_ASIDE` where a cell of the pair is marked noisy."""
    return "beyond the noise" + (f"; {NOISY_ASIDE}" if noisy else "")


def lowest_text(variant: str, lengths: Sequence[tuple[str, Sequence[str]]]) -> str:
    """What a summary may say of ``variant``, the cell with the lowest median at each of ``lengths`` ((a name such
    as "L=256", the :func:`direction_said` labels of every other variant against it there, "slower" meaning the
    other was slower)): settled where every label there is "slower" beyond the noise; a length with a disturbed
    comparison names no fastest and its lowest median is not headlined (docs/statistics.md); elsewhere the lowest
    median is a reading of medians, not a finding. 10 printed "numba-flash had the lowest median at every cache
    length" beside disturbed comparisons at L=256, and "settle ... at 0 of 3 lengths only, so elsewhere this is a
    reading of medians"."""
    if not lengths:
        return ""
    settled = [n for n, labels in lengths if labels and all(x == "slower" for x in labels)]
    disturbed = [n for n, labels in lengths if any(label_word(x) == "disturbed" for x in labels)]
    rest = [n for n, _ in lengths if n not in settled and n not in disturbed]
    if len(settled) == len(lengths):
        return f"{variant} was faster than every other variant, beyond the noise, at every length measured here"
    parts = ([f"{variant} had the lowest median at every length measured here"] if not disturbed else [])
    if settled:
        parts.append(f"the verdicts settle that {variant} was faster than every other variant, beyond the noise, at "
                     f"{', '.join(settled)} only")
    if rest:
        parts.append(f"at {', '.join(rest)} the verdicts do not settle that {variant} was faster than every other: "
                     "its lowest median there is a reading of medians, not a finding")
    if disturbed:
        parts.append(f"at {', '.join(disturbed)} a comparison is disturbed, so no fastest is named there")
    # one thing a sentence: the variant's name keeps its case, a sentence opening on "at" or "the" is capitalised
    return " ".join((p[:1].upper() + p[1:] if p.split()[0] in ("at", "the") else p) + "." for p in parts)
