"""Issue 39 (tutorial 05): "numba-fused was faster in every one of its 3 rounds (1.24-1.41x)" beside table medians
giving 1.48x. The ratio of two medians over the same rounds lies within those rounds' ratios, so medians outside
say the headlines are taken of other rounds: the paired rounds leave out what the verdict leaves out, and the
sentence says which rounds a headline left out. Figures are those of the run that printed it."""

import json

import pandas as pd
import pytest

from workbench.report.claims import mark_busy, one_way_text
from workbench.report.claims_cause import headline_rounds_text, medians_outside_text, round_ratios

IDS = json.dumps(["r:0", "r:1", "r:2"])
FUSED = {"variant": "numba-fused", "backend": "numba", "size_label": "rows=64 cols=1024", "cell_key": "f",
         "round_medians_s": json.dumps([1.2760e-5, 1.1695e-5, 1.4665e-5]), "round_ids": IDS,
         "round_host_slowdowns": json.dumps([1.0, 1.0004, 1.3114]), "median_s": 1.22275e-5, "other_cpu_share": 0.86}
UNFUSED = {"variant": "numba-unfused", "backend": "numba", "size_label": "rows=64 cols=1024", "cell_key": "u",
           "round_medians_s": json.dumps([1.8048e-5, 1.5937e-5, 1.8169e-5]), "round_ids": IDS,
           "round_host_slowdowns": json.dumps([1.0, 1.0, 1.0048]), "median_s": 1.8048e-5, "other_cpu_share": 0.84}


def test_paired_rounds_leave_out_a_round_its_headline_set_aside():
    ratios = round_ratios(UNFUSED, FUSED, True)
    assert len(ratios) == 2 and ratios == pytest.approx([1.8048 / 1.2760, 1.5937 / 1.1695], rel=1e-6)
    # without ids the rounds pair by order, leaving out the same round
    no_ids = round_ratios({**UNFUSED, "round_ids": None}, {**FUSED, "round_ids": None}, True)
    assert no_ids == pytest.approx(ratios)


def test_headline_says_which_rounds_it_left_out():
    assert headline_rounds_text(FUSED) == "leaves out its round 3 (taken while the host ran slow)"
    assert headline_rounds_text(UNFUSED) == ""


def test_sentence_says_why_the_table_medians_lie_outside_the_rounds():
    table = pd.DataFrame([{"variant": "numba-fused", "backend": "numba", "baseline_variant": "numba-unfused",
                           "baseline_backend": "numba", "size_label": "rows=64 cols=1024"}])
    v = mark_busy(table, pd.DataFrame([UNFUSED, FUSED])).iloc[0].to_dict()
    assert v["headline_b"].startswith("leaves out its round 3") and v["headline_a"] == ""
    v.update(ci_low=0.8, ci_high=2.5, floor=0.6, basis="paired rounds", noise=0.1, n_a=2)
    text = one_way_text(v, "numba-unfused", "numba-fused")
    assert "faster in every one of its 2 rounds (1.36-1.41×; the table's medians give 1.48×, outside" in text
    assert "because numba-fused's headline leaves out its round 3 (taken while the host ran slow)" in text
    # medians within the rounds' range add nothing
    assert medians_outside_text({**v, "table_median_a": 1.39, "table_median_b": 1.0}, 1.36, 1.41, "a", "b") == ""
