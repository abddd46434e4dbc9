"""Issue 39 readers: a disturbed sentence names what its numbers show, not an idle machine's load, as its cause; a
"could not tell" beside rounds that all point one way says so; no rerun hint prints an uncopyable command."""

import pandas as pd

from workbench.judge import verdicts as vd
from workbench.report import claims
from workbench.report.claims import check_claim, mark_busy, verdict_sentence

IDLE_ROWS = pd.DataFrame({"load_avg_1m": [1.4, 1.2], "other_cpu_share": [0.01, 0.008],
                          "round_medians_s": ["[1.0, 1.9, 1.1]", "[2.0, 2.1, 2.05]"]})
DISTURBED = {"verdict": "inconclusive", "speedup": 1.3, "ci_low": 0.4, "ci_high": 4.0, "floor": 2.2, "noise": 0.6,
             "basis": "paired rounds", "n_a": 3, "n_b": 3}


def test_an_idle_machines_load_is_context_not_the_cause():
    by = claims.disturbance_text(IDLE_ROWS)
    assert by.startswith("a cell's own rounds differed by up to 1.90×")
    assert "on a machine that was not busy, with load up to 1.4, other processes up to 1% of the CPU" in by
    sentence = verdict_sentence(DISTURBED, "a", "b", by, busy=False)
    check_claim(DISTURBED, sentence)
    # the cause first, from the pair's own numbers; the load after it, as context (old: "disturbed (load up to 1.4,
    # other processes up to 1% of the CPU)")
    assert "was disturbed (its interval rests on a paired noise of 1.8× either way a round (one sigma, over 3 rounds)" \
        in sentence
    assert "disturbed (load" not in sentence


def test_a_busy_machines_load_stays_the_cause():
    busy = IDLE_ROWS.assign(other_cpu_share=[0.8, 0.5])
    assert claims.disturbance_text(busy) == "load up to 1.4, other processes up to 80% of the CPU"
    sentence = verdict_sentence(DISTURBED, "a", "b", claims.disturbance_text(busy), busy=True)
    assert "disturbed (load up to 1.4" in sentence and "paired ratio" not in sentence


def test_rounds_all_one_way_are_said_beside_could_not_tell():
    # 05: fused faster in every round (1.27-2.15x) read only "could not tell numba-fused from numba-unfused"
    rows = pd.DataFrame({"variant": ["unfused", "fused"], "backend": ["numba"] * 2, "size_label": ["n"] * 2,
                         "other_cpu_share": [0.01, 0.01], "load_avg_1m": [1.0, 1.0],
                         "round_medians_s": ["[2.7, 4.3, 3.0]", "[2.0, 2.0, 2.0]"]})
    table = pd.DataFrame([{**DISTURBED, "variant": "fused", "backend": "numba", "size_label": "n",
                           "baseline_variant": "unfused", "baseline_backend": "numba"}])
    v = mark_busy(table, rows).iloc[0].to_dict()
    assert [round(x, 2) for x in v["round_ratios"]] == [1.35, 2.15, 1.5]
    sentence = verdict_sentence(v, "unfused", "fused")
    check_claim(v, sentence)
    assert "fused was faster in every one of its 3 rounds (1.35-2.15×)" in sentence
    assert "happen by chance 25% of the time" in sentence


def test_two_runs_whose_rounds_do_not_overlap_say_so():
    rows = pd.DataFrame({"variant": ["k", "k"], "backend": ["numba"] * 2, "size_label": ["n"] * 2,
                         "run_id": ["A", "B"], "round_medians_s": ["[1.0, 1.1, 1.05]", "[2.0, 2.2, 2.1]"]})
    v = {**DISTURBED, "variant": "k", "backend": "numba", "size_label": "n", "speedup": 0.8, "ci_low": 0.6,
         "ci_high": 1.05, "floor": 0.33, "median_a": 1.05, "median_b": 1.3, "basis": "rounds"}
    v = mark_busy(pd.DataFrame([v]), rows).iloc[0].to_dict()
    sentence = verdict_sentence(v, "run A", "run B")
    check_claim(v, sentence)
    assert "every round of run A was faster than every round of run B (1.82-2.20×)" in sentence


def test_no_rerun_hint_prints_an_uncopyable_command():
    for hint in (vd.RERUN_HINT, vd.IDLE_RERUN_HINT, vd.BUSY_RERUN_HINT, claims.DISAGREE_HINT):
        assert "..." not in hint
