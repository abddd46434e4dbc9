"""workbench.report.claims: a verdict's sentence says what the verdict says, and the claim check catches a sentence
or a verdict that does not follow from the measurement."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from workbench.judge import verdicts as vd
from workbench.report import claims
from workbench.report.claims import (
    ClaimMismatch,
    bytes_share,
    cache_place,
    cache_text,
    check_claim,
    check_verdict,
    inner_caches,
    noisy_cells_text,
    pair_verdicts,
    verdict_sentence,
)


def verdict(name, speedup, ci_low, ci_high, floor):
    return {"verdict": name, "speedup": speedup, "ci_low": ci_low, "ci_high": ci_high, "floor": floor}


FASTER = verdict("faster", 2.0, 1.8, 2.2, 0.05)
SLOWER = verdict("slower", 0.5, 0.45, 0.55, 0.05)
SAME = verdict("same", 1.02, 0.98, 1.04, 0.04)
WIDE_SAME = verdict("same", 0.12, 0.01, 9.0, 7.51)        # issue 26: "the same within the noise (floor ±751%)"
INCONCLUSIVE = verdict("inconclusive", 1.3, 0.9, 1.9, 0.45)
AMBIGUOUS = verdict("ambiguous", 1.4, 0.95, 2.1, 0.2)
DISTURBED_FASTER = verdict("faster", 3.7, 1.8, 7.65, 1.06)  # issue 39: "1.8–7.65× ±106%" printed as a finding
TOO_FEW = verdict("insufficient samples", 1.1, float("nan"), float("nan"), float("nan"))


@pytest.mark.parametrize("v, expected", [
    (FASTER, "fused ran 2.0× faster than eager (97.5% interval 1.8×-2.2×)"),
    (SLOWER, "eager was faster: fused took 2.0× its time (97.5% interval 1.8×-2.3×)"),   # ends outward
    (SAME, "fused and eager ran the same within ±5.0%: the whole 97.5% interval (0.98×-1.04×, 1.02× measured) lies "
           "inside it"),
    (WIDE_SAME, "could not tell fused from eager: the comparison was disturbed: " + vd.RERUN_HINT),
    (DISTURBED_FASTER, "fused ran at least 1.8× faster than eager, by how much is unknown: the comparison was "
                       "disturbed: " + vd.RERUN_HINT),
    (INCONCLUSIVE, "could not tell fused from eager: fused measured 1.30× faster, within its ±45% noise floor; "
                   "more rounds or a quieter machine could settle it"),
    # 0.95-2.1 (±49%) prints finely enough not to read ±50% or more ("0.9×-2.1×" would: check_printed_intervals)
    (AMBIGUOUS, "could not tell fused from eager: fused measured 1.40× faster, but the 97.5% interval 0.95×-2.10× "
                "includes no change; "
                "more rounds or a quieter machine could settle it"),
    (TOO_FEW, "no call between fused and eager: insufficient samples"),
])
def test_the_sentence_is_chosen_by_the_verdict_and_passes_its_check(v, expected):
    sentence = verdict_sentence(v, "eager", "fused")
    assert sentence == expected
    check_claim(v, sentence)


def test_a_sentence_that_says_more_than_its_verdict_fails():
    with pytest.raises(ClaimMismatch, match="reads 'same'"):
        check_claim(SAME, verdict_sentence(FASTER, "eager", "fused"))
    with pytest.raises(ClaimMismatch, match="reads 'inconclusive'"):
        check_claim(WIDE_SAME, "fused and eager ran the same within the noise")
    with pytest.raises(ClaimMismatch):
        check_claim(FASTER, "fused ran 2.00× faster than eager, and was faster: too")


def test_a_verdict_that_does_not_follow_from_its_numbers_fails():
    with pytest.raises(ClaimMismatch, match="does not follow"):
        check_verdict(verdict("faster", 2.0, 0.9, 2.5, 0.05))     # the interval includes no change
    with pytest.raises(ClaimMismatch, match="does not follow"):
        check_verdict(verdict("slower", 1.5, 1.2, 1.8, 0.05))     # the speed-up says faster
    with pytest.raises(ClaimMismatch, match="does not follow"):
        check_verdict(verdict("same", 1.5, 1.4, 1.6, 0.05))       # a 50% gap is beyond a 5% floor
    with pytest.raises(ClaimMismatch, match="does not follow"):
        check_verdict(verdict("inconclusive", 3.0, 2.5, 3.5, 0.2))  # settled beyond the floor: faster
    with pytest.raises(ClaimMismatch, match="without its numbers"):
        check_verdict(verdict("faster", 2.0, float("nan"), 2.5, 0.05))
    with pytest.raises(ClaimMismatch, match="does not follow"):
        check_verdict(verdict("faster", 1.03, 1.01, 1.05, 0.05))  # below the smallest effect ever called
    check_verdict(TOO_FEW)  # no call: nothing to contradict
    check_verdict(verdict("faster", 1.3, 1.01, 1.7, 0.3))  # floor = the interval's half-width (verdicts.decide)


def test_a_sentence_of_your_own_is_checked_against_your_phrases():
    check_claim(FASTER, "tiling pays: blocks are reused", {"faster": "tiling pays"})
    check_claim(SAME, "no difference the noise lets us call", {"faster": "tiling pays"})
    with pytest.raises(ClaimMismatch, match="tiling pays"):
        check_claim(SLOWER, "tiling pays anyway", {"faster": "tiling pays"})


@pytest.mark.parametrize("seed", range(40))
def test_every_verdict_the_package_gives_reads_as_a_sentence_that_passes_its_check(seed):
    """Sentence and check agree with workbench.judge.verdicts on real paired and unpaired verdicts, quiet or noisy."""
    rng = np.random.default_rng(seed)
    rounds = int(rng.integers(3, 9))
    gap = float(rng.choice([1.0, 1.1, 1.5, 3.0, 0.4]))
    noise = float(rng.choice([0.01, 0.1, 0.6]))
    a = 1e-3 * np.exp(rng.normal(0, noise, rounds))
    b = a / gap * np.exp(rng.normal(0, noise, rounds))
    for v in (vd.paired_verdict(a, b), vd.unpaired_verdict(a, b, run_noise=noise)):
        check_claim(v.to_dict(), verdict_sentence(v.to_dict(), "A", "B"))


def rows(times_by_variant, rounds=7, seed=0):
    """Store-shaped ok rows of one run on numpy: variant -> median time per size."""
    rng = np.random.default_rng(seed)
    out = []
    for variant, times in times_by_variant.items():
        for n, t in times.items():
            medians = t * np.exp(rng.normal(0, 0.01, rounds))
            out.append({"run_id": "r", "kernel": "k", "variant": variant, "backend": "numpy", "dtype": "float32",
                        "params": json.dumps({"n": n}), "size": n, "size_label": f"n={n}", "mode": "eager",
                        "cache": "warm", "library": variant == "base", "status": "ok", "noisy": False,
                        "median_s": float(np.median(medians)), "round_medians_s": json.dumps(medians.tolist()),
                        "samples_s": json.dumps(medians.tolist())})
    return pd.DataFrame(out)


def test_pair_verdicts_judges_other_against_base_per_size():
    df = rows({"base": {1: 1e-3, 2: 2e-3}, "fast": {1: 0.5e-3, 2: 2e-3}, "unrelated": {1: 9e-3, 2: 9e-3}})
    table = pair_verdicts(df, "base", "fast", "numpy")
    assert list(table["variant"]) == ["fast", "fast"] and set(table["baseline_variant"]) == {"base"}
    by_size = dict(zip(table["size_label"], table["verdict"], strict=True))
    assert by_size == {"n=1": "faster", "n=2": "same"}
    assert table.set_index("size_label").loc["n=1", "speedup"] == pytest.approx(2.0, rel=0.05)
    assert pair_verdicts(df, "base", "fast", "torch-cpu").empty


def test_cache_text_says_whether_the_working_set_fits():
    assert cache_text(2 * 2**20, 32 * 2**20, inner=()) == "working set 2 MiB fits in the 32 MiB last-level cache"
    assert "exceeds the" in cache_text(64 * 2**20, 32 * 2**20)
    assert "last-level cache size unknown" in cache_text(1024, None)


#: The caches inside a 32 MiB last-level one on our host: 32 KiB L1 data, 1 MiB L2 per core.
INNER = (("L1 data", 32 * 2**10), ("per-core L2", 2**20))


def test_cache_text_names_the_smallest_cache_level_the_working_set_fits():
    """Issue 39, 01's reader: "working set 768 KiB fits in the 32 MiB last-level cache" beside "per-core cache:
    1 MiB"; and 48 KiB was said to "fit in every cache" past a 32 KiB L1."""
    llc = 32 * 2**20
    assert cache_text(768 * 2**10, llc, INNER) == (
        "working set 768 KiB fits in the 1 MiB per-core L2 cache, past the 32 KiB L1 data cache")
    assert cache_text(16 * 2**10, llc, INNER) == "working set 16 KiB fits in the 32 KiB L1 data cache"
    assert cache_text(4 * 2**20, llc, INNER) == (
        "working set 4 MiB fits in the 32 MiB last-level cache, past the 1 MiB per-core L2 cache")
    assert cache_text(64 * 2**20, llc, INNER) == "working set 64 MiB exceeds the 32 MiB last-level cache"
    assert cache_place(768 * 2**10, llc, INNER) == "within the 1 MiB per-core L2 cache"
    assert cache_place(64 * 2**20, llc, INNER) == "past the 32 MiB last-level cache"
    # another device's last-level cache (a GPU's L2): this CPU's inner levels are not its
    assert inner_caches(7 * 2**20 + 1) == ()


def test_bytes_share_follows_from_the_printed_figures():
    """Issue 39: 02 printed "21.5 GiB ... 92% of the host's 23.5 GiB" (exact bytes 0.92; the printed ones 91.5%)."""
    host = 23.5 * 2**30
    assert f"{21.54 * 2**30 / host:.0%}" == "92%"   # what the exact bytes would have printed
    assert bytes_share(21.54 * 2**30, host) == ("21.5 GiB", "91.5%", "23.5 GiB")
    assert bytes_share(2**30, 4 * 2**30) == ("1 GiB", "25%", "4 GiB")


def test_noisy_cells_text_only_where_every_compared_cell_is_noisy():
    """Issue 39: 04 stated a cause of two cells, both noisy on a busy machine, without saying so."""
    busy = pd.DataFrame({"noisy": [1, 1], "other_cpu_share": [0.9, 0.4]})
    assert noisy_cells_text(busy) == ("both its cells are marked noisy (other processes used up to 90% of the CPU "
                                      "while they ran)")
    assert noisy_cells_text(busy.assign(noisy=[1, 0])) == ""
    calm = pd.DataFrame({"noisy": [True, True, True], "other_cpu_share": [0.01, 0.02, None]})
    assert noisy_cells_text(calm) == ("all 3 of its cells are marked noisy (their rounds spread past the noise "
                                      "threshold)")
    assert noisy_cells_text(pd.DataFrame({"variant": ["a"]})) == ""


def test_cache_place_follows_the_bytes_not_the_size_position():
    """Issue 39: 01 said "past the last-level cache (n=65536)" of a 768 KiB working set under SMALL."""
    llc = 32 * 2**20
    assert cache_place(768 * 2**10, llc, ()) == "within the 32 MiB last-level cache"
    assert cache_place(64 * 2**20, llc) == "past the 32 MiB last-level cache"
    assert cache_place(llc, llc, ()).startswith("within")
    assert cache_place(2**30, None) == cache_place(2**30, 0) == "last-level cache size unknown"


def test_same_needs_a_small_floor():
    assert claims.reading(SAME) == "same"
    assert claims.reading(verdict("same", 1.0, 0.9, 1.1, claims.SAME_MAX_FLOOR + 0.01)) == "inconclusive"
    assert claims.fmt_floor(803418.0) == "±80,341,800%"


def test_busy_text_names_the_largest_share_only_on_a_busy_machine():
    busy = pd.DataFrame({"other_cpu_share": [0.1, 0.85, None]})
    assert claims.busy_share(busy) == pytest.approx(0.85)
    # what the share is of (every core together) and that this run's own processes are not in it
    assert claims.busy_text(busy).startswith("other processes used up to 85% of the CPU (all ")
    assert "this run's own processes not counted" in claims.busy_text(busy)
    quiet = pd.DataFrame({"other_cpu_share": [0.02, claims.BUSY_CPU_SHARE]})
    assert claims.busy_text(quiet) == ""
    assert claims.busy_share(pd.DataFrame({"variant": ["numpy"]})) is None
    assert claims.busy_text(pd.DataFrame({"other_cpu_share": [None]})) == ""


def test_a_disturbed_comparison_prints_no_interval_and_says_what_disturbed_it():
    rows = pd.DataFrame({"load_avg_1m": [4.7, 8.8], "other_cpu_share": [0.2, 0.85]})
    by = claims.disturbance_text(rows)
    assert by == "load up to 8.8, other processes up to 85% of the CPU"
    sentence = verdict_sentence(verdict("inconclusive", 0.816, 0.06, 11.0, 13.61), "numpy", "torch", by)
    assert sentence == ("could not tell torch from numpy: the comparison was disturbed (load up to 8.8, other "
                        "processes up to 85% of the CPU): " + vd.RERUN_HINT)
    assert "±" not in sentence and "0.816" not in sentence
    check_claim(verdict("inconclusive", 0.816, 0.06, 11.0, 13.61), sentence)
    assert claims.disturbance_text(pd.DataFrame({"x": [1]})) == ""


def test_the_check_refuses_an_interval_past_the_floor_that_can_inform():
    wide = verdict("inconclusive", 1.2, 0.2, 9.0, 13.61)
    with pytest.raises(ClaimMismatch, match="±1,361%"):
        check_claim(wide, "could not tell fused from eager: fused measured 1.20× faster, within ±1,361% noise")
    with pytest.raises(ClaimMismatch, match="does not say 'was disturbed'"):
        check_claim(wide, "could not tell fused from eager: more rounds would settle it")
    with pytest.raises(ClaimMismatch, match="says 'was disturbed'"):
        check_claim(INCONCLUSIVE, "could not tell fused from eager: the comparison was disturbed")
    claims.check_printed_intervals("within ±45% noise, ±5.0%")  # informative widths pass
    assert vd.verdict_label("inconclusive", 13.61, "paired rounds") == "disturbed"
    assert vd.verdict_label("faster", 1.06, "paired rounds") == "faster, disturbed"
    assert vd.verdict_label("inconclusive", 0.45, "paired rounds") == "inconclusive (±45%)"


def test_a_pair_whose_medians_disagree_with_its_interval_is_not_settled():
    # tutorial 10 (issue 39): paired blocks 1.00x "same-ish" beside medians 294 / 353 us (every round ~20% apart)
    parted = {**verdict("same", 1.00, 0.97, 1.03, 0.03), "median_a": 294e-6, "median_b": 353e-6,
              "basis": vd.BLOCKS}
    assert claims.medians_disagree(parted) and claims.reading(parted) == "inconclusive"
    sentence = verdict_sentence(parted, "numpy-eager", "numpy-graph")
    assert sentence.startswith("could not tell numpy-graph from numpy-eager: the paired blocks and the cells' own "
                               "rounds disagree (numpy-graph at the same speed (1.00×) paired, numpy-graph "
                               "took 1.20× the time from the medians (294 µs / 353 µs)): not settled; rerun")
    check_claim(parted, sentence)
    with pytest.raises(ClaimMismatch, match="the verdict reads 'inconclusive'"):
        check_claim(parted, "numpy-graph and numpy-eager ran the same within the noise (1.00× measured, floor ±3.0%)")
    # tutorial 08: "1.18x faster" beside medians 544 / 526 us (1.03x) is not a finding either
    faster = {**verdict("faster", 1.18, 1.10, 1.27, 0.07), "median_a": 544e-6, "median_b": 526e-6}
    assert claims.reading(faster) == "inconclusive" and "× faster than" not in verdict_sentence(faster, "a", "b")
    rounds = {**faster, "basis": "paired rounds"}   # no blocks: the hint is about the rounds, not the loop
    assert "a few rounds far apart" in verdict_sentence(rounds, "a", "b")
    check_claim(rounds, verdict_sentence(rounds, "a", "b"))
    # medians inside the interval: the verdict stands, and a sentence may not claim a disagreement
    agreed = {**FASTER, "median_a": 2.0, "median_b": 1.0}
    assert not claims.medians_disagree(agreed) and claims.reading(agreed) == "faster"
    with pytest.raises(ClaimMismatch, match="says \"and the cells' own rounds disagree\""):
        check_claim(agreed, "b ran 2.00× faster than a, and the cells' own rounds disagree")
    # 08 idle: "0.94x paired against 0.95x from the medians" called a disagreement: a ratio 3% past a tight
    # interval is within each median's own error
    close = {**verdict("slower", 0.94, 0.935, 0.945, 0.01), "median_a": 0.95, "median_b": 1.0}
    assert not claims.medians_disagree(close) and claims.reading(close) == "slower"
    shown = claims.shown_verdicts(pd.DataFrame([parted, agreed]))
    assert list(shown["verdict"]) == ["not settled (medians disagree)", "faster"]


def test_shown_verdicts_catches_a_disturbed_row_in_a_table_without_its_floor():
    # tutorial 05 showed 'inconclusive' beside an interval 0.39-4.01x its sentence called disturbed
    table = pd.DataFrame([{"verdict": "inconclusive", "speedup": 1.25, "ci_low": 0.388, "ci_high": 4.01},
                          {"verdict": "faster", "speedup": 1.24, "ci_low": 1.005, "ci_high": 1.523}])
    shown = claims.shown_verdicts(table)
    assert list(shown["verdict"]) == ["disturbed", "faster"]
    assert shown["ci_low"].isna().iloc[0] and shown["floor"].iloc[1] == pytest.approx(0.231, abs=1e-3)


def test_a_same_whose_interval_excludes_no_change_says_how_far_apart_not_noise():
    # tutorial 11: "the same within the noise (0.98x measured, floor ±5.0%)" beside an interval 0.972-0.988
    v = verdict("same", 0.98, 0.972, 0.988, 0.028)
    sentence = verdict_sentence(v, "hand-picked", "tuned")
    # slower said as the time it took, its interval too (08: "1.03× slower" beside a speed-up's 0.94×-0.99×)
    assert "noise" not in sentence and "tuned was about 2.0% slower (took 1.020× the time, 97.5% " \
        "interval 1.012×-1.029×)" in sentence
    check_claim(v, sentence)
    assert "the whole 97.5% interval" in verdict_sentence(SAME, "eager", "fused")   # an interval holding 1: said whole


def test_verdict_table_prints_numbers_with_units_and_no_disturbed_interval():
    table = pd.DataFrame([{"variant": "torch", **verdict("faster", 1.143387, 1.034481, 1.263, 0.105),
                           "coverage": 0.975},
                          {"variant": "portable", **verdict("slower", 0.2, 0.05, 0.37, 1.7), "coverage": 0.975}])
    shown = claims.verdict_table(table, ["variant"])
    assert list(shown.columns) == ["variant", "speed-up (paired)", "interval (97.5%)", "floor", "verdict"]
    # the speed-up at the precision its sentence prints it (01 read "1.1x faster" beside a table's 1.13x)
    assert shown.iloc[0].tolist() == ["torch", "1.14×", "1.03×-1.27×", "±10%", "faster"]   # 1.263 outward
    assert (verdict_sentence(table.iloc[0].to_dict(), "numpy", "torch")
            == "torch ran 1.14× faster than numpy (97.5% interval 1.03×-1.27×)")
    assert shown.iloc[1].tolist() == ["portable", "", "≤ 0.37×", "", "slower, disturbed"]


def test_a_one_sided_interval_is_labelled_as_one():
    from workbench.report.claims import interval_text

    assert interval_text(1.03, 1.26) == "1.03×-1.26×"
    assert interval_text(75.3, 102.6) == "75×-103×" and interval_text(17.7, 24.7) == "17×-25×"   # 06, rounded outward
    assert interval_text(8.71, 12.3) == "8.7×-12.3×"   # one precision for both ends, two figures at least
    assert interval_text(float("nan"), 0.95) == "≤ 0.95×"
    assert interval_text(1.1, None) == "≥ 1.10×"   # as its sentence says it ("at least 1.10×")
    assert interval_text(None, float("nan")) == ""


def test_the_host_bandwidth_is_the_best_probe_and_dips_are_named():
    from workbench.report.claims import bandwidth_down_text, host_bandwidth

    rows = pd.DataFrame({"variant": ["a", "b"], "backend": ["numpy", "numba"], "size_label": ["n=1", "n=2"],
                         "round_bandwidth_gbs": ["[34.1, 40.1, 11.4]", None], "bandwidth_probe_gbs": [34.1, None],
                         "noise_note": ["the host's memory bandwidth was down in round 3 (11.4 of 40.1 GB/s)", ""]})
    assert host_bandwidth(rows) == (40.1, 3)   # the row's bandwidth_probe_gbs is its rounds' median, not a probe
    # two cells of one round carry that round's one probe: counted once (10's "21 probes" were seven cells' copies)
    shared = rows.assign(round_bandwidth_gbs=["[34.1, 40.1, 11.4]"] * 2, bandwidth_probe_gbs=[34.1] * 2)
    assert host_bandwidth(shared) == (40.1, 3)
    alone = rows.assign(round_bandwidth_gbs=[None, None], bandwidth_probe_gbs=[30.0, 31.0])
    assert host_bandwidth(alone) == (31.0, 2)
    assert host_bandwidth(rows.drop(columns=["round_bandwidth_gbs", "bandwidth_probe_gbs"])) is None
    said = bandwidth_down_text(rows)
    assert "1 of 2 cells" in said and "a on numpy at n=1" in said
    assert bandwidth_down_text(rows.assign(noise_note="")) == ""
    # five cells down: every one named (a reader met "... and 1 more" and could not tell which)
    five = pd.DataFrame({"variant": list("abcde"), "backend": ["numpy"] * 5, "size_label": ["n=1"] * 5,
                         "noise_note": ["the host's memory bandwidth was down in round 1 (1 of 2 GB/s)"] * 5})
    said = bandwidth_down_text(five)
    assert all(f"{x} on numpy at n=1" in said for x in "abcde") and "more" not in said
    assert "and 5 more" in bandwidth_down_text(pd.concat([five, five.assign(variant=list("fghij"))]))


def test_a_bimodal_side_is_not_settled():
    v = {**verdict("slower", 1 / 14.88, 0.05, 0.09, 0.1), "bimodal_note": "torch-unfused float16's rounds were bimodal"}
    sentence = claims.verdict_sentence(v, "float32", "float16")
    assert claims.reading(v) == "inconclusive" and "bimodal" in sentence and "not settled" in sentence
    claims.check_claim(v, sentence)


def test_a_cause_is_stated_only_under_a_settled_verdict():
    # issue 39, third reader: "tiling pays" under "disturbed", "bytes deciding time" under parted medians
    assert claims.may_state_cause(FASTER) and claims.may_state_cause(SLOWER)
    assert claims.settled is claims.may_state_cause
    for v in (SAME, WIDE_SAME, INCONCLUSIVE, AMBIGUOUS, DISTURBED_FASTER, TOO_FEW,
              {**FASTER, "median_a": 5.0, "median_b": 1.0},             # medians disagree with the interval
              {**FASTER, "bimodal_note": "a's rounds were bimodal"}):
        assert not claims.may_state_cause(v), v


def test_a_settled_direction_with_an_unsettled_size_says_who_was_faster():
    # 08 n=64: 2.20x paired against 2.76x from the medians: both say torch > 2x faster
    v = {**verdict("faster", 2.20, 2.05, 2.35, 0.07), "median_a": 2.76, "median_b": 1.0}
    assert claims.reading(v) == "inconclusive" and claims.settled_direction(v) == ("faster", 2.20, 2.76)
    sentence = verdict_sentence(v, "numpy", "torch")
    assert sentence.startswith("torch ran faster, by 2.2× by one estimate and 2.76× by the other: the size of the gap "
                               "is not settled")
    assert "could not tell" not in sentence
    check_claim(v, sentence)
    with pytest.raises(ClaimMismatch):
        check_claim(v, "could not tell torch from numpy: not settled")
    # 06 float16: bimodal float16, both modes 26x and 52x slower than float32
    b = {**verdict("slower", 0.04, 0.03, 0.05, 0.1), "median_a": 141e-6, "median_b": 3.67e-3,
         "bimodal_note": "float16's rounds were bimodal", "mode_ratios": [141e-6 / 3.67e-3, 141e-6 / 7.27e-3]}
    assert claims.settled_direction(b)[0] == "slower"
    sb = verdict_sentence(b, "float32", "float16")
    # its lowest estimate is one mode's median, not a bound: no "at least" (06's readers)
    assert sb.startswith("float32 ran faster by every estimate (the paired speed-up, the medians' ratio and each mode "
                         "of the rounds), by how much is unknown: the size") and "bimodal" in sb
    assert "at least" not in sb and "25×" not in sb
    assert "25-51.6" not in sb  # estimates 2x apart: a range that wide is no finding (third reader, 08)
    check_claim(b, sb)
    # estimates on both sides of the band, or inside it: not a direction
    assert claims.settled_direction({**verdict("faster", 1.18, 1.10, 1.27, 0.07), "median_a": 1.03,
                                     "median_b": 1.0}) is None
    assert claims.settled_direction(FASTER) is None and claims.settled_direction(
        {**DISTURBED_FASTER, "median_a": 9.0, "median_b": 1.0}) is None
    assert claims.ratio_text(1.351, 1.39) == "1.35-1.39×" and claims.ratio_text(1.351, 1.352) == "1.35×"


def test_a_cells_share_is_against_its_own_rounds_probes():
    # 05: medians of bandwidth-down rounds divided by the run's best probe read 40%; against their own rounds 72%:
    # a round is set against its own probe where the cell felt the dip (ran 5% or more slower there)
    row = {"bytes": 1e9, "round_medians_s": json.dumps([0.25, 0.1, 0.1]),
           "round_bandwidth_gbs": json.dumps([14.0, 41.3, 40.0])}
    assert claims.round_rates(row)[0] == pytest.approx((4.0, 14.0))
    assert claims.own_rounds_share(row) == pytest.approx(10 / 41.3)  # the median of 4/14, 10/41.3, 10/41.3
    # a dip the cell did not feel (the same time in every round) is the probe's: set against the best probe
    unfelt = {**row, "round_medians_s": json.dumps([0.1, 0.1, 0.1])}
    assert [d for _, d in claims.round_rates(unfelt)] == [41.3, 41.3, 41.3]
    assert claims.own_rounds_share(unfelt) == pytest.approx(10 / 41.3)
    assert claims.own_rounds_share({**row, "round_bandwidth_gbs": None}) is None
    assert claims.own_rounds_share({**row, "round_bandwidth_gbs": "[14.0]"}) is None


def test_a_bimodal_side_is_named_once_and_each_of_its_modes_counts():
    """06 printed "float32 ran faster, by 24.5-24.7x" beside a float16 mode at 7.36 ms (about 52x): the range
    left out the mode the headline did not sit in, and the note read "float16's rounds were bimodal rounds"."""
    a = {"round_medians_s": json.dumps([141e-6, 140e-6, 142e-6]), "median_s": 141e-6}
    b = {"round_medians_s": json.dumps([3.45e-3, 3.46e-3, 7.36e-3]), "median_s": 3.45e-3}
    fields = claims.bimodal_fields(a, b, "float32", "float16")
    assert fields["bimodal_note"] == "float16's rounds fell in two modes: 2 near 3.45 ms, 1 near 7.36 ms"
    v = {**verdict("slower", 0.0409, 0.040, 0.0418, 0.02), "median_a": 141e-6, "median_b": 3.45e-3, **fields}
    way, lo, hi = claims.settled_direction(v)
    assert way == "slower" and 1 / hi == pytest.approx(3.45e-3 / 141e-6, rel=0.01)
    assert 1 / lo == pytest.approx(7.36e-3 / 141e-6, rel=0.01)  # the slow mode's 52x is part of the range
    sentence = verdict_sentence(v, "float32", "float16")
    assert "ran faster by every estimate" in sentence and "at least" not in sentence
    assert "rounds were bimodal rounds" not in sentence and "1 near 7.36 ms" in sentence
    check_claim(v, sentence)
    assert claims.bimodal_fields(a, {**b, "round_medians_s": json.dumps([3.45e-3] * 3)}, "x", "y") == {}


def test_a_settled_sentence_names_the_medians_where_they_differ_from_its_paired_figure():
    """10: "numba-flash took 1.72x its time" beside medians of 624 and 415 us (1.50x): the reader could not
    reconcile them. The medians inside the interval do not unsettle the verdict; the sentence names both."""
    v = {**verdict("slower", 1 / 1.72, 1 / 2.0, 1 / 1.45, 0.2), "median_a": 415e-6, "median_b": 624e-6}
    sentence = verdict_sentence(v, "numpy-naive", "numba-flash")
    assert sentence == "numpy-naive was faster: numba-flash took 1.7× its time (97.5% interval 1.4×-2.0×)"
    check_claim(v, sentence)
    close = {**verdict("faster", 2.0, 1.9, 2.1, 0.05), "median_a": 2.02, "median_b": 1.0}
    # within 3%: one figure
    assert verdict_sentence(close, "a", "b") == "b ran 2.0× faster than a (97.5% interval 1.9×-2.1×)"


@pytest.mark.parametrize("x, lo, hi, shown", [
    (49.54, 47.6, 51.5, "50×"),      # 01: "took 49.54× its time" beside an interval of ±4%
    (1.12, 1.08, 1.17, "1.12×"),     # a narrow interval keeps its two decimals
    (8.04, 6.71, 9.62, "8.0×"),      # two significant digits at least (04: "9×" beside a table's 9.4×)
    (3.02, 2.13, 4.31, "3.0×"),      # 01: "took 4× its time" beside a table giving 4.2×
    (1.62, 1.2, 2.2, "1.6×"),        # below 2, never fewer than two significant digits
    (1.3, 0.9, 1.9, "1.30×"),        # two significant digits of the low end (0.90)
    (312.0, 250.0, 400.0, "312×"),
    (1.5, float("nan"), 2.0, "1.50×"),   # no interval: two decimals, as before
])
def test_a_ratio_is_printed_as_precisely_as_its_interval_supports(x, lo, hi, shown):
    assert claims.estimate_text(x, lo, hi) == shown


def test_a_slower_sentence_quotes_its_ratio_at_its_interval_s_precision():
    v = verdict("slower", 0.0202, 0.0194, 0.021, 0.05)
    sentence = verdict_sentence(v, "numpy", "wgsl")
    # outward, and never narrower than the table's "0.019×-0.021×" inverted (52.6)
    assert sentence == "numpy was faster: wgsl took 50× its time (97.5% interval 47×-53×)"
    check_claim(v, sentence)


@pytest.mark.parametrize("x, shown", [(14.89, "14×"), (1.80, "1.8×"), (1.0449, "1.04×"), (0.0672, "0.067×"),
                                      (312.0, "310×")])
def test_a_bound_keeps_two_significant_digits_rounded_the_way_that_keeps_it_a_bound(x, shown):
    assert claims.bound_text(x) == shown


def test_an_inconclusive_ratio_that_prints_as_one_is_said_as_no_difference_not_as_slower():
    """11: "measured 1.00× slower, within ±9.1% noise"."""
    v = verdict("inconclusive", 0.997, 0.93, 1.07, 0.091)
    sentence = verdict_sentence(v, "hand-picked", "tuned")
    assert "tuned measured no difference at this precision (1.00×)" in sentence and "slower" not in sentence
    check_claim(v, sentence)


def test_the_rerun_hint_blames_other_work_only_where_the_rows_show_a_busy_machine():
    """issue 39: an idle run (other processes 1% of the CPU) printed "while the machine is otherwise idle"."""
    rows = pd.DataFrame({"variant": ["a", "b"], "backend": ["x", "x"], "size_label": ["n=1", "n=1"],
                         "other_cpu_share": [0.01, 0.02], "load_avg_1m": [1.1, 1.0]})
    assert claims.machine_busy(rows) is False
    assert claims.machine_busy(rows.assign(other_cpu_share=[0.01, 0.51])) is True
    assert claims.machine_busy(rows.drop(columns="other_cpu_share")) is None
    table = pd.DataFrame([{**WIDE_SAME, "variant": "b", "backend": "x", "size_label": "n=1",
                           "baseline_variant": "a", "baseline_backend": "x"}])
    idle = claims.mark_busy(table, rows).iloc[0].to_dict()
    sentence = verdict_sentence(idle, "a", "b", claims.disturbance_text(rows))
    assert "otherwise idle" not in sentence and "the machine was not busy" in sentence
    check_claim(idle, sentence)
    busy = claims.mark_busy(table, rows.assign(other_cpu_share=[0.01, 0.51])).iloc[0].to_dict()
    assert verdict_sentence(busy, "a", "b").endswith(vd.BUSY_RERUN_HINT)
    # a disturbed sentence whose caller gave no cause names the pair's own rows' load (04 said "was disturbed" only)
    assert "was disturbed (load up to 1.1, other processes up to 51% of the CPU)" in verdict_sentence(busy, "a", "b")
    assert verdict_sentence(WIDE_SAME, "a", "b").endswith(vd.RERUN_HINT)   # the rows did not say: no cause
    parted = {**verdict("faster", 1.18, 1.10, 1.27, 0.07), "median_a": 544e-6, "median_b": 526e-6,
              "basis": vd.BLOCKS, "busy": False}
    assert "otherwise idle" not in verdict_sentence(parted, "a", "b")
    assert "otherwise idle" in verdict_sentence({**parted, "busy": True}, "a", "b")


def test_a_same_whose_medians_lie_outside_its_interval_is_not_settled():
    """10: "ran the same within ±5.0%: the whole interval (0.973x-1.02x, 0.99x measured)" beside medians
    1.39 / 1.46 ms (0.952x)."""
    v = {**verdict("same", 0.99, 0.973, 1.02, 0.024), "median_a": 1.39e-3, "median_b": 1.46e-3, "basis": vd.BLOCKS}
    assert claims.medians_disagree(v) and claims.reading(v) == "inconclusive"
    sentence = verdict_sentence(v, "numpy-eager", "numpy-graph")
    assert "ran the same" not in sentence and "not settled" in sentence
    check_claim(v, sentence)
    # 08 busy: "took 1.06x its time" called though the medians coincide
    slower = {**verdict("slower", 1 / 1.06, 1 / 1.10, 1 / 1.025, 0.04), "median_a": 1.0, "median_b": 1.0}
    assert claims.reading(slower) == "inconclusive"


@pytest.mark.parametrize("v, medians, aside", [
    (verdict("faster", 1.6, 1.45, 1.75, 0.09), (346, 197),
     "; the cells' own medians (346 s / 197 s) give 1.8×, within 1.0% of its high end)"),  # 03, each named
    (verdict("slower", 1 / 1.05, 1 / 1.07, 1 / 1.03, 0.02), (63.4, 65.7), ""),   # 08: 1.05x vs 1.04x
    (verdict("faster", 2.0, 1.9, 2.1, 0.05), (2.02, 1.0), ""),   # both print 2.0x: one figure
])
def test_the_medians_are_named_only_where_they_lie_past_the_interval(v, medians, aside):
    sentence = verdict_sentence({**v, "median_a": medians[0], "median_b": medians[1]}, "a", "b")
    assert (aside in sentence) if aside else "medians" not in sentence


@pytest.mark.parametrize("x, lo, hi, shown", [
    (1.13, 1.02, 1.24, "1.13×"),         # 01: the table read 1.13x beside "1.1x faster": both 1.13x now
    (0.181, 0.162, 0.202, "0.181×"),     # the sentence says "took 5.5x its time"; 0.18 inverts to 5.6
    (0.0199, 0.0184, 0.0215, "0.020×"),  # "took 50x its time"
    (0.952, 0.85, 1.07, "0.95×"),       # the sentence says "1.1x slower", as 1 / 0.95 prints
])
def test_a_table_prints_a_speed_up_at_its_sentence_s_precision(x, lo, hi, shown):
    assert claims.table_ratio(x, lo, hi) == shown


def test_an_inconclusive_ratio_near_one_keeps_the_digits_that_tell_it_from_one():
    """07: "measured no difference at this precision (1.0x)" beside a table reading 0.95x."""
    sentence = verdict_sentence(verdict("inconclusive", 0.952, 0.80, 1.13, 0.17), "a", "b")
    # and the figure said inverted does not double the effect: "1.1× slower" beside 0.95× read as 10% (07, later)
    assert "b measured 1.05× slower" in sentence and "(1.0×)" not in sentence
    assert claims.table_ratio(0.952, 0.80, 1.13) == "0.95×"


@pytest.mark.parametrize(("x", "lo", "hi", "said"), [
    (0.952, 0.80, 1.13, "1.05×"),    # one decimal (1.1) would double the 5% measured
    (0.182, 0.12, 0.25, "5.5×"),     # two significant digits: "5×" for 5.49 read coarser than its table (01)
    (0.90, 0.85, 0.95, "1.11×"),
    (0.999, 0.90, 1.10, "1.00×"),    # prints as 1: left so (the sentence says "no difference")
])
def test_an_inverted_figure_keeps_its_effect(x, lo, hi, said):
    shown = claims.inverse_text(x, lo, hi)
    assert shown == said
    t = float(shown[:-1])
    assert t == 1 or abs(t - 1 / x) <= 0.25 * abs(1 / x - 1)


def test_compare_s_disturbed_note_names_other_work_only_on_a_busy_machine():
    from workbench.cli.cmd_compare import disturbed_notes

    table = pd.DataFrame({"floor": [0.9, 0.1]})
    idle = pd.DataFrame({"other_cpu_share": [0.01], "load_avg_1m": [1.1]})
    [note] = disturbed_notes(table, idle)
    assert "otherwise idle" not in note and "the machine was not busy" in note
    [note] = disturbed_notes(table, idle.assign(other_cpu_share=[0.6]))
    assert note.endswith(vd.BUSY_RERUN_HINT)


@pytest.mark.parametrize("x, shown", [(1.127, "1.13×"), (0.927, "0.93×"), (1.0449, "1.05×"), (0.999, "0.999×"),
                                      (2.01, "2.1×")])
def test_an_upper_bound_rounds_up_so_it_stays_a_bound(x, shown):
    assert claims.bound_text(x, up=True) == shown


def test_an_idle_machine_is_not_told_a_quieter_one_would_settle_it_nor_a_range_of_estimates_read_as_an_interval():
    from workbench.report.claims import SETTLE_IDLE, verdict_sentence

    v = {"speedup": 1.02, "ci_low": 0.95, "ci_high": 1.1, "floor": 0.1, "verdict": "inconclusive",
         "median_a": 1.0, "median_b": 0.98}
    assert verdict_sentence(v, "numpy", "numba", busy=False).endswith(SETTLE_IDLE)
    assert "otherwise idle" in verdict_sentence(v, "numpy", "numba", busy=True)


def test_a_busy_machine_gets_one_rerun_advice_whether_the_pair_is_disturbed_or_inconclusive():
    """issue 39 (05, one core busy): a disturbed pair was told more rounds add the disturbance, and the next cell's
    inconclusive pair, from the same busy rows, "more rounds or a quieter machine would settle it"."""
    from workbench.report.claims import SETTLE_BUSY, verdict_sentence

    unsettled = verdict("inconclusive", 1.04, 0.85, 1.27, 0.2)
    disturbed = verdict("inconclusive", 1.1, 0.5, 2.4, 0.9)
    said = [verdict_sentence(v, "eager", "fused", busy=True) for v in (unsettled, disturbed)]
    assert said[0].endswith(SETTLE_BUSY) and vd.BUSY_RERUN_HINT in said[1]
    assert all("more rounds on a busy machine add its disturbance too" in s for s in said)
    assert not any("more rounds or a quieter" in s for s in said)


def test_a_wide_interval_between_machines_is_said_as_too_wide_not_disturbed():
    """issue 39 (07): two machines' cells scatter around their common ratio; that scatter is what the machines
    differ in, not a disturbance, and the sentence and the table say so."""
    from workbench.report.claims import TOO_WIDE, shown_verdicts

    v = {**verdict("faster", 1.9, 1.2, 3.1, 0.6), "kernel": "saxpy"}
    sentence = verdict_sentence(v, "the other host", "this machine", wide_because="the machines favour each kernel "
                                "differently")
    assert TOO_WIDE in sentence and "disturbed" not in sentence and "at least 1.2× faster" in sentence
    check_claim(v, sentence)
    with pytest.raises(ClaimMismatch):   # a wide interval still may not be printed as a finding
        check_claim(v, "this machine ran 1.9× faster than the other host")
    table = shown_verdicts(pd.DataFrame([v]), wide=True)
    assert table["verdict"].iloc[0] == "faster, amount too wide to read"
    assert shown_verdicts(pd.DataFrame([v]))["verdict"].iloc[0] == "faster, disturbed"


def test_two_runs_compared_are_told_to_add_runs_not_rounds():
    """issue 39 (tutorial 07): between two runs, "rerun it with more rounds" named what cannot shrink the noise
    between the runs; the runs' advice replaces it in every sentence that gives advice."""
    rounds = {**verdict("faster", 1.18, 1.10, 1.27, 0.07), "median_a": 544e-6, "median_b": 526e-6,
              "basis": "paired rounds", "busy": False}
    told = verdict_sentence(rounds, "run A", "run B", rerun=claims.RUNS_RERUN_HINT)
    assert claims.RUNS_RERUN_HINT in told and "more rounds (" not in told
    assert claims.RUNS_RERUN_HINT in verdict_sentence(WIDE_SAME, "run A", "run B", rerun=claims.RUNS_RERUN_HINT)


def test_an_inconclusive_pair_at_the_band_prints_its_interval_not_the_band_as_noise():
    """issue 39 (tutorial 11): "within ±5.0% noise" beside a plotted interval of ±3.5%: the floor was the ±5% band
    itself, not a measured noise; the sentence now gives the interval and why it settles nothing."""
    straddles = verdict("inconclusive", 1.032, 0.997, 1.068, vd.MIN_EFFECT)
    said = verdict_sentence(straddles, "hand-picked", "the pick")
    assert "±5.0% noise" not in said and "(0.99×-1.07×)" in said and "includes no change" in said
    check_claim(straddles, said)
    above = verdict("inconclusive", 1.03, 1.01, 1.06, vd.MIN_EFFECT)
    assert "lies on one side of no change, but the difference is smaller than the 5.0%" in \
        verdict_sentence(above, "a", "b")


def test_an_interval_narrower_than_the_band_is_not_sent_to_a_quieter_machine():
    """08, one core busy: "could not tell … interval (0.947×-0.978×) … rerun it while the machine is otherwise
    idle": an interval of ±1.6% is left open by the 5% band's edge, not by noise."""
    v = {**verdict("inconclusive", 1 / 1.038, 0.947, 0.978, 0.05), "busy": True}
    sentence = verdict_sentence(v, "numpy", "numpy-naive", rerun=vd.BUSY_RERUN_HINT)
    # busy rows are never told to add rounds (10 printed both advices in one block): an idle rerun decides it
    assert sentence.endswith(claims.SETTLE_AT_BAND_BUSY) and "more rounds would" not in sentence
    check_claim(v, sentence)
    idle = verdict_sentence({**v, "busy": False}, "numpy", "numpy-naive")
    assert idle.endswith(claims.SETTLE_AT_BAND) and "otherwise idle" not in idle
    wide = {**verdict("inconclusive", 1.1, 0.8, 1.5, 0.3), "busy": True}
    assert verdict_sentence(wide, "a", "b", rerun=vd.BUSY_RERUN_HINT).endswith(vd.BUSY_RERUN_HINT)


# issue 39 readers: one precision rule for every estimate, interval end and bound (claims.RatioPrecision)
@pytest.mark.parametrize("x, lo, hi, estimate, interval", [
    (1.06, 1.02, 1.10, "1.06×", "1.02×-1.10×"),    # trailing zero kept: "1.02×-1.1×" mixed two precisions
    (2.9, 2.49, 3.43, "2.9×", "2.4×-3.5×"),        # 01 busy: "2.9×" beside "2.49×-3.43×"; ends outward
    (6.1, 4.0, 8.2, "6.1×", "4.0×-8.2×"),          # two significant digits at least (04, 01)
    # 01 busy: "1.15× faster, within ±16%" had three figures; the interval's low end prints under 1 ("1.0×-1.4×"
    # hid whether it held no change)
    (1.2, 0.99, 1.40, "1.20×", "0.99×-1.40×"),
    (1.14, 1.03, 1.26, "1.14×", "1.03×-1.26×"),    # excludes 1: "1.0×-1.3×" would read as including it
    (0.34, 0.291, 0.401, "0.34×", "0.29×-0.41×"),   # never narrower than the data
    (0.053, 0.0412, 0.0675, "0.053×", "0.041×-0.068×"),   # below 1: two significant digits at the low end
])
def test_one_precision_rule_sets_estimate_and_both_ends(x, lo, hi, estimate, interval):
    assert claims.estimate_text(x, lo, hi) == estimate
    assert claims.interval_text(lo, hi) == interval
    ends = interval.split("-")
    assert len({e.rstrip("×").partition(".")[2].__len__() for e in ends}) == 1   # both ends alike


def test_a_table_below_one_inverts_to_the_figure_its_sentence_prints():
    """01 busy: "took 5× its time" beside a table's 0.18× (which inverts to 5.6×)."""
    v = verdict("slower", 0.182, 0.13, 0.259, 0.41)
    sentence = verdict_sentence(v, "numpy", "portable")
    said = re.search(r"took ([\d.]+)× its time", sentence).group(1)
    cell = claims.table_ratio(0.182, 0.13, 0.259)
    assert claims.estimate_text(1 / float(cell.rstrip("×")), 1 / 0.259, 1 / 0.13) == f"{said}×"
    for x, lo, hi in [(0.34, 0.291, 0.401), (0.0181, 0.0152, 0.021), (0.82, 0.704, 0.958)]:
        shown = claims.table_ratio(x, lo, hi)
        assert claims.estimate_text(1 / float(shown.rstrip("×")), 1 / hi, 1 / lo) == claims.estimate_text(
            1 / x, 1 / hi, 1 / lo)


def test_an_interval_said_to_reach_past_the_band_prints_past_it():
    """08/10: "its interval (0.952×-1.05×) includes no change, yet reaches past the ±5.0% we call the same": the
    printed ends sat on the band's edges."""
    v = verdict("inconclusive", 1.0, 0.948, 1.0512, vd.MIN_EFFECT)
    sentence = verdict_sentence(v, "a", "b", busy=False)
    assert "(0.94×-1.06×)" in sentence and "(0.95×-1.05×)" in sentence   # ends outward: past the band as printed
    assert "on which side of 5%" not in sentence
    check_claim(v, sentence)


def test_a_log_sigma_reads_as_one_percentage_everywhere():
    """07: σ = 0.15 said "about ±16%" (e^σ - 1) in one cell and a scatter of 0.21 "±21%" (100·σ) in another."""
    assert claims.sigma_pct(0.15) == "±16%" and claims.sigma_pct(0.21) == "±23%"
    assert claims.sigma_pct(0.03) == "±3.0%" and claims.sigma_pct(float("nan")) == "±?"


def test_compare_says_the_run_to_run_sigma_as_every_sentence_does(monkeypatch):
    """07: the run-to-run noise σ = 0.21 printed "21%" (100·σ) beside cells that said σ = 0.15 as "±16%"."""
    import workbench.judge.compare as judge_compare
    from workbench.cli.cmd_compare import between_runs

    table = pd.DataFrame({"floor": []})
    table.attrs["run_noise"] = 0.21
    monkeypatch.setattr(judge_compare, "compare_runs", lambda df, a, b: table)
    _, _, notes = between_runs(pd.DataFrame(), ["A"], ["B"])
    assert "run-to-run noise beyond the cells' own rounds: ±23% (one sigma)" in notes[0]


def test_an_unsettled_sentence_flags_medians_that_point_the_other_way():
    # 11's readers: "measured 1.3x faster, within ±33% noise" beside medians giving 0.96x
    v = {**verdict("inconclusive", 1.3, 0.95, 1.78, 0.33), "median_a": 0.96, "median_b": 1.0}
    assert not claims.medians_disagree(v)   # inside the interval: not the "disagree" rule
    sentence = verdict_sentence(v, "hand-picked", "the pick")
    assert "medians (960 ms / 1 s) point the other way: the pick took 1.04× the time" in sentence
    check_claim(v, sentence)
    same_way = {**v, "median_a": 1.2}
    assert "other way" not in verdict_sentence(same_way, "hand-picked", "the pick")


def test_a_size_summary_names_every_pair_once_in_its_group():
    """Issue 39, 01's reader: the summary at the largest size left out wgsl @ vulkan, settled 56× slower."""
    from workbench.report.verdict_reading import readings_summary

    said = {"torch @ torch-cpu": "faster", "numba @ numba": "faster", "portable @ opencl-0": "slower, disturbed",
            "wgsl @ vulkan": "slower", "x @ y": "inconclusive"}
    text = readings_summary(said, "numpy @ numpy")
    assert text == ("against numpy @ numpy, faster beyond the noise: torch @ torch-cpu, numba @ numba; "
                    "slower beyond the noise: wgsl @ vulkan; slower, the amount not readable (disturbed): "
                    "portable @ opencl-0; not told apart (whatever order the plot's medians show): x @ y")
    assert all(text.count(k) == 1 for k in said)
    with pytest.raises(ValueError, match="no summary group"):
        readings_summary({"a @ b": "maybe"}, "numpy @ numpy")
