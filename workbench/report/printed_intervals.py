"""No printed interval may be wider than an interval that can inform (issue 39): the check every claim passes.

A ± past :data:`~workbench.judge.verdicts.DISTURBED_FLOOR` ("±80%") and an interval whose printed ends lie that far
apart ("interval 4×-9×": ±50% each way around 6×, which 04 printed as a finding) both say "disturbed" instead. The
edge is inclusive, as :func:`~workbench.judge.verdicts.is_disturbed` is, and read from the printed digits: a
reader divides the ends as printed, not the unrounded ones.
"""

from __future__ import annotations

import math
import re

from workbench.judge.verdicts import DISTURBED_FLOOR


class ClaimMismatch(AssertionError):
    """A sentence says something its verdict does not, or a verdict disagrees with its own numbers."""


_PRINTED_FLOOR = re.compile(r"±\s*([\d,]+(?:\.\d+)?)\s*%")
#: A ± that states the rule rather than an interval: "wider than ±50%", "past ±50%", "passes ±50%", "±50% or wider".
_RULE_BEFORE = re.compile(r"(than|past|beyond|passes|passed|reaches|exceeds)\s*$")
_RULE_AFTER = re.compile(r"\s*(of (its|their) medians? )?(or wider|or more)\b")
#: "interval 4×-9×", "interval (1.2×-1.5×", "interval 1.89-2.72×": an interval's two printed ends.
_PRINTED_INTERVAL = re.compile(r"interval \(?(\d[\d,]*(?:\.\d+)?)×?\s*[-–]\s*(\d[\d,]*(?:\.\d+)?)×")


def printed_half_width(lo: float, hi: float) -> float:
    """The relative half-width a reader reads off an interval's two printed ends (on the ratio's log scale:
    4×-9× is ±50% around 6×)."""
    return math.sqrt(hi / lo) - 1 if 0 < lo <= hi else math.inf


def check_printed_intervals(text: str) -> None:
    """Raise :class:`ClaimMismatch` where ``text`` prints a ±, or an interval's two ends, at or past
    :data:`~workbench.judge.verdicts.DISTURBED_FLOOR`: such a comparison is said as disturbed, not as a number."""
    for m in _PRINTED_FLOOR.finditer(text):
        if _RULE_BEFORE.search(text[:m.start()]) or _RULE_AFTER.match(text[m.end():]):
            continue   # the rule itself ("intervals of ±50% or wider are not printed"), not an interval
        if float(m.group(1).replace(",", "")) / 100 >= DISTURBED_FLOOR:
            raise ClaimMismatch(f"{text!r} prints ±{m.group(1)}%, as wide as an interval that cannot inform "
                                f"(±{DISTURBED_FLOOR:.0%}): say the comparison was disturbed instead")
    for m in _PRINTED_INTERVAL.finditer(text):
        lo, hi = (float(x.replace(",", "")) for x in m.groups())
        if printed_half_width(lo, hi) >= DISTURBED_FLOOR - 1e-12:
            raise ClaimMismatch(f"{text!r} prints the interval {m.group(0)!r}, ±{printed_half_width(lo, hi):.0%} "
                                f"as printed, as wide as an interval that cannot inform (±{DISTURBED_FLOOR:.0%}): "
                                "say the comparison was disturbed instead")
