"""Issue 39, re-readers of 04, 07 and 10: each sentence class they found wrong, checked at its edge.

04: an interval exactly ±50% wide ("4×-9×") printed as a finding, and "numpy's own GEMM reads near it" beside
numpy at 0.25% of the ceiling; 07: each cell advised "compare several runs a side" beside a summary that found
about 60 runs a side no practical number; 10: "beyond the noise" on a cell called disturbed further on, and
"faster in every round (1.00-1.72x)"."""

import pandas as pd
import pytest

from workbench.judge import verdicts as vd
from workbench.report.beyond_noise import NOT_SETTLED, UNDECIDED, beyond_noise, direction_said
from workbench.report.ceiling_share import NEAR_SHARE, library_ceiling_text, share_word
from workbench.report.claims import ClaimMismatch, check_claim, check_printed_intervals, verdict_sentence
from workbench.report.claims_cause import one_way_text
from workbench.report.claims_rows import quartiles_wide
from workbench.report.ratio_text import RatioPrecision
from workbench.report.runs_needed import PRACTICAL_RUNS, runs_a_side, runs_needed_text, runs_rerun_hint


def verdict(name, speedup, ci_low, ci_high, floor, **more):
    return {"verdict": name, "speedup": speedup, "ci_low": ci_low, "ci_high": ci_high, "floor": floor, **more}


# 4×-9× around 6×: exactly ±50% each way on the log scale, the floor decide() gives it
EDGE_FASTER = verdict("faster", 6.0, 4.0, 9.0, 0.5)


def test_the_disturbed_edge_is_inclusive():
    assert vd.is_disturbed(0.5) and vd.is_disturbed(0.4999) and not vd.is_disturbed(0.494)  # 0.4999 prints "50%"
    assert vd.spread_disturbed(0.5, 1.0) and not vd.spread_disturbed(0.4999, 1.0)
    assert vd.span_disturbed(1.0, 1.5) and not vd.span_disturbed(1.0, 1.4999)
    assert vd.verdict_label("faster", 0.5, "paired rounds") == "faster, disturbed"
    assert quartiles_wide({"median_s": 1.0, "iqr_s": 0.5})


def test_an_interval_on_the_edge_reads_disturbed_and_prints_no_interval():
    sentence = verdict_sentence(EDGE_FASTER, "numpy", "numba")
    assert "was disturbed" in sentence and "interval" not in sentence and "9" not in sentence, sentence
    check_claim(EDGE_FASTER, sentence)


@pytest.mark.parametrize("text", ["numba ran 6× faster than numpy (interval 4×-9×)",
                                  "(paired, interval 1.89-4.26×; the medians 2.8×)", "within ±50% noise"])
def test_a_printed_interval_at_the_edge_is_refused(text):
    with pytest.raises(ClaimMismatch):
        check_printed_intervals(text)


def test_a_narrower_interval_never_prints_at_the_edge():
    # 4.4-8.6 is ±40%; at no decimals it printed "4×-9×", which a reader divides to ±50%
    shown = RatioPrecision.of(4.4, 8.6).interval(4.4, 8.6)
    assert shown != "4×-9×"
    check_printed_intervals(f"interval {shown}")


def test_near_a_ceiling_follows_from_the_share():
    assert share_word(0.0025) == "below it" and share_word(NEAR_SHARE) == "near it" and share_word(1.2) == "above it"
    rows = pd.DataFrame([{"variant": "numpy", "backend": "numpy", "library": True, "size_label": "n=32",
                          "pct_peak_flops": 0.25, "ceiling_gflops": 105.0},
                         {"variant": "numba-naive", "backend": "numba", "library": False, "size_label": "n=32",
                          "pct_peak_flops": 2.3, "ceiling_gflops": 105.0}])
    (line,) = library_ceiling_text(rows)
    assert "0.25% of 105 GFLOP/s at n=32: below it" in line and "near it" not in line.split("(")[0]


@pytest.mark.parametrize("sigma", [0.03, 0.13])
def test_each_cell_advises_the_runs_the_summary_computes(sigma):
    n, hint, summary = runs_a_side(sigma), runs_rerun_hint(sigma), runs_needed_text(sigma)
    assert f"about {n:,} runs a side" in hint and f"about {n:,} runs a side" in summary
    assert "several runs a side" not in hint and "A1,A2,A3 B1,B2,B3" not in hint
    if n > PRACTICAL_RUNS:   # the summary calls it impractical: the cell does not advise it
        assert "no practical number" in summary and "no practical number" in hint and "compare about" not in hint
    v = verdict("inconclusive", 1.02, 0.99, 1.06, 0.04)   # narrower than the band: runs advice stays runs advice
    assert hint in verdict_sentence(v, "run A", "run B", rerun=hint)


def test_every_round_faster_prints_its_low_end_above_one():
    v = verdict("inconclusive", 1.3, 0.9, 1.9, 0.45, round_ratios=[1.004, 1.3, 1.72])
    said = one_way_text(v, "eager", "fused")
    assert "1.004-1.720×" in said and "1.00-" not in said
    assert one_way_text(verdict("inconclusive", 1.3, 0.9, 1.9, 0.45, round_ratios=[1.00001, 1.3]), "a", "b") == ""


def test_a_disturbed_pair_or_cell_is_never_beyond_the_noise():
    settled = verdict("slower", 0.4, 0.35, 0.45, 0.1)
    calm = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 2.5, "iqr_s": 0.2}]
    wide = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 2.5, "iqr_s": 1.3}]
    assert beyond_noise(settled, calm) and direction_said(settled, calm) == "slower"
    assert not beyond_noise(settled, wide) and direction_said(settled, wide) == "slower, disturbed"
    assert not beyond_noise(EDGE_FASTER, calm) and direction_said(EDGE_FASTER, calm) == "faster, disturbed"


def test_not_settled_means_only_that_the_paired_figure_and_the_medians_part():
    """10 summed three disturbed comparisons up as "not settled" beside a note defining it as the paired figure and
    the medians' ratio disagreeing: a summary keeps "disturbed" and keeps "not settled" for that one meaning."""
    calm = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 1.1, "iqr_s": 0.1}]
    wide = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 1.1, "iqr_s": 0.9}]
    undecided = verdict("inconclusive", 1.02, 0.9, 1.15, 0.1)
    assert direction_said(undecided, calm) == UNDECIDED
    assert direction_said(undecided, wide) == f"{UNDECIDED}, disturbed"
    assert direction_said(verdict("inconclusive", 1.2, 0.3, 4.0, 1.5), calm) == f"{UNDECIDED}, disturbed"
    apart = {**verdict("faster", 1.3, 1.2, 1.4, 0.05), "median_a": 3.0, "median_b": 1.0}   # medians: 3x
    assert direction_said(apart, calm) == NOT_SETTLED
    assert NOT_SETTLED not in (direction_said(undecided, wide), direction_said(undecided, calm))


@pytest.mark.parametrize("rule", ["intervals of ±50% or wider are not printed", "its interval is wider than ±50%",
                                  "its quartiles span ±50% of its median or more", "alone it passes ±50%"])
def test_the_rule_itself_is_no_printed_interval(rule):
    check_printed_intervals(rule)


def test_a_floor_that_prints_as_the_disturbed_edge_is_disturbed():
    """07 printed "within ±50% noise" (and its own check refused it) for a floor of 49.7%: pct rounds it to 50%."""
    from workbench.judge.verdicts import is_disturbed, pct, verdict_label
    assert pct(0.497) == "50%" and is_disturbed(0.497)
    assert verdict_label("inconclusive", 0.497, "paired rounds") == "disturbed"
    assert pct(0.494) == "49%" and not is_disturbed(0.494)
