"""Verdicts from a sweep's rounds: A/A twins, extra rounds for inconclusive pairs, pairing on round ids.

The plan is driven with made-up round medians (no timing), so what each round measured is known exactly.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pandas as pd
import pytest

from workbench.catalog import load_catalog, unload_catalog
from workbench.judge import compare as sc
from workbench.judge import verdicts as vd
from workbench.sweep.driver import SweepSpec
from workbench.sweep.plan import MAX_EXTRA_ROUNDS, RESERVE_ROUNDS, SweepPlan, with_twins

SPEC_PY = '''
import numpy as np
from workbench.catalog import KernelSpec, kernel_here


SPEC = kernel_here(__file__).register(
    KernelSpec, description="out = x + 1", axes=("n",),
    make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": inp["x"] + 1}, output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"], bytes_moved=lambda p, itemsize: 2 * p["n"] * itemsize,
    sizes={"quick": [{"n": 1000}]})
'''
VARIANTS_PY = '''
import numpy as np
from workbench.catalog import kernel_here

K = kernel_here(__file__)


def build(ctx):
    def run(inp, out):
        np.add(inp["x"], 1, out=out["out"])
    return run


K.variant("ref", "numpy", library=True, description="the reference")(build)
K.variant("slow", "numpy", description="a clear gap")(build)
K.variant("near", "numpy", description="a small gap, noisy")(build)
'''


@pytest.fixture
def probe(tmp_path):
    folder = tmp_path / "catalog" / "aa_probe"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(textwrap.dedent(SPEC_PY))
    (folder / "numpy_variants.py").write_text(textwrap.dedent(VARIANTS_PY))
    load_catalog(tmp_path / "catalog")
    # 9 cells: their reserve pays for one twin (three later-round visits) in half of it
    yield SweepSpec(kernels=["aa_probe"], backends=["numpy"], sizes=[1000, 2000, 3000], rounds=3, budget_s=2.0)
    unload_catalog(tmp_path / "catalog")


class Result:
    """What the plan merges: a result's row, with one round median."""

    def __init__(self, cell, median):
        self.row = {"kernel": cell.kernel, "variant": cell.variant, "backend": cell.backend, "dtype": cell.dtype,
                    "params": json.dumps(cell.params_dict), "size": cell.params_dict["n"], "mode": cell.mode,
                    "cache": cell.cache, "cell_key": cell.key, "status": "ok", "median_s": median,
                    "samples_s": json.dumps([median] * 5), "library": int(cell.variant == "ref")}

    def to_row(self):
        return dict(self.row)


def drive(plan, time_of):
    """Run the plan's rounds with ``time_of(cell, round, visit)`` as each visit's round median; returns the
    cells visited per round."""
    seen = []
    for r, due in plan.rounds_due():
        seen.append((r, [c.variant for c in due]))
        visits: dict[str, int] = {}
        for cell in due:
            plan.request(cell, {})
            visits[cell.key] = visits.get(cell.key, 0) + 1
            plan.keep(cell, plan.merged(cell, Result(cell, time_of(cell, r, visits[cell.key])), "run", "env"))
    return seen


def table(plan):
    df = pd.DataFrame([plan.rows[c.key] for c in plan.cells])
    return df.assign(run_id="run", env_id="env")


def test_the_planned_rounds_hold_back_a_reserve_for_twins_and_extra_rounds(probe):
    plan = SweepPlan(probe)
    assert plan.reserve == RESERVE_ROUNDS
    per_round = plan.request(plan.cells[0], {}).what.budget_s
    assert per_round == pytest.approx(2.0 / (3 + RESERVE_ROUNDS))
    assert plan.pool_s == pytest.approx(len(plan.cells) * (2.0 - 3 * per_round))
    # one stream, or nothing to compare in any group: the whole budget goes to the planned rounds
    assert SweepPlan(SweepSpec(kernels=["aa_probe"], variants=["ref"], backends=["numpy"], sizes=[1000],
                               rounds=3)).reserve == 0
    assert SweepPlan(SweepSpec(kernels=["aa_probe"], backends=["numpy"], sizes=[1000], rounds=1)).reserve == 0


def test_a_twin_is_the_reference_measured_again_and_judged_against_itself(probe):
    plan = SweepPlan(probe)
    twins = plan.twins()
    assert [c.variant for c in plan.cells if c.key in twins] == ["ref"]  # one per kernel: its largest size
    assert [c.params_dict["n"] for c in plan.cells if c.key in twins] == [3000]
    rng = np.random.default_rng(0)
    drifts = rng.normal(0, 0.3, 9)  # the machine drifts from round to round, the same for the whole group

    def time_of(cell, r, visit):
        gap = {"ref": 1.0, "slow": 2.0, "near": 1.0}[cell.variant]
        return 1e-3 * gap * np.exp(drifts[r] + rng.normal(0, 0.01))

    seen = drive(plan, time_of)
    assert seen[0][1].count("ref") == 4 and seen[0][1][-1] == "ref"  # the twin ends its group in round 0
    ref = plan.rows[next(c.key for c in plan.cells if c.key in twins)]
    assert ref["rounds"] >= 3 and len(json.loads(ref[vd.TWIN_MEDIANS])) == 3  # a twin adds no round
    assert len(ref[vd.TWIN_IDS]) == 3 and ref[vd.TWIN_IDS] == ref[vd.ROUND_IDS][:3]
    aa = sc.aa_twins(table(plan))
    assert len(aa) == 1 and aa["verdict"].iloc[0] == "same" and aa["basis"].iloc[0] == "paired rounds"
    assert "0 of 1 called faster or slower, 1 same" in sc.aa_summary(table(plan))


def test_extra_rounds_go_to_the_inconclusive_pairs_only_and_pair_on_their_rounds(probe):
    plan = SweepPlan(probe)
    rng = np.random.default_rng(3)

    def time_of(cell, r, visit):
        if cell.variant == "near":  # 8% slower, but the first rounds disagree: inconclusive after three
            noise = (0.3, -0.3, 0.0)[r] if r < 3 else rng.normal(0, 0.005)
            return 1.08e-3 * np.exp(noise)
        return 1e-3 * (2.0 if cell.variant == "slow" else 1.0) * np.exp(rng.normal(0, 0.005))

    seen = drive(plan, time_of)
    extra = [variants for r, variants in seen if r >= 3]
    assert extra and len(extra) <= MAX_EXTRA_ROUNDS
    assert all(sorted(set(v)) == ["near", "ref"] for v in extra)  # "slow" was settled by the planned rounds
    t = sc.speedup_vs_baseline(table(plan))
    near, slow = t[t["variant"] == "near"], t[t["variant"] == "slow"]
    assert set(near["basis"]) == {"paired rounds"} and set(slow["basis"]) == {"paired rounds"}
    assert set(slow["verdict"]) == {"slower"} and (slow["n_a"] == 3).all()  # paired on the 3 rounds they share
    assert (near["n_a"] > 3).all() and "inconclusive" not in set(near["verdict"])


def test_a_cell_whose_median_rests_on_disturbed_rounds_is_measured_again(probe):
    """Issue 36: a decided cell whose host ran it 1.4x slow in two of three rounds (47, 65, 66 us) is measured
    again in extra rounds, with its baseline, until its median is its undisturbed time."""
    plan = SweepPlan(probe)
    plan.pool_s = 60.0

    def time_of(cell, r, visit):
        if cell.variant == "slow" and cell.params_dict["n"] == 2000 and r in (1, 2):
            return 2.8e-3  # the host's slow phase, twice
        return 1e-3 * (2.0 if cell.variant == "slow" else 1.0)

    seen = drive(plan, time_of)
    extra = [variants for r, variants in seen if r >= 3]
    assert extra and all(sorted(v) == ["ref", "slow"] for v in extra)  # that cell and its baseline only
    disturbed = next(c for c in plan.cells if c.variant == "slow" and c.params_dict["n"] == 2000)
    row = plan.rows[disturbed.key]
    assert row["rounds"] >= 5 and row["median_s"] == pytest.approx(2e-3)
    assert not plan.disturbed()  # settled: nothing left to re-measure


def test_no_extra_round_without_a_reserve_to_pay_for_it(probe):
    plan = SweepPlan(probe)
    plan.pool_s = 0.0
    assert plan.twins() == set()

    def time_of(cell, r, visit):
        return 1e-3 * np.exp((0.3, -0.3, 0.0)[r % 3] if cell.variant == "near" else 0.0)

    assert [r for r, _ in drive(plan, time_of)] == [0, 1, 2]


def test_with_twins_places_the_second_visit_apart_from_the_first(probe):
    plan = SweepPlan(probe)
    cells = [c for c in plan.cells if c.params_dict["n"] == 1000]
    assert with_twins(cells, set(), 0, 1) == cells
    ref = next(c for c in cells if c.variant == "ref")
    for r in range(1, 6):
        out = with_twins(cells, {ref.key}, 0, r)
        at = [i for i, c in enumerate(out) if c == ref]
        assert len(at) == 2 and at[1] - at[0] > 1


def test_rows_pair_on_the_rounds_they_share():
    a, b = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([10.0, 30.0, 50.0])
    got = vd.aligned(a, ["s:0", "s:1", "s:2", "s:3", "s:4"], b, ["s:0", "s:2", "s:4"])
    assert got is not None and got[0].tolist() == [1.0, 3.0, 5.0] and got[1].tolist() == [10.0, 30.0, 50.0]
    assert vd.aligned(a, None, b, ["s:0", "s:2", "s:4"]) is None  # unlabelled: paired by counts, as before
    assert vd.aligned(a, list("abcde"), b, ["a", "b", "x"]) is None  # fewer than MIN_ROUNDS shared
    assert vd.round_ids('["s:0", "s:1"]') == ["s:0", "s:1"] and vd.round_ids(float("nan")) is None


def test_later_rounds_put_each_groups_reference_in_its_middle(probe):
    plan = SweepPlan(probe)
    plan.pool_s = 0.0  # no twins, no extra rounds: the planned rounds' order alone
    seen = drive(plan, lambda cell, r, visit: 1e-3)
    assert [v for v in seen[0][1]] == [c.variant for c in plan.cells]  # round 1: the spec's order
    for _, variants in seen[1:]:
        assert [variants[i:i + 3][1] for i in range(0, 9, 3)] == ["ref"] * 3


def test_centred_spreads_several_references_through_their_group():
    from workbench.measure.rounds import centred

    assert centred(list("abcdR"), lambda x: x == "R") == list("abRcd")
    assert centred(list("abcdXY"), lambda x: x in "XY") == list("aXbcYd")
    assert centred(list("ab"), lambda x: False) == list("ab")


def test_the_tabulated_quantiles_are_scipys():
    from scipy.stats import chi2, t

    for df, q in vd.T_QUANTILES.items():
        assert q == pytest.approx(t.ppf(0.5 + vd.CONFIDENCE / 2, df), rel=1e-6)
    for df, m in vd.CHI2_MEDIAN_RATIOS.items():
        assert m == pytest.approx(chi2.median(df) / df, rel=1e-6)


def test_undecided_pairs_are_the_inconclusive_rows_of_the_speedup_table(probe):
    plan = SweepPlan(probe)
    plan.pool_s = 0.0
    rng = np.random.default_rng(5)
    drive(plan, lambda cell, r, visit: 1e-3 * np.exp(rng.normal(0, 0.2 if cell.variant == "near" else 0.002)))
    t = sc.speedup_vs_baseline(table(plan).set_index("cell_key", drop=False))
    expected = sorted(t.loc[t["verdict"] == "inconclusive", "variant"])
    got = sorted(plan.rows[row]["variant"] for row, _ in sc.undecided_pairs(plan.rows.values()))
    assert got == expected and "near" in got
