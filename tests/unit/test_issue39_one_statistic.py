"""Issue 39, readers of the executed tutorials (01, 03, 04, 06, 07, 08): each sentence class that printed a claim the
numbers beside it did not give, checked as a rule: a bound said from an interval the table prints, a cause the
control contradicts, two explanations of one interval, a share not of the printed median, "under" a roof a point is
on, a pair's noise called its rounds' own variation, a disturbed comparison beside cells that are not."""

import math
import re

import pandas as pd
import pytest

from workbench.judge.disturbed import CELL_RULE, DISTURBED_FLOOR, spread_disturbed
from workbench.report import summary
from workbench.report.ceiling_share import library_ceiling_text, under_roofs_text
from workbench.report.claims import CALM_CELLS, check_claim, mark_busy, shown_verdicts, verdict_sentence
from workbench.report.claims_cause import noise_cause, one_way_text
from workbench.report.ratio_text import interval_text, inverted_bounds
from workbench.report.runs_cause import MACHINE_CAUSE, rest_cause


def verdict(name, speedup, ci_low, ci_high, floor, **more):
    return {"verdict": name, "speedup": speedup, "ci_low": ci_low, "ci_high": ci_high, "floor": floor, **more}


def _ends(text):
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)]


@pytest.mark.parametrize("lo,hi", [(0.93, 1.2), (0.86, 1.04), (0.951, 1.049), (0.5501, 0.9), (1.02, 1.31),
                                   (0.66, 1.43), (0.9049, 1.0951)])
def test_a_bound_from_a_printed_interval_follows_from_its_printed_ends(lo, hi):
    # 07: table "0.9×" (0.93), sentence "rules out run B taking more than 1.1× run A's time": 1/0.9 is 1.11
    p_lo, p_hi = _ends(interval_text(lo, hi))
    least, most = (_ends(x)[0] for x in inverted_bounds(lo, hi))
    assert most >= 1 / lo - 1e-12 and most >= 1 / p_lo - 1e-12, (interval_text(lo, hi), most)
    assert least <= 1 / hi + 1e-12 and least <= 1 / p_hi + 1e-12, (interval_text(lo, hi), least)


CONTROL_SLOWER = verdict("slower", 0.7, 0.65, 0.75, 0.06)
CONTROL_FASTER = verdict("faster", 1.2, 1.12, 1.29, 0.07)
CONTROL_OPEN = verdict("inconclusive", 1.0, 0.9, 1.1, 0.1)


def test_the_machine_between_runs_is_named_only_where_the_control_agrees():
    # 07: "the machine between the runs made part of that difference" beside numpy 1.2x faster in run B
    assert MACHINE_CAUSE in rest_cause(CONTROL_SLOWER, "numpy")
    against = rest_cause(CONTROL_FASTER, "numpy")
    assert MACHINE_CAUSE not in against and "the other way" in against and "1.2" in against
    assert MACHINE_CAUSE not in rest_cause(CONTROL_OPEN, "numpy")
    assert MACHINE_CAUSE not in rest_cause(None, "numpy")
    crossed = rest_cause(CONTROL_SLOWER, "numpy", ["run A's numba cell"])   # the figure's cross
    assert MACHINE_CAUSE not in crossed and "run A's numba cell reads disturbed" in crossed


def test_two_runs_whose_rounds_do_not_overlap_name_the_part_that_makes_the_noise():
    # 07: "the scatter between runs ... is wide enough" beside "its own rounds make most of its noise" (±1.6% / ±10%)
    v = verdict("inconclusive", 0.85, 0.7, 1.03, 0.2, basis="rounds", noise=0.1, run_noise=0.016,
                rounds_apart=(0.8, 0.95))
    said = one_way_text(v, "run A", "run B")
    assert "its own rounds (±10" in said and "more than the runs' scatter (±1.6%)" in said
    assert "wide enough" not in said
    runs = one_way_text({**v, "noise": 0.1, "run_noise": 0.09}, "run A", "run B")
    assert runs.index("the runs' scatter") < runs.index("its own rounds")


def test_a_paired_noise_is_not_called_the_rounds_own_variation():
    # 06: "its paired ratio varied by ±27% round to round" beside rounds whose ratios ran 0.9-58x
    v = verdict("inconclusive", 1.3, 0.3, 5.0, 3.0, basis="paired rounds", noise=0.24, n_a=3,
                round_ratios=[0.9, 58.0, 1.3])
    said = noise_cause(v)
    assert "varied by" not in said and "0.9× to 58×" in said
    calm = noise_cause({**v, "round_ratios": [1.1, 1.2, 1.3]})
    assert "to 1.3×" not in calm   # rounds within the noise: no second figure


def test_a_wide_interval_between_machines_names_no_size():
    table = pd.DataFrame([verdict("faster", 3.0, 1.1, 9.0, 1.9)])
    label = shown_verdicts(table, wide=True)["verdict"].iloc[0]
    assert label.startswith("faster") and "too wide to read" in label and "size" not in label


def _gemm_row(**more):
    return {"variant": "numpy", "backend": "numpy", "library": True, "size_label": "n=256", "flops": 33.55e6,
            "median_s": 299e-6, "iqr_s": 10e-6, "ceiling_gflops": 115.0, "pct_peak_flops": 100.0, **more}


def test_a_share_of_a_ceiling_is_the_printed_medians():
    # 04: "100.0% of 115 GFLOP/s ... near it" beside 33.55 MFLOP in 299 µs (97.6%)
    (line,) = library_ceiling_text(pd.DataFrame([_gemm_row()]))
    assert "97.6% of 115 GFLOP/s at n=256 (33.55 MFLOP in 299 µs, the median)" in line and "100.0%" not in line
    (wide,) = library_ceiling_text(pd.DataFrame([_gemm_row(iqr_s=200e-6), _gemm_row(size_label="n=128")]))
    assert "disturbed at n=256" in wide and "no share is read" in wide
    assert "near it" not in wide.split("n=256")[1].split(";")[0]


def test_a_point_on_its_roof_is_not_said_under_it():
    assert under_roofs_text([40.0, 99.9], 2) == "Every one of the 2 plotted points sits under its roof"
    on = under_roofs_text([40.0, 99.97, 100.0], 3)
    assert "at or under its roof" in on and "2 of them on it" in on


def test_the_disturbed_cell_rule_is_said_in_the_figure_printed_after_the_plus_minus():
    # 01/03/08: "± 30 µs" is the whole IQR, and the rule read "quartiles span ±50% of its median"
    assert "±" not in CELL_RULE and f"{DISTURBED_FLOOR:.0%} of the median" in CELL_RULE
    assert "half its median" in CELL_RULE and spread_disturbed(0.5, 1.0) and not spread_disturbed(0.49, 1.0)
    assert CELL_RULE in summary._disturbed_note(pd.Series({"other_cpu_share": 0.01}))


def _pair_rows(iqr_b):
    return pd.DataFrame({"variant": ["a", "b"], "backend": ["numpy"] * 2, "size_label": ["n"] * 2,
                         "median_s": [1.0, 1.2], "iqr_s": [0.05, iqr_b], "other_cpu_share": [0.5, 0.5],
                         "load_avg_1m": [3.0, 3.0]})


@pytest.mark.parametrize("iqr_b,calm", [(0.05, True), (0.9, False)])
def test_a_disturbed_comparison_of_calm_cells_says_which_is_disturbed(iqr_b, calm):
    v = {**verdict("inconclusive", 0.8, 0.2, 3.0, 2.5), "variant": "b", "backend": "numpy", "size_label": "n",
         "baseline_variant": "a", "baseline_backend": "numpy"}
    row = mark_busy(pd.DataFrame([v]), _pair_rows(iqr_b)).iloc[0].to_dict()
    sentence = verdict_sentence(row, "a", "b")
    check_claim(row, sentence)
    assert (CALM_CELLS in sentence) == calm, sentence
    assert math.isfinite(row["cells_disturbed"])


def test_a_disturbed_small_part_widens_a_totals_band_and_does_not_void_it():
    # 10: "no decode-step total at L=4,096 ... informs nothing" over an attention 1% of the step
    from workbench.report.total_band import band_readable, total_band

    mlp = {"median_s": 1e-3, "q1_s": 0.95e-3, "q3_s": 1.05e-3}
    attention = {"median_s": 1e-5, "q1_s": 0.4e-5, "q3_s": 2.0e-5}   # disturbed on its own
    band = total_band([attention, mlp], 24)
    assert band is not None and band_readable(band) and band[1] < band[0] < band[2]
    assert not band_readable(total_band([{**attention, "median_s": 1e-3, "q1_s": 0.3e-3, "q3_s": 3e-3}, mlp], 24))
    assert total_band([{"median_s": 1.0}], 2) is None


def test_beyond_the_noise_on_noisy_cells_says_why_both_hold():
    from workbench.report.beyond_noise import NOISY_ASIDE, beyond_text

    assert beyond_text(False) == "beyond the noise" and NOISY_ASIDE in beyond_text(True)
    # said as what the interval does, not as a double negative ("still excludes no change with")
    assert "excludes no change" not in NOISY_ASIDE and "wholly on one side of no change" in NOISY_ASIDE


@pytest.mark.parametrize("x,lo,hi", [(0.8814, 0.85, 0.92), (0.181, 0.162, 0.202), (0.5, 0.3, 0.8),
                                     (0.9431, 0.93, 0.957), (0.0199, 0.0184, 0.0215)])
def test_a_table_ratio_below_one_has_the_sentences_precision(x, lo, hi):
    # 05: "0.8814×" at four digits beside "took 1.13× its time"
    from workbench.report.ratio_text import inverse_text, table_ratio

    said, cell = inverse_text(x, lo, hi), table_ratio(x, lo, hi)
    if cell.startswith("1/"):
        assert cell == f"1/{said}"
        return
    digits = cell.rstrip("×").split(".")[1].lstrip("0")
    assert len(digits) <= 3 and inverse_text(float(cell.rstrip("×")), lo, hi) == said, (cell, said)
    assert table_ratio(0.8814, 0.85, 0.92) == "1/1.13×"


@pytest.mark.parametrize("x", [0.999, 0.9996])
def test_a_ratio_that_inverts_to_no_change_prints_as_its_sentence_does(x):
    # 07: the table printed "0.999×" and "1/1.00×" beside sentences reading "1.00× measured"
    from workbench.report.ratio_text import estimate_text, table_ratio

    assert table_ratio(x, 0.96, 1.04) == estimate_text(x, 0.96, 1.04) == "1.00×"


def test_a_same_interval_prints_inside_the_band_it_is_said_to_lie_in():
    # 07: "ran the same within ±5.0%: the whole 99% interval (0.95×-1.02×" — 0.95 is below 1/1.05 = 0.952
    import re

    from workbench.report.claims import verdict_sentence

    v = {"verdict": "same", "speedup": 0.98, "ci_low": 0.9530, "ci_high": 1.0199, "floor": 0.05, "noise": 0.01,
         "n_a": 3, "n_b": 3, "basis": "rounds"}
    lo, hi = (float(x) for x in re.search(r"interval \(([\d.]+)×-([\d.]+)×", verdict_sentence(v, "a", "b")).groups())
    assert 1 / 1.05 <= lo and hi <= 1.05
