"""What besides the change under test made a difference between two runs, named only where the other numbers agree.

07 printed "at n=1048576 run B took more than 2× run A's time even at its interval's low end ... the machine between
the runs made part of that difference" while numpy, unchanged between the runs, ran 1.2× *faster* in run B at that
size, and the figure drew run A's numba cell as a disturbed cross: a cause named that the numbers beside it
contradict. The machine between the runs is named here only where the unchanged control at the same size moved the
same way beyond the noise and neither cell of the pair reads disturbed; otherwise the sentence says what argues
against it and that the rows cannot say what made the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.report.claims import may_state_cause, reading
from workbench.report.claims_rows import _num
from workbench.report.ratio_text import estimate_text, inverse_text

#: The phrase that names the machine between the runs as a cause (tests look for it).
MACHINE_CAUSE = "the machine between the runs made part of that difference"


def rest_cause(control: Mapping[str, Any] | None, control_name: str, disturbed_cells: Sequence[str] = (),
               base: str = "run A", other: str = "run B") -> str:
    """What made the part of a difference that the change under test cannot give, in words: :data:`MACHINE_CAUSE`
    only where ``control`` (the unchanged variant's pair at the same size, speed-up = ``base``'s time over
    ``other``'s) reads "slower" settled (:func:`~workbench.report.claims.may_state_cause`), as the pair did, and no
    cell of the pair is disturbed (``disturbed_cells``: their names, e.g. "run A's numba cell"); else what argues
    against naming it, and that the rows cannot say."""
    if control is None:
        against = [f"no unchanged cell at this size shows what the machine did between {base} and {other}"]
    else:
        s, lo, hi = (_num(control, k) for k in ("speedup", "ci_low", "ci_high"))
        said, settled = reading(control), may_state_cause(control)
        if said == "slower" and settled and not disturbed_cells:
            return (f"{control_name}, unchanged between the runs, was slower in {other} too at this size (took "
                    f"{inverse_text(s, lo, hi)} {base}'s time): {MACHINE_CAUSE}")
        if said == "slower" and settled:
            against = [f"{control_name}, unchanged between the runs, was slower in {other} too at this size (took "
                       f"{inverse_text(s, lo, hi)} {base}'s time)"]
        elif said == "faster" and settled:
            against = [f"{control_name}, unchanged between the runs, went the other way at this size ({other} ran "
                       f"{estimate_text(s, lo, hi)} faster), so these rows do not show the machine slower in {other}"]
        else:
            against = [f"{control_name}, unchanged between the runs, shows no settled change at this size, so these "
                       f"rows do not show the machine slower in {other}"]
    if disturbed_cells:
        against.append(f"{' and '.join(disturbed_cells)} read{'s' if len(disturbed_cells) == 1 else ''} disturbed "
                       "(its quartiles lie half its median or more apart), so its median may not be its typical "
                       "time")
    return "what made the rest these rows cannot say: " + "; ".join(against)
