"""Issue 39, readers of the tutorials run beside a busy core: every figure a verdict sentence or its table prints
carries its coverage, the figures the table uses, and ends that never make an interval narrower than the data."""

from __future__ import annotations

import math
import random
import re

import pandas as pd

from workbench.judge import verdicts as vd
from workbench.report import claims
from workbench.report.claims import check_claim, verdict_sentence
from workbench.report.claims_cause import past_one_text
from workbench.report.pair_words import fmt_floor
from workbench.report.ratio_text import interval_text, inverse_text


def verdict(name, speedup, ci_low, ci_high, floor, **kw):
    return {"verdict": name, "speedup": speedup, "ci_low": ci_low, "ci_high": ci_high, "floor": floor, **kw}


# 1. an interval in a sentence says its coverage, as docs/statistics.md labels it ("97.5% interval")
def test_every_printed_interval_names_its_coverage():
    cases = [verdict("faster", 1.32, 1.23, 1.40, 0.07), verdict("slower", 1 / 2.2, 1 / 2.3, 1 / 2.1, 0.05),
             verdict("same", 1.02, 0.98, 1.04, 0.04), verdict("same", 0.98, 0.972, 0.988, 0.028),
             verdict("inconclusive", 1.40, 0.95, 2.1, 0.45)]
    for v in cases:
        sentence = verdict_sentence(v, "numba-naive", "numba-tiled")
        check_claim(v, sentence)
        for m in re.finditer(r"interval \(?\d", sentence):
            assert sentence[:m.start()].endswith("97.5% "), sentence
    v = {**verdict("faster", 1.32, 1.23, 1.40, 0.07), "coverage": 0.99}
    assert "(99% interval 1.23×-1.40×)" in verdict_sentence(v, "a", "b")


# 2. precision: two significant figures at least, ends rounded outward
def test_a_ratio_keeps_two_figures_and_its_interval_the_data():
    # 04: "took 9× its time (interval 8×-11×)" beside a table giving 9.4×
    assert inverse_text(1 / 9.4, 1 / 10.96, 1 / 8.03) == "9.4×"
    assert interval_text(8.03, 10.96) == "8.0×-11.0×"
    # 01: "took 4× its time (interval 3×-6×)" beside 0.24 (0.17-0.33)
    assert inverse_text(0.24, 0.17, 0.33) == "4.2×" and interval_text(1 / 0.33, 1 / 0.17) == "3.0×-5.9×"


def test_no_interval_is_printed_narrower_than_the_data():
    rng = random.Random(39)
    for _ in range(2000):
        lo = math.exp(rng.uniform(-4, 5))
        hi = lo * math.exp(rng.uniform(0.001, 0.8))
        ends = re.fullmatch(r"([\d.]+)×-([\d.]+)×", interval_text(lo, hi).replace(",", ""))
        assert ends, (lo, hi)
        assert float(ends.group(1)) <= lo + 1e-12 and float(ends.group(2)) >= hi - 1e-12, (lo, hi, ends.group(0))
    # 01 torch: "0.8×-1.1×" for 0.83-1.14, whose inverse reaches 1.2
    assert interval_text(0.83, 1.14) == "0.83×-1.14×" and interval_text(1 / 1.14, 1 / 0.83) == "0.87×-1.21×"


def test_a_range_of_rounds_past_ten_keeps_three_figures():
    # 07: "(1.51-217.76×)", two decimals on a range over 144×
    assert past_one_text(1.51, 217.76) == "1.51-218×"
    assert past_one_text(1.004, 1.72) == "1.004-1.720×"   # below 10×: one precision for both ends


# 3. an unsettled estimate of 1.04 is not "no difference (1.0×)"
def test_an_unsettled_estimate_prints_enough_figures_to_show_it():
    # 05: "portable-fused measured no difference at this precision (1.0×)" with medians 274 / 263 µs
    v = verdict("inconclusive", 1.04, 0.8, 1.3, 0.25)
    sentence = verdict_sentence(v, "portable-unfused", "portable-fused")
    assert "no difference" not in sentence and "1.04× faster" in sentence, sentence
    check_claim(v, sentence)


# 4. a floor at the least a floor is set to says so
def test_a_floor_at_its_minimum_says_it_is_the_minimum():
    # 07: a column of "±5.0%" beside intervals of ±3.5%, as if measured
    assert fmt_floor(vd.MIN_EFFECT) == "±5.0% (the minimum)"
    assert fmt_floor(0.065) == "±6.5%"
    table = pd.DataFrame([{"variant": "b", **verdict("faster", 1.32, 1.23, 1.40, vd.MIN_EFFECT)}])
    assert claims.verdict_table(table, ["variant"])["floor"].iloc[0] == "±5.0% (the minimum)"


# 5. one word for a comparison that is too wide for a reason that is no disturbance
def test_a_too_wide_comparison_is_not_called_disturbed_in_its_medians_clause():
    # 07, two machines: "a disturbed comparison reads no ratio from them" beside "too wide to read"
    v = verdict("inconclusive", 1.2, 0.3, 5.0, 3.0, table_median_a=2.18e-3, table_median_b=1.35e-3,
                cells_disturbed=0)
    sentence = verdict_sentence(v, "the other host", "this machine",
                                wide_because="the machines favour each kernel differently")
    assert "disturbed" not in sentence and "too wide to read reads no ratio" in sentence, sentence
    assert "a disturbed comparison reads no ratio" in verdict_sentence(v, "the other host", "this machine")


# 6. a table says which rule each row was judged by
def test_a_table_of_pairs_judged_unpaired_does_not_say_paired():
    # 03: "speed-up (paired)" above pairs judged on few rounds at speed, unpaired (judge/few_rounds.py)
    few = "1 shared round at speed (1 set aside by the slow host), too few to pair"
    table = pd.DataFrame([{"variant": "numba", **verdict("faster", 1.32, 1.23, 1.40, 0.07), "basis": few},
                          {"variant": "torch", **verdict("faster", 1.5, 1.4, 1.6, 0.07), "basis": "paired rounds"}])
    shown = claims.verdict_table(table, ["variant"])
    assert "speed-up (paired)" not in shown.columns and "speed-up" in shown.columns
    assert shown["basis"].tolist() == [few, "paired rounds"]
    paired = claims.verdict_table(table.assign(basis="paired rounds"), ["variant"])
    assert "speed-up (paired)" in paired.columns and "basis" not in paired.columns


# a one-sigma noise past ±50% is said as a factor, as every other sigma is (claims_cause.scatter_text)
def test_a_wide_noise_in_a_summary_is_said_as_a_factor_and_passes_the_check():
    # 07, one core busy: "of the 5 disturbed cells' noise (one sigma, ±41% to ±729% together ..." was refused
    # by its own claim check and the tutorial stopped
    from workbench.report.claims import check_printed_intervals
    from workbench.report.noise_parts import noise_parts_text

    rows = [{"noise": math.log(1.41), "floor": 1.6}, {"noise": math.log(8.29), "floor": 30.0}]
    text = noise_parts_text(rows, 0.01, "measured from the scatter of 5 matched cells")
    assert "±41% to 8.3× either way" in text, text
    check_printed_intervals(text)


def test_a_table_of_intervals_of_several_coverages_labels_each():
    # 03: rows of 97.5% and 99% intervals under one "interval" header, their coverage said nowhere
    table = pd.DataFrame([{"variant": "a", **verdict("faster", 1.32, 1.23, 1.40, 0.07), "coverage": 0.975},
                          {"variant": "b", **verdict("faster", 1.5, 1.4, 1.6, 0.07), "coverage": 0.99}])
    shown = claims.verdict_table(table, ["variant"])
    assert shown["interval"].tolist() == ["1.23×-1.40× (97.5%)", "1.4×-1.6× (99%)"]
    same = claims.verdict_table(table.assign(coverage=0.99), ["variant"])
    assert same["interval (99.0%)"].tolist() == ["1.23×-1.40×", "1.4×-1.6×"]


def test_an_inverted_interval_holds_the_inverse_of_the_tables_ends():
    # 01: "took 5.2× its time (interval 4.6×-5.8×)" beside a table's 0.17×-0.22×, which inverts to 4.5-5.9
    v = {**verdict("slower", 0.193, 0.1725, 0.2185, 0.11), "variant": "portable"}
    cell = claims.verdict_table(pd.DataFrame([v]), ["variant"]).filter(like="interval").iloc[0, 0]
    lo, hi = (float(x) for x in re.findall(r"[\d.]+", cell))
    sentence = verdict_sentence(v, "numpy", "portable")
    a, b = (float(x) for x in re.search(r"interval ([\d.]+)×-([\d.]+)×", sentence).groups())
    assert a <= 1 / hi and b >= 1 / lo, (cell, sentence)
    check_claim(v, sentence)
    # and at the estimate's precision, one per sentence (01: "took 1.31× its time (97.5% interval 1.2×-1.5×)")
    for pair in (verdict("slower", 1 / 1.31, 1 / 1.42, 1 / 1.23, 0.1), verdict("faster", 1.31, 1.23, 1.42, 0.1), v):
        sentence = verdict_sentence(pair, "numpy", "numba")
        assert len({len(d) for _, d in re.findall(r"(\d+(?:\.(\d+))?)×", sentence)}) == 1, sentence

