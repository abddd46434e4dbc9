"""A reference whose time is off its own other evidence is flagged where its speed-ups are shown."""

from __future__ import annotations

import json

from workbench.report.findings import key_findings, reference_anomaly
from workbench.report.sample_data import synthetic_results


def _gemm_ref(df, size):
    return (df["kernel"] == "gemm") & (df["variant"] == "numpy") & (df["size_label"] == size)


def test_a_sane_reference_is_not_flagged():
    df = synthetic_results()
    for _, r in df[(df["kernel"] == "gemm") & (df["variant"] == "numpy")].iterrows():
        assert reference_anomaly(df, r) is None


def test_a_smaller_size_slower_than_a_larger_one_is_flagged_in_the_findings():
    df = synthetic_results()
    big = float(df.loc[_gemm_ref(df, "m=256 n=256 k=256"), "median_s"].iloc[0])
    df.loc[_gemm_ref(df, "m=128 n=128 k=128"), "median_s"] = 20 * big  # 10,461 µs at 128³ beside 45 µs
    why = reference_anomaly(df, df[_gemm_ref(df, "m=128 n=128 k=128")].iloc[0])
    assert why and "off its own other sizes" in why
    kf = key_findings(df)
    flagged = [f for f in kf.findings if f.kernel == "gemm" and f.size == "m=128 n=128 k=128"]
    assert flagged and any(c["text"] == "⚠ reference time off" for c in flagged[0].caveats)


def test_rounds_that_disagree_and_another_run_on_the_same_machine_are_flagged():
    df = synthetic_results()
    row = df[_gemm_ref(df, "m=64 n=64 k=64")].iloc[0].copy()
    row["round_medians_s"] = json.dumps([1e-5, 1e-3])
    assert "rounds disagree" in reference_anomaly(df, row)
    other = synthetic_results(run_id="run-2", slowdown=10.0)
    both = synthetic_results().__class__(list(df.to_dict("records")) + list(other.to_dict("records")))
    ref = both[_gemm_ref(both, "m=64 n=64 k=64") & (both["run_id"] == "run-demo")].iloc[0]
    assert "in run run-2 on the same machine" in reference_anomaly(both, ref)


def test_a_row_above_its_ceiling_keeps_its_size_label_and_says_which_ceiling():
    df = synthetic_results()
    hot = (df["kernel"] == "saxpy") & (df["size_label"] == "n=4096")  # whichever is fastest
    df.loc[hot, "pct_peak_bw"] = 400.0
    found = [f for f in key_findings(df).findings if f.kernel == "saxpy" and f.size_class == "small"]
    assert found and found[0].size == "n=4096"
    assert any(c["text"].startswith("⚠ above its ceiling") for c in found[0].caveats)


def test_the_ceiling_summary_explains_nothing_away():
    from workbench.report.summary import peak_summary

    df = synthetic_results()
    ok = df["status"] == "ok"
    df.loc[ok & (df["kernel"] == "saxpy"), "pct_peak_bw"] = 300.0
    df.loc[ok & (df["kernel"] == "gemm") & (df["variant"] == "naive"), "status"] = "implausible"
    text = " ".join(peak_summary(df))
    assert "cells are above 100% of a ceiling" in text and "no measured explanation" in text
    assert "3 cells are implausible" in text
    assert "most often a working set that fits" not in text


def test_the_speed_up_table_flags_a_reference_time_that_is_off():
    from workbench.report.summary import speedup_table

    df = synthetic_results()
    ok = df[df["status"] == "ok"]
    assert "reference" not in speedup_table(ok[ok["kernel"] == "gemm"], "numpy").columns
    big = float(df.loc[_gemm_ref(df, "m=256 n=256 k=256"), "median_s"].iloc[0])
    df.loc[_gemm_ref(df, "m=128 n=128 k=128"), "median_s"] = 20 * big
    ok = df[df["status"] == "ok"]
    t = speedup_table(ok[ok["kernel"] == "gemm"], "numpy")
    flagged = t[t["reference"] != ""]
    assert list(flagged["size"]) == ["m=128 n=128 k=128"] and flagged["reference"].str.startswith("⚠ ").all()
