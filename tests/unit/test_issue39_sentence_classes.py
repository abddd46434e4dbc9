"""Issue 39, tutorials executed with one core busy (16:40-16:49): seven classes of sentence that contradicted the
table or figure beside them, each tested on the generating code (workbench.report), not on one notebook's text."""

import re

import numpy as np
import pandas as pd
import pytest

from workbench.judge import verdicts as vd
from workbench.report import claims
from workbench.report.beyond_noise import settled_count
from workbench.report.claims import check_claim, interval_text, mark_busy, verdict_sentence
from workbench.report.claims_cause import apart_undecided_text, interval_makeup, one_way_text
from workbench.report.runs_needed import runs_needed_text, runs_rerun_hint


def verdict(name, speedup, lo, hi, floor, **kw):
    return {"verdict": name, "speedup": speedup, "ci_low": lo, "ci_high": hi, "floor": floor, **kw}


_INTERVAL = re.compile(r"interval \(?(\d+(?:\.\d+)?)×-(\d+(?:\.\d+)?)×( slower)?")


# 1. an interval printed in the direction of the estimate it accompanies
@pytest.mark.parametrize("v", [
    verdict("inconclusive", 1 / 1.03, 0.94, 0.99, vd.MIN_EFFECT),     # 08: on one side of no change, at the band
    verdict("inconclusive", 1 / 1.03, 0.93, 1.02, vd.MIN_EFFECT),     # at the band, holding no change
    verdict("inconclusive", 1 / 1.3, 0.6, 1.05, 0.3),                 # wider than its floor: "includes no change"
    verdict("same", 1 / 1.03, 0.96, 0.985, 0.045),                    # measurably slower, inside the band
])
def test_a_slower_estimates_interval_is_printed_as_the_time_it_took(v):
    """08 printed "numpy-naive measured 1.03× slower: its interval (0.94×-0.99×) lies on one side of no change": a
    slowdown beside a speed-up's interval. The printed estimate must lie inside the printed interval."""
    for busy in (True, False, None):
        sentence = verdict_sentence(v, "numpy", "numpy-naive", busy=busy)
        check_claim(v, sentence)
        said = re.search(r"(?:measured|took) (\d+(?:\.\d+)?)× (?:slower|the time)", sentence)
        ends = _INTERVAL.search(sentence)
        assert said and ends, sentence
        x, lo, hi = float(said.group(1)), float(ends.group(1)), float(ends.group(2))
        assert x > 1 and lo <= x <= hi, sentence   # both as the time it took: 1.03× within 1.01×-1.06×


def test_the_band_prints_alike_in_either_direction():
    v = verdict("inconclusive", 1 / 1.03, 0.94, 0.99, vd.MIN_EFFECT)
    sentence = verdict_sentence(v, "a", "b")
    assert "reaches past ±5.0% (0.95×-1.05×)" in sentence
    assert "(1.01×-1.07× slower) lies on one side of no change" in sentence   # 1/0.94 = 1.064, outward


# 2. advice that says what a rerun could do, not what it would
def test_no_advice_promises_that_a_rerun_would_settle_it():
    """01/03: "a rerun while the machine is otherwise idle would settle it" of a ~5% effect whose idle floor nothing
    printed showed under 5%."""
    cases = [verdict("inconclusive", 1.1, 0.85, 1.4, 0.25), verdict("inconclusive", 1 / 1.038, 0.947, 0.978, 0.05),
             verdict("inconclusive", 1.3, 0.9, 1.9, 0.45)]
    for v in cases:
        for busy in (True, False, None):
            sentence = verdict_sentence(v, "numpy", "portable", busy=busy)
            assert "would settle" not in sentence and "would say whether" not in sentence, sentence
            assert "could settle" in sentence or "could say whether" in sentence, sentence
    for sigma in (0.02, 0.5):   # a practical and an impractical number of runs
        assert " would" not in runs_rerun_hint(sigma) and " would" not in runs_needed_text(sigma)


# 3. what an interval beside rounds all one way is made of, and its low end's digits
def _moderated(ratios, typical):
    v = vd.effects_verdict(np.log(ratios), typical=typical).to_dict()
    return {**v, "round_ratios": list(ratios)}


def test_rounds_all_one_way_say_what_their_interval_rests_on():
    """01: "faster in every one of its 3 rounds (1.28-1.42×) ... and the interval the rounds' scatter gives spans no
    change", where the interval (±35%) was mostly the run's typical spread, printed "1.0×-1.7×"."""
    v = _moderated([1.28, 1.35, 1.42], typical=0.2)
    assert v["verdict"] == "inconclusive" and v["ci_low"] < 1 < v["ci_high"]
    said = one_way_text(v, "numpy", "portable")
    assert "the rounds' scatter gives" not in said
    got = re.search(r"rests (\d+)% on the typical paired scatter of its group in this run \(±22% a round.* and "
                    r"(\d+)% on these 3 rounds' own scatter", said)
    assert got and int(got.group(1)) > 50 and int(got.group(1)) + int(got.group(2)) == 100   # its weights, said
    own = float(re.search(r"these 3 rounds' own scatter \(±([\d.]+)%\)", said).group(1))
    assert own < 22   # the rounds' own scatter, the smaller part, printed beside the typical one
    shown = re.search(r"its 97.5% interval \((\d\.\d+)×-", said).group(1)
    assert float(shown) < 1   # its low end prints under 1, as it lies
    check_claim(v, verdict_sentence(v, "numpy", "portable"))
    # the pair's own rounds dominating: said the other way round
    quiet = _moderated([1.05, 1.9, 1.3], typical=0.01)
    if quiet["ci_low"] < 1:
        assert re.search(r"rests (5[1-9]|[6-9]\d|100)% on these 3 rounds' own scatter",
                         interval_makeup(quiet, quiet["round_ratios"]))


def test_an_interval_end_near_one_prints_on_its_side_of_one():
    assert interval_text(0.998, 1.652) == "0.99×-1.66×"   # outward: under 1 as printed, as it lies
    assert interval_text(0.96, 1.7) == "0.96×-1.70×"   # "1.0×-1.7×" hid that it holds no change


# 4. a ratio "from the medians" names the medians it divides, and the table's where they differ
def test_a_ratio_from_the_medians_names_what_it_divides():
    """10: "torch-graph 1.09× faster from the medians" beside a table whose medians (2.75 / 2.65 ms) give 1.04×: the
    figure divided the paired rounds' medians."""
    rows = pd.DataFrame({"variant": ["torch-eager", "torch-graph"], "backend": ["torch-cpu"] * 2,
                         "size_label": ["t"] * 2, "median_s": [2.75e-3, 2.65e-3], "other_cpu_share": [0.5, 0.5]})
    table = pd.DataFrame([{**verdict("same", 1.01, 0.99, 1.03, 0.03), "basis": vd.BLOCKS, "median_a": 2.89e-3,
                           "median_b": 2.65e-3, "variant": "torch-graph", "backend": "torch-cpu", "size_label": "t",
                           "baseline_variant": "torch-eager", "baseline_backend": "torch-cpu"}])
    v = mark_busy(table, rows).iloc[0].to_dict()
    assert (v["table_median_a"], v["table_median_b"]) == (2.75e-3, 2.65e-3)
    sentence = verdict_sentence(v, "torch-eager", "torch-graph")
    check_claim(v, sentence)
    assert "1.09× faster from the medians (2.89 ms / 2.65 ms, the medians of the paired rounds; the table's " \
           "medians, over all samples, 2.75 ms / 2.65 ms, give 1.04×)" in sentence
    # medians that are the table's print once
    alone = {**v, "table_median_a": 2.89e-3}
    assert "from the medians (2.89 ms / 2.65 ms)" in verdict_sentence(alone, "torch-eager", "torch-graph")


# 5. advice that follows the busy flag
def test_advice_for_more_rounds_follows_the_busy_flag():
    """10: "more rounds would show where most of them fall" on a run it said shared the machine."""
    busy = vd.rounds_could(True, "show where most of them fall")
    assert "otherwise idle could show" in busy and "more rounds on a busy machine add its disturbance" in busy
    assert not busy.startswith("more rounds")
    assert vd.rounds_could(False, "show where most of them fall") == "more rounds could show where most of them fall"


# 6. a count of settled results excludes the disturbed ones
def test_a_count_of_settled_results_excludes_disturbed_ones():
    """10: "the verdicts settle that it was faster than both others at 2 of 3 lengths", counting a length whose two
    comparisons were printed as disturbed."""
    calm = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 2.0, "iqr_s": 0.2}]
    settled = verdict("slower", 0.6, 0.5, 0.7, 0.17)
    disturbed = verdict("slower", 0.15, 0.02, 0.9, 3.0)            # "at least 1.1× ... disturbed"
    wide_cell = [{"median_s": 1.0, "iqr_s": 0.1}, {"median_s": 2.0, "iqr_s": 1.5}]
    assert claims.reading(disturbed) == "slower"                    # what the old count read
    assert settled_count([(settled, calm), (disturbed, calm)], "slower") == 1
    assert settled_count([(settled, wide_cell)], "slower") == 0
    assert settled_count([(settled, calm)], "faster") == 0


# 7. a "could not tell" beside medians far apart says why
def test_could_not_tell_beside_medians_far_apart_says_why():
    """06: "could not tell float16 from float32" at 143 against 69.7 µs beside "float32 was faster ... at least 1.08×"
    at 799 against 399 µs, with nothing saying why the first was undecidable."""
    v = {**verdict("inconclusive", 1.3, 0.2, 8.0, 5.0), "noise": 0.9, "n_a": 3, "n_b": 3, "basis": "paired rounds",
         "median_a": 69.7e-6, "median_b": 143e-6}
    sentence = verdict_sentence(v, "float32", "float16", busy=True)
    check_claim(v, sentence)
    # disturbed (its floor past ±50%): the medians are said, no ratio of them headlined (07: "lie 183.76× apart"
    # beside "the comparison was disturbed")
    assert "the cells' medians differ (69.7 µs for float32, 143 µs for float16; a disturbed comparison reads no " \
        "ratio from them)" in sentence and "× apart" not in sentence
    calm = apart_undecided_text({**v, "floor": 0.4}, "float32", "float16")
    assert calm.startswith("the cells' medians lie 2.05× apart (69.7 µs for float32, 143 µs for float16)")
    assert "the faster" not in sentence  # it cannot say which was: it names none (01, 04 readers)
    assert "its interval rests on a paired noise of 2.5× either way a round (one sigma, over 3 rounds)" in sentence
    both = {**v, "round_ratios": [0.4, 1.9, 0.5]}
    assert "its paired rounds point both ways (0.40× to 1.90×" in verdict_sentence(both, "float32", "float16")
    # two runs or machines are not paired: their sentence does not call the comparison so (07)
    runs = verdict_sentence({**v, "basis": "rounds", "run_noise": 0.3}, "run A", "run B", busy=True)
    assert "so the comparison cannot say" in runs and "paired comparison" not in runs
    # the table beside it prints each cell's median over all its samples: the sentence quotes those (10: "263 µs"
    # for a cell the table printed 262 µs)
    table = verdict_sentence({**v, "table_median_a": 70.2e-6, "table_median_b": 142e-6}, "float32", "float16")
    assert "(70.2 µs for float32, 142 µs for float16;" in table and "143 µs" not in table
    close = {**v, "median_b": 80e-6}
    assert apart_undecided_text(close, "float32", "float16") == ""
    # the cause already given (an idle machine's disturbed sentence names the paired scatter): not repeated
    idle = verdict_sentence(v, "float32", "float16", busy=False)
    assert idle.count("a paired noise of 2.5× either way") == 1


def test_an_interval_of_two_equal_scatters_says_their_weights_not_mostly():
    """05: "rests mostly on the typical paired scatter of its group (±12% ...), weighed with these 3 rounds' own
    scatter (±12%)": with both ±12%, "mostly" said nothing; the weights (4 rounds to 2) say why one leads."""
    v = _moderated([1.10, 1.25, 1.40], typical=0.12)
    text = interval_makeup(v, v["round_ratios"])
    assert "mostly" not in text
    got = re.search(r"rests (\d+)% on .* and (\d+)% on ", text)
    assert got and int(got.group(1)) + int(got.group(2)) == 100 and int(got.group(1)) >= int(got.group(2))


def test_rounds_all_one_way_against_the_other_give_the_interval_as_the_sentence_does():
    """01's reader: "numpy @ numpy was faster in every one of its 3 rounds ... its 97.5% interval (0.97×-1.14×, as
    numpy @ numpy's speed-up)" beside a sentence "torch measured 1.05× slower" and a table 0.88×-1.03×: "as numpy's
    speed-up" read as the table's interval inverted. The note gives the slower side's time over the faster's."""
    v = _moderated([1 / 1.04, 1 / 1.05, 1 / 1.06], typical=0.05)
    assert v["ci_low"] < 1 < v["ci_high"]
    said = one_way_text(v, "numpy", "torch")
    assert "numpy was faster in every one" in said and "speed-up" not in said
    lo, hi = (float(x) for x in re.search(r"interval \((\d\.\d+)×-(\d\.\d+)×, torch's time over numpy's\)",
                                          said).groups())
    assert lo == pytest.approx(1 / v["ci_high"], rel=0.01) and hi == pytest.approx(1 / v["ci_low"], rel=0.01)
