"""Issue 39, readers of tutorials 01, 05 and 07 beside a busy core: one rule for a "disturbed" cell across figure,
table and sentence. A cell whose quartiles lie half its median or more apart is a cross in the figure ("no value to
read"); the summary table prints no median or rate for it; a comparison resting on it reads "disturbed" (no
"faster", no ratio, no cause, the rerun hint); the legend counts the crosses apart from the hollow points and says
so; and no series' marker looks like the cross."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.backends.registry import runtimes
from workbench.judge.disturbed import cell_disturbed, cells_disturbed
from workbench.report import plots
from workbench.report.claims import (
    DISTURBED,
    check_claim,
    mark_busy,
    may_state_cause,
    reading,
    rests_on_disturbed,
    shown_verdicts,
    verdict_sentence,
)
from workbench.report.claims_rows import quartiles_wide
from workbench.report.plots.frame import DISTURBED_LABEL
from workbench.report.plots.series import disturbed_mask
from workbench.report.sample_data import synthetic_results
from workbench.report.styles import CROSS_MARKERS, style_map
from workbench.report.summary import summary_table


def _pair(q_b: tuple[float, float], iqr_b: float) -> pd.DataFrame:
    """numpy (calm) and numba at one size; numba's quartiles ``q_b`` and IQR ``iqr_b`` around a median of 1.35."""
    return pd.DataFrame({"variant": ["numpy", "numba"], "backend": ["numpy", "numba"], "size_label": ["n=4096"] * 2,
                         "median_s": [1.0, 1.35], "iqr_s": [0.05, iqr_b], "q1_s": [0.97, q_b[0]],
                         "q3_s": [1.02, q_b[1]], "other_cpu_share": [0.5, 0.5], "load_avg_1m": [3.0, 3.0]})


#: 01 beside a busy core: "numpy @ numpy was faster: numba @ numba took 1.35× its time (interval 1.01×-1.81×)",
#: floor ±34%: settled by its paired rounds, on a cell the figure crossed out.
SLOWER = {"verdict": "slower", "speedup": 0.74, "ci_low": 0.55, "ci_high": 0.99, "floor": 0.34, "variant": "numba",
          "backend": "numba", "size_label": "n=4096", "baseline_variant": "numpy", "baseline_backend": "numpy"}


def test_one_cell_rule_decides_the_cross_the_table_and_the_pair():
    # the IQR narrow, the quartiles wide: the figure read the IQR only, the sentences the wider of the two
    rows = _pair((0.9, 1.6), 0.3)
    assert cell_disturbed(1.35, 0.3, 0.9, 1.6) and quartiles_wide(rows.iloc[1].to_dict())
    assert disturbed_mask(rows).tolist() == [False, True]
    assert cells_disturbed(rows["median_s"], rows["iqr_s"], rows["q1_s"], rows["q3_s"]).tolist() == [False, True]
    said = summary_table(rows.assign(kernel="saxpy", status="ok", gbps=[20.0, 14.8]))
    assert said["median ± IQR"].str.contains("disturbed").tolist() == [False, True]
    # no median and no rate as a value where the figure says "no value to read"
    assert said.loc[1, "GB/s"] == "" and "1.35" not in said.loc[1, "median ± IQR"]
    assert not cell_disturbed(float("nan"), 1.0) and not cell_disturbed(1.0, None, None, None)


def test_a_settled_verdict_resting_on_a_disturbed_cell_reads_disturbed():
    row = mark_busy(pd.DataFrame([SLOWER]), _pair((0.8, 1.7), 0.9)).iloc[0].to_dict()
    assert rests_on_disturbed(row) and row["disturbed_cells"] == "numba @ numba"
    sentence = verdict_sentence(row, "numpy @ numpy", "numba @ numba")
    check_claim(row, sentence)
    assert reading(row) == "inconclusive" and not may_state_cause(row)
    assert "was faster" not in sentence and "×" not in sentence and "interval" not in sentence
    assert DISTURBED in sentence and "a disturbed cell (numba @ numba's cell)" in sentence
    assert "a cell reads disturbed where" in sentence
    assert "no value to read" in sentence and "otherwise idle" in sentence   # its rows saw 50% other load
    shown = shown_verdicts(pd.DataFrame([row])).iloc[0]
    assert shown["verdict"] == "disturbed" and pd.isna(shown["speedup"]) and pd.isna(shown["ci_high"])
    # two runs of one variant: the name does not tell the sides apart, so the sentence does not use it (07)
    runs = pd.concat([_pair((0.8, 1.7), 0.9).iloc[[1]], _pair((1.3, 1.4), 0.1).iloc[[1]]], ignore_index=True)
    pair = mark_busy(pd.DataFrame([{**SLOWER, "baseline_variant": "numba", "baseline_backend": "numba"}]), runs)
    said = verdict_sentence(pair.iloc[0].to_dict(), "run A", "run B")
    assert "a disturbed cell (one of its cells)" in said and "numba @ numba" not in said
    # the same verdict on calm cells is untouched
    row = mark_busy(pd.DataFrame([SLOWER]), _pair((1.3, 1.4), 0.1)).iloc[0].to_dict()
    assert not rests_on_disturbed(row) and reading(row) == "slower"
    sentence = verdict_sentence(row, "numpy @ numpy", "numba @ numba")
    check_claim(row, sentence)
    assert sentence.startswith("numpy @ numpy was faster:") and DISTURBED not in sentence
    assert shown_verdicts(pd.DataFrame([row])).iloc[0]["verdict"] == "slower"


def test_the_table_keeps_the_direction_its_sentence_gives_of_a_disturbed_cell():
    # 01: "numpy @ numpy was faster, the amount not readable" beside a table reading plain "disturbed"; README says
    # such a row prints "slower, disturbed" in tables too. numba's quartiles (1.1, 1.9) all above numpy's (0.97, 1.02)
    row = mark_busy(pd.DataFrame([SLOWER]), _pair((1.1, 1.9), 0.8)).iloc[0].to_dict()
    assert rests_on_disturbed(row) and row["quartiles_apart"] == "slower"
    assert "numpy @ numpy was faster" in verdict_sentence(row, "numpy @ numpy", "numba @ numba")
    shown = shown_verdicts(pd.DataFrame([row])).iloc[0]
    assert shown["verdict"] == "slower, disturbed"
    assert pd.isna(shown["speedup"]) and pd.isna(shown["ci_low"]) and pd.isna(shown["ci_high"])   # still no number
    # quartiles overlapping: no direction, in the table as in the sentence
    row = mark_busy(pd.DataFrame([SLOWER]), _pair((0.8, 1.7), 0.9)).iloc[0].to_dict()
    assert shown_verdicts(pd.DataFrame([row])).iloc[0]["verdict"] == "disturbed"


def test_a_sentence_settling_a_pair_on_a_disturbed_cell_fails_its_check():
    row = mark_busy(pd.DataFrame([SLOWER]), _pair((0.8, 1.7), 0.9)).iloc[0].to_dict()
    with pytest.raises(Exception, match="disturbed"):
        check_claim(row, "numpy @ numpy was faster: numba @ numba took 1.35× its time (interval 1.01×-1.81×)")


def test_the_legend_counts_the_crosses_apart_from_the_hollow_points_and_says_so():
    df = synthetic_results(with_failures=False)
    rows = df[(df["kernel"] == "saxpy") & (df["variant"] == "numpy")].sort_values("size").reset_index(drop=True)
    med = rows["median_s"]
    rows = rows.assign(q1_s=med * 0.97, q3_s=med * 1.03, iqr_s=med * 0.06, rel_spread=0.06, noisy=True)
    rows.loc[1, ["q1_s", "q3_s", "iqr_s"]] = [med[1] * 0.7, med[1] * 1.3, med[1] * 0.6]
    fig = plots.plot_metric(rows, "gbps")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    cross = next(x for x in labels if x.startswith(DISTURBED_LABEL))
    hollow = next(x for x in labels if x.startswith("hollow"))
    assert "(1)" in cross and "not among the hollow ones" in cross and "(3)" in hollow


def test_no_series_marker_looks_like_the_disturbed_cross():
    # 01: vulkan's hollow filled "X" read as the legend's "x: disturbed cell"
    keys = [f"v @ {r.name}" for r in runtimes()] + ["wgsl @ vulkan", "triton @ triton-interp", "k @ somethingnew"]
    assert not {s.marker for s in style_map(keys).values()} & CROSS_MARKERS
    assert np.all([r.marker not in CROSS_MARKERS for r in runtimes() if r.marker])


def test_the_run_names_its_disturbed_cells_and_counts_them_as_the_legend_does():
    # 01: three crosses in the figure, no sentence naming them; "10 of 10 cells are marked noisy" beside a legend
    # of 7 hollow and 3 crossed
    from workbench.report.claims import disturbed_cells_text, noisy_count_text

    calm = _pair((1.3, 1.4), 0.1).assign(status="ok")
    assert disturbed_cells_text(calm) == ""
    rows = pd.concat([calm, _pair((0.8, 1.7), 0.9).assign(status="ok", size_label="n=65536")], ignore_index=True)
    text = disturbed_cells_text(rows)
    assert text.startswith("numba @ numba at n=65536 reads disturbed") and "an x at each quartile" in text
    assert "no point at its median" in text
    assert "other processes up to 50% of the CPU" in text and "otherwise idle" in text
    said = noisy_count_text(rows, pd.Series(True, index=rows.index))
    assert said == ("4 of 4 cells are marked noisy (the figure's 3 hollow points and its 1 disturbed cell, x's at its "
                    "quartiles)")


def test_tutorial_05s_table_reads_a_crossed_cell_disturbed_with_no_time_or_rate():
    # 05: Fig 1 crossed portable-fused/-unfused out while its table printed 583 µs / 669 µs and GB/s, unmarked
    from types import SimpleNamespace

    from tests.unit.test_tutorial_10_11_sentences import helpers

    rows = _pair((0.8, 1.7), 0.9).assign(status="ok", mode="eager", gbps=[20.0, 14.8], noisy=True,
                                         noise_note="other processes used 50% of the CPU")
    out = helpers("05_memory_bound_fusion")["time_vs_unfused"](SimpleNamespace(df=rows))
    assert out["median time"].tolist()[1] == "disturbed" and out["GB/s (median)"].tolist()[1] == ""
    assert out["noisy"].tolist()[1].startswith("disturbed (the figure's x)") and out["median time"][0] != "disturbed"
