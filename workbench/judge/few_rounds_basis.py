"""The words of a verdict's basis where the slow host left a pair few rounds at speed
(:mod:`workbench.judge.few_rounds`): written, read back and turned into a label's words.

Apart from :mod:`~workbench.judge.few_rounds` because :func:`workbench.judge.verdicts.verdict_label` reads them, and
``few_rounds`` judges with ``verdicts``: text alone, so neither module imports the other in a cycle.
"""

from __future__ import annotations

import re
from typing import Any


def paired_basis_text(n: int, set_aside: int) -> str:
    """The basis of a pair judged on ``n`` shared rounds at speed: "2 paired rounds (1 set aside by the slow host)"."""
    return f"{n} paired rounds ({set_aside} set aside by the slow host)"


def too_few_basis_text(n: int, set_aside: int) -> str:
    """The basis of a pair whose rounds at speed were too few to pair, and that had no typical spread to lean on."""
    return f"{n} shared round{'' if n == 1 else 's'} at speed ({set_aside} set aside by the slow host), too few to pair"


_PAIRED = re.compile(r"(\d+) paired rounds \((\d+) set aside by the slow host\)\Z")
_TOO_FEW = re.compile(r"(\d+) shared rounds? at speed \((\d+) set aside by the slow host\), too few to pair\Z")


def read_basis(basis: Any) -> tuple[bool, int, int] | None:
    """(paired, rounds shared at speed, rounds set aside) of a basis this module wrote; None for any other."""
    text = str(basis or "")
    for paired, pattern in ((True, _PAIRED), (False, _TOO_FEW)):
        if m := pattern.match(text):
            return paired, int(m.group(1)), int(m.group(2))
    return None


def too_few_words(basis: Any) -> str:
    """"too few rounds at speed: 1 set aside" where ``basis`` is a :func:`too_few_basis_text` (a pair judged
    unpaired, its interval an assumed drift that can reach ±50% with no disturbance at all); "" for any other. A
    verdict on such a basis reads this, never "disturbed" (docs/statistics.md, "The decision")."""
    read = read_basis(basis)
    return f"too few rounds at speed: {read[2]} set aside" if read is not None and not read[0] else ""
