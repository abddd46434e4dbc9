"""Between two runs, a variant judged against its baseline in each run: the researcher's loop (change one
variant, run again) asks whether *that* variant moved, and its baseline, timed beside it in every round of both
runs, carries the host's drift with it.

Each run gives the variant's round-by-round log ratio to its baseline (the rounds both were timed in); the change
is the difference of the two runs' medians of it, each run's error the standard error of that median, and the
run-to-run part what those errors do not explain across the anchored cells
(:func:`~workbench.judge.between_runs.between_run_noise`). Measured: a numpy variant doing 10% more work in a
rerun read 0.067-0.102 above its baseline per round against -0.011-0.020 in the first run, rounds 1-2% apart,
while its own times moved with the host's 8-12% between the runs and one pair's absolute verdicts saw 1 of 5.

The anchored verdict replaces the absolute one where it can stand and sees more: the baseline is a library call
of the same versions, machine and threads in both runs, and not itself called faster or slower (a changed
baseline would move every ratio against it: :func:`_library_conditions`), and the anchored noise is below the
absolute one (chosen by noise alone, never by the effect either shows: on the quick suite's cross-runtime pairs
the ratio to a baseline is often the noisier of the two). The row says so (``basis``: :data:`BASIS`, ``anchor``:
the baseline's ``variant@backend``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.judge import verdicts as vd
from workbench.judge.between_runs import between_run_noise
from workbench.judge.pair_rows import _paired_rounds, _same_row, baseline_pairs

if TYPE_CHECKING:
    import pandas as pd

#: The basis of a between-runs verdict judged against the cell's baseline in each run.
BASIS = "against its baseline, both runs"
#: The same, several runs a side (:mod:`workbench.judge.replicates`).
BASIS_RUNS = "against its baseline, every run"


def run_ratios(run: pd.DataFrame, key: list[str]) -> dict[tuple, tuple[np.ndarray, tuple, str]]:
    """Per non-baseline cell of one run paired round by round with its baseline (the kernel's library variant on
    its backend, :func:`~workbench.judge.compare.baseline_pairs`): its per-round log(time / baseline time), the
    baseline's cell and its name (``variant@backend``)."""
    pairs, _ = baseline_pairs(run)
    out = {}
    for row, base in pairs:
        if base is None or _same_row(row, base):
            continue
        t_base, t_row, paired = _paired_rounds(base, row)
        if not paired or len(t_row) < vd.MIN_ROUNDS:
            continue
        d = np.log(vd.clean(t_row)) - np.log(vd.clean(t_base))
        if len(d) == len(t_row):
            out[tuple(row.get(k) for k in key)] = (d, tuple(base.get(k) for k in key),
                                                   f"{base.get('variant')}@{base.get('backend')}")
    return out


def anchor(table: pd.DataFrame, a: pd.DataFrame, b: pd.DataFrame, key: list[str], **kw: Any) -> int:
    """Re-judge ``table``'s cells (a between-runs table of runs ``a`` and ``b``, by :func:`compare_runs`) against
    their baselines where that can stand (see the module); returns how many were. Adds column ``anchor``."""
    ra, rb = run_ratios(a, key), run_ratios(b, key)
    cells = [c for c in ra if c in rb and ra[c][1] == rb[c][1]]
    table["anchor"] = None
    if not cells:
        return 0
    effects = {c: vd.median(ra[c][0]) - vd.median(rb[c][0]) for c in cells}
    errors = {c: math.hypot(vd.median_error(ra[c][0]), vd.median_error(rb[c][0])) for c in cells}
    tau = anchored_noise(cells, effects, errors, [key.index("variant"), key.index("backend")])
    index = {tuple(r): i for i, r in zip(table.index, table[key].itertuples(index=False, name=None), strict=True)}
    same_a, same_b = _library_conditions(a, key), _library_conditions(b, key)
    done = 0
    for c in cells:
        i, j = index.get(c), index.get(ra[c][1])
        if i is None or j is None or table.at[j, "verdict"] in ("faster", "slower"):
            continue
        if ra[c][1] not in same_a or same_a[ra[c][1]] != same_b.get(ra[c][1]):
            continue  # not a library call, or another machine, versions or threads: it may have changed itself
        noise = math.hypot(errors[c], tau)
        if not noise < float(table.at[i, "noise"]):  # chosen by noise alone, never by the effect it shows
            continue
        half = vd.K_BETWEEN * noise
        per_round = math.hypot(math.hypot(vd.round_sigma(ra[c][0]), vd.round_sigma(rb[c][0])), tau)
        v = vd._verdict(effects[c], effects[c] - half, effects[c] + half, noise, len(ra[c][0]), len(rb[c][0]),
                        BASIS, vd.BETWEEN_COVERAGE, kw.get("min_effect", vd.MIN_EFFECT), tau, per_round)
        for field, value in v.to_dict().items():
            table.at[i, field] = value
        table.at[i, "anchor"] = ra[c][2]
        done += 1
    table.attrs["anchored_noise"] = tau
    return done


def anchored_noise(cells: list[tuple], effects: dict[tuple, float], errors: dict[tuple, float],
                   group_by: list[int]) -> float:
    """The run-to-run noise of the anchored cells beyond their rounds' errors.

    A user changes a variant, and every cell of it moves: half the anchored cells of a sweep with two variants
    beside the baseline. Measured around all cells' median shift, that change widened every cell's noise (a
    variant 10% slower in every cell read 4.8% noise and none of its cells was called). So the noise is measured
    in each variant's own cells (on one backend, around their own shift,
    :func:`~workbench.judge.between_runs.between_run_noise`) and the median over the variants with at least
    :data:`~workbench.judge.verdicts.MIN_CELLS` cells is taken; with fewer than two such variants, around the
    shift of all cells (where one variant changed alone, its shift is the median's)."""
    groups: dict[tuple, list[tuple]] = {}
    for c in cells:
        groups.setdefault(tuple(c[i] for i in group_by), []).append(c)
    taus = [between_run_noise([effects[c] for c in g], [errors[c] for c in g]) for g in groups.values()
            if len(g) >= vd.MIN_CELLS]
    if len(taus) >= 2:
        return float(np.median(taus))
    return between_run_noise([effects[c] for c in cells], [errors[c] for c in cells])



def _library_conditions(run: pd.DataFrame, key: list[str]) -> dict[tuple, tuple[Any, Any]]:
    """Per library cell of one run (rows flagged ``library``): its environment (machine and versions) and thread
    settings. A library call with the same versions on the same machine and threads is the same code in both
    runs, so only the host moves it; any other baseline (a user's variant standing in, an upgrade, other
    threads) may have changed itself, and every ratio against it with it."""
    out = {}
    for r in run.to_dict("records"):
        if vd.flag(r.get("library")) and r.get("status") == "ok":
            out[tuple(r.get(k) for k in key)] = (r.get("env_id"), r.get("threads"))
    return out
