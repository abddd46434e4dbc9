"""The sentence that names a run's disturbed cells: which, by what rule, what disturbed them, how to rerun.

A figure draws a disturbed cell (:func:`~workbench.judge.disturbed.cell_disturbed`) as its quartiles only, an x at
each and no band, nothing at its median ("no value to read"); 01 and 05 showed three such cells and no sentence
named them, their cause or the rerun hint docs/statistics.md promises, while the text beside them counted every
cell "noisy" and the legend 7 hollow and 3 crossed. :func:`disturbed_cells_text` names them;
:func:`noisy_count_text` counts the noisy cells as the legend does (the crossed ones apart).
"""

from __future__ import annotations

import pandas as pd

from workbench.core.conditions import BUSY_CPU_SHARE
from workbench.judge.disturbed import CELL_RULE, hint_after, rerun_hint
from workbench.report.claims_cause import busy_share, disturbance_text
from workbench.report.claims_rows import quartiles_wide


def _crossed(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows["status"] == "ok"] if "status" in rows else rows
    return ok[[quartiles_wide(r) for r in ok.to_dict("records")]] if len(ok) else ok


def disturbed_cells_text(rows: pd.DataFrame) -> str:
    """"numba @ numba at n=4096 and portable @ opencl-0 at n=4096, n=65536 read disturbed (...)": the run's
    disturbed cells by name and size, the rule, that the figure crosses them out and no comparison reads a ratio
    from them, what disturbed them (the rows' load and other processes' share) and how to rerun; "" where none is."""
    crossed = _crossed(rows)
    if crossed.empty:
        return ""
    size = "size_label" if "size_label" in crossed else "size"
    cells = []
    for (variant, backend), g in crossed.groupby(["variant", "backend"], sort=False):
        cells.append(f"{variant} @ {backend} at {', '.join(str(x) for x in g[size])}")
    n = len(crossed)
    share = busy_share(crossed)
    busy = None if share is None else share > BUSY_CPU_SHARE
    by = disturbance_text(crossed)
    one = n == 1
    hint = hint_after(by, rerun_hint(busy))   # "not busy" once: the cause says it where it does
    hint = hint if one else hint.replace("rerun it", "rerun them", 1)
    # one thing per sentence: the rule, the figure, the cause and the rerun (one sentence of 95-105 words, issue 39)
    return (f"{' and '.join(cells)} read{'s' if one else ''} disturbed, since {'' if one else 'in each '}{CELL_RULE}. "
            f"The figure draws {'it' if one else 'each'} as an x at each quartile, dotted between, with no band and "
            f"no point at its median (no value to read); no comparison reads a ratio from {'it' if one else 'them'}. "
            + (f"{'Its row' if one else 'Their rows'} recorded {by}. " if by else "") + f"{hint[:1].upper()}{hint[1:]}")


def noisy_count_text(rows: pd.DataFrame, noisy: pd.Series) -> str:
    """"10 of 10 cells are marked noisy (the figure's 7 hollow points and its 3 disturbed cells, x's at their
    quartiles)": the noisy count said as the figure's legend counts it, its crossed cells apart from its hollow
    points (01's text read "10 of 10" beside a legend of "hollow (7)" and "x (3)"). ``noisy``: the rows' noisy
    flags, aligned."""
    ok = rows[rows["status"] == "ok"] if "status" in rows else rows
    flags = noisy.reindex(ok.index).fillna(False).astype(bool)
    crossed = pd.Series([quartiles_wide(r) for r in ok.to_dict("records")], index=ok.index, dtype=bool)
    both, n = int((flags & crossed).sum()), int(flags.sum())
    split = (f" (the figure's {n - both} hollow point{'s' if n - both != 1 else ''} and its {both} "
             f"{'disturbed cell, x' if both == 1 else 'disturbed cells, x'}'s at {'its' if both == 1 else 'their'} "
             "quartiles)" if both else "")
    return f"{n} of {len(ok)} cells are marked noisy{split}"
