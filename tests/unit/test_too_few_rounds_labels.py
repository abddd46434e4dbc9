"""Issue 39: a pair the slow host left too few rounds at speed to pair reads "could not tell (too few rounds at speed:
1 set aside)" in the tutorials; the report's key findings, `workbench compare` and the speed-up figure's labels passed
no basis to :func:`~workbench.judge.verdict_labels.verdict_label` and read "disturbed" of the same pair. Every place
that turns a verdict into words passes the basis; a real disturbance (paired rounds, as wide) keeps its word."""

from __future__ import annotations

import inspect
import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from workbench.cli.cmd_compare import disturbed_notes, format_table  # noqa: E402
from workbench.judge.compare import speedup_vs_baseline  # noqa: E402
from workbench.judge.few_rounds import too_few_basis_text  # noqa: E402
from workbench.judge.verdict_labels import reads_disturbed, verdict_label, verdict_labels  # noqa: E402
from workbench.report import write_report  # noqa: E402
from workbench.report.findings import key_findings  # noqa: E402
from workbench.report.plots.speedup import plot_speedup  # noqa: E402

LABEL = "could not tell (too few rounds at speed: 1 set aside)"


def _row(variant: str, medians: list[float], slow: list[float], library: int = 0) -> dict:
    kept = [m for m, s in zip(medians, slow, strict=True) if s == 1.0]
    return {"run_id": "R", "env_id": "e", "device": "cpu", "cell_key": f"k-{variant}", "kernel": "k",
            "variant": variant, "backend": "numpy", "dtype": "float32", "params": json.dumps({"n": 2048}),
            "size": 2048, "size_label": "n=2048", "mode": "eager", "cache": "hot", "status": "ok", "library": library,
            "noisy": False, "samples_s": json.dumps(medians), "round_medians_s": json.dumps(medians),
            "round_ids": json.dumps([f"s:{i}" for i in range(len(medians))]),
            "round_host_slowdowns": json.dumps(slow), "timing_mode": "host", "median_s": float(np.median(kept)),
            "q1_s": min(kept), "q3_s": max(kept), "iqr_s": max(kept) - min(kept), "load_avg_1m": 0.5,
            "other_cpu_share": 0.0, "message": ""}


@pytest.fixture
def rows() -> pd.DataFrame:
    """A reference and a contender ~1.3x faster whose third round both took while the host ran slow (1.4x): set
    aside on both sides, 2 shared rounds left at speed and no group to lend a typical spread: judged unpaired on an
    assumed drift, its interval past ±50% with no disturbance at all (neither cell's quartiles apart, load 0.5)."""
    slow = [1.0, 1.0, 1.4]
    return pd.DataFrame([_row("lib", [2e-3, 2.02e-3, 3.2e-3], slow, library=1),
                         _row("fast", [2e-3 / 1.3, 2.02e-3 / 1.313, 3.0e-3], slow)])


def test_the_rows_are_a_too_few_pair_past_the_floor(rows):
    v = speedup_vs_baseline(rows).query("variant == 'fast'").iloc[0]
    assert v["basis"] == too_few_basis_text(2, 1) and v["floor"] >= 0.5 and v["verdict"] == "inconclusive"
    assert not reads_disturbed(v["floor"], v["basis"]) and reads_disturbed(v["floor"], "paired rounds")


def test_the_basis_is_a_required_argument():
    assert inspect.signature(verdict_label).parameters["basis"].default is inspect.Parameter.empty
    table = pd.DataFrame({"verdict": ["inconclusive", "faster", "inconclusive"], "floor": [0.62, 0.62, 0.12],
                          "basis": [too_few_basis_text(2, 1), too_few_basis_text(2, 1), "paired rounds"]})
    assert verdict_labels(table) == [LABEL, "faster, amount unknown (too few rounds at speed: 1 set aside)",
                                     "inconclusive (±12%)"]
    assert verdict_labels(table, past_floor_only=True)[2] == "inconclusive"
    assert verdict_labels(table.drop(columns="basis"))[:2] == ["disturbed", "faster, disturbed"]


def test_key_findings_say_too_few_rounds_not_disturbed(rows, tmp_path):
    f = key_findings(rows).findings[0]
    assert f.verdict_shown == LABEL and f.verdict_text == LABEL
    assert f.caveats[0]["text"] == "too few rounds at speed (1 set aside)"
    said = " ".join([f.settle, *(c["text"] + c["detail"] for c in f.caveats)])
    assert "disturbed" not in said and "assumed drift" in said and "--rounds 4" in said
    # the HTML report's key findings, as a reader meets them
    html = write_report(rows, None, tmp_path / "r.html").read_text(encoding="utf-8")
    head = html[html.index('id="key-findings"'):html.index('id="contents"')]
    assert LABEL in head and "disturbed" not in head
    # a pair as wide on paired rounds is disturbed, and says so
    wide = speedup_vs_baseline(rows).assign(basis="paired rounds")
    g = key_findings(rows, judged={("k", ("lib", "numpy")): wide}).findings[0]
    assert g.verdict_shown == "disturbed" and g.caveats[0]["text"].startswith("disturbed")


def test_compare_table_and_its_notes_say_too_few_rounds(rows):
    table = speedup_vs_baseline(rows).query("verdict != 'baseline'")
    table = table.drop(columns=["size"]).rename(columns={"size_label": "size"})   # as `workbench compare` prints it
    printed = format_table(table)
    assert LABEL in printed and "disturbed" not in printed
    notes = " ".join(disturbed_notes(table, rows))
    assert "1 comparison(s) left too few rounds at speed to pair" in notes and "disturbed" not in notes
    assert "disturbed" in format_table(table.assign(basis="paired rounds"))


def test_speedup_figure_labels_say_too_few_rounds(rows):
    fig = plot_speedup(rows)
    try:
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    finally:
        plt.close(fig)
    assert LABEL in texts and not any("disturbed" in t for t in texts)


def test_medians_apart_on_too_few_rounds_are_not_called_a_disturbed_comparison():
    from workbench.report.claims_cause import apart_undecided_text

    v = {"verdict": "inconclusive", "speedup": 1.2, "ci_low": 0.5, "ci_high": 2.9, "floor": 0.62, "noise": 0.15,
         "basis": too_few_basis_text(2, 1), "n_a": 2, "n_b": 2, "median_a": 2e-3, "median_b": 1e-3,
         "round_ratios": [0.8, 1.9]}
    said = apart_undecided_text(v, "lib", "fast")
    assert "a comparison on too few rounds at speed reads no ratio" in said and "disturbed" not in said, said
    paired = apart_undecided_text({**v, "basis": "paired rounds"}, "lib", "fast")
    assert "a disturbed comparison reads no ratio" in paired


def test_a_summary_label_says_too_few_rounds_not_disturbed():
    # 10's and 07's summaries (report.beyond_noise.direction_said) read ", disturbed" of a pair whose interval was
    # wide only because too few rounds were left at speed, beside verdict lines reading "could not tell (too few ...)"
    from workbench.report.beyond_noise import FEW_ROUNDS, UNDECIDED, direction_said, disturbed_why, label_word

    few = too_few_basis_text(2, 1)
    calm = [{"median_s": 1.0, "iqr_s": 0.05}, {"median_s": 2.0, "iqr_s": 0.1}]
    wide_cell = [{"median_s": 1.0, "iqr_s": 0.6, "variant": "numba"}, {"median_s": 2.0, "iqr_s": 0.1}]
    undecided = {"verdict": "inconclusive", "speedup": 1.1, "ci_low": 0.5, "ci_high": 2.4, "floor": 0.8}
    one_way = {"verdict": "faster", "speedup": 3.0, "ci_low": 1.3, "ci_high": 7.0, "floor": 0.8}
    assert direction_said({**undecided, "basis": few}, calm) == f"{UNDECIDED}, {FEW_ROUNDS}"
    assert direction_said({**one_way, "basis": few}, calm) == f"faster, {FEW_ROUNDS}"
    assert label_word(f"faster, {FEW_ROUNDS}") != "disturbed"
    assert disturbed_why({**one_way, "basis": few}, calm) == ""
    # a real disturbance keeps its word: paired rounds as wide, or a disturbed cell whatever the basis
    assert direction_said({**undecided, "basis": "paired rounds"}, calm) == f"{UNDECIDED}, disturbed"
    assert direction_said({**one_way, "basis": "paired rounds"}, calm) == "faster, disturbed"
    assert direction_said({**one_way, "basis": few}, wide_cell) == "faster, disturbed"
