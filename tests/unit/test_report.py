"""Reports: self-contained escaped HTML with embedded figures; Markdown, JSON and CSV that round-trip."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from workbench.core.record import RESULT_COLUMNS
from workbench.report import summary_table, write_report
from workbench.report.data import resolve_run_ids
from workbench.report.render import md_table
from workbench.report.sample_data import synthetic_results
from workbench.store.database import EXPORT_FORMAT

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def df():
    d = pd.concat([synthetic_results("run-a", seed=1), synthetic_results("run-b", seed=2, slowdown=0.8)],
                  ignore_index=True)
    evil = d["kernel"] == "saxpy"
    d.loc[evil, "kernel"] = EVIL
    d.loc[d["status"] == "incorrect", "message"] = 'max error "big" <b>bold</b> & more'
    d.loc[d["status"] == "unsupported", "traceback"] = "Traceback <most recent call last>"
    return d


@pytest.fixture(scope="module")
def html_text(df, tmp_path_factory):
    path = write_report(df, ["run-a", "run-b"], tmp_path_factory.mktemp("r") / "report.html")
    return path.read_text(encoding="utf-8")


def test_html_is_self_contained(html_text):
    refs = re.findall(r'(?:src|href)\s*=\s*["\']?([^"\'\s>]+)', html_text, flags=re.I)
    assert refs, "expected embedded figures"
    for ref in refs:
        assert ref.startswith("#"), ref  # figures are inline SVG: their only references are internal ones
    lower = html_text.lower()
    for bad in ('src="http', "src='http", 'href="http', "href='http", "//cdn", "@import", "url(http", "<link"):
        assert bad not in lower
    assert "<script" not in lower  # no JavaScript at all, and user strings cannot inject any
    assert "<style>" in html_text


def test_html_escapes_user_strings(html_text):
    assert EVIL not in html_text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html_text
    assert "<b>bold</b>" not in html_text and "&lt;b&gt;bold&lt;/b&gt;" in html_text
    assert "Traceback &lt;most recent call last&gt;" in html_text


def test_html_embeds_svg_figures_and_sections(html_text):
    # per kernel one time / % of ceiling figure; gemm's intensity grows with size, so it has a roofline;
    # the two series' memories are alike, so no memory plot
    assert html_text.count("<svg") == 3
    assert "<?xml" not in html_text and "<metadata>" not in html_text
    for section in ('id="key-findings"', 'id="contents"', 'id="summary"', 'id="results"', 'id="failures"',
                    'id="plots"', 'id="environment"'):
        assert section in html_text
    assert "run-a" in html_text and "run-b" in html_text
    assert "incorrect: 2" in html_text and "unsupported: 2" in html_text
    assert "faster" in html_text and "slower" in html_text  # speed-up verdicts per kernel


def test_markdown_tables(df, tmp_path):
    text = write_report(df, ["run-a"], tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Results" in text and "## Cells that did not pass" in text and "## Speed-up" in text
    assert EVIL not in text and "&lt;script&gt;" in text
    table = text.split("## Results\n")[1].split("\n\n")[0].strip().splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header == list(summary_table(df).columns)
    assert len(table) == 2 + 16  # header, separator, one line per cell of run-a
    assert all(line.count(" | ") == len(header) - 1 for line in table[2:])
    assert "run-b" not in text


def test_md_table_escapes_pipes_and_newlines():
    out = md_table(pd.DataFrame({"a": ["x|y"], "b": ["line1\nline2"]}))
    assert out.splitlines()[2] == "| x\\|y | line1 line2 |"


def test_csv_round_trip(df, tmp_path):
    path = write_report(df, None, tmp_path / "r.csv")
    back = pd.read_csv(path, keep_default_na=True)
    assert list(back.columns) == list(RESULT_COLUMNS)
    assert len(back) == len(df)
    for col in ("run_id", "kernel", "variant", "params", "samples_s", "status"):
        assert back[col].fillna("").tolist() == df[col].fillna("").tolist()
    np.testing.assert_allclose(back["median_s"], df["median_s"], rtol=1e-12)


def test_json_export_round_trip(df, tmp_path):
    path = write_report(df, ["run-b"], tmp_path / "r.json")
    doc = json.loads(path.read_text())
    assert doc["format"] == EXPORT_FORMAT and set(doc) >= {"results", "runs", "environments", "peaks"}
    back = pd.DataFrame(doc["results"])
    want = df[df["run_id"] == "run-b"].reset_index(drop=True)
    assert list(back.columns) == list(want.columns) and len(back) == len(want)
    assert back["samples_s"].tolist() == want["samples_s"].tolist()
    np.testing.assert_allclose(back["gbps"].astype(float), want["gbps"].astype(float), rtol=1e-12)


def test_format_selection_and_errors(df, tmp_path):
    assert write_report(df, None, tmp_path / "x.out", format="csv").read_text().startswith("run_id,")
    with pytest.raises(ValueError, match="format"):
        write_report(df, None, tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="run-a"):
        write_report(df, ["nope"], tmp_path / "x.csv")
    assert resolve_run_ids(df, "latest") == ["run-b"]


def test_summary_table_formats(df):
    t = summary_table(df[df["run_id"] == "run-a"])
    assert len(t) == 16
    row = t[(t["variant"] == "numpy") & (t["size"] == "n=4096")].iloc[0]
    assert " ± " in row["median ± IQR"] and row["median ± IQR"].endswith("s")
    assert row["timer"] == "sync+perf_counter" and row["peak memory"].endswith("KiB")
    failed = t[t["status"] == "unsupported"].iloc[0]
    assert failed["median ± IQR"] == "" and failed["GB/s"] == ""


def _with_flags(df):
    """Rows as the harness writes them now: one cell above 100% of its ceiling, one noisy."""
    from workbench.roofs.ceilings import AUTO_PROBE

    d = df[df["run_id"] == "run-a"].copy()
    hot = (d["kernel"] == "gemm") & (d["variant"] == "numpy") & (d["size_label"] == "m=64 n=64 k=64")
    d.loc[hot, "pct_peak_flops"] = 298.0
    d.loc[hot, "peak_note"] = "298% of the measured (automatic probe) GFLOP/s ceiling: the probe was short"
    d.loc[hot, "ceiling_source"] = AUTO_PROBE
    return d


def test_summary_marks_noisy_cells_and_explains_percentages_above_100(df):
    t = summary_table(_with_flags(df))
    assert list(t.columns)[-1] == "notes" and "ceiling" in t.columns
    hot = t[(t["variant"] == "numpy") & (t["size"] == "m=64 n=64 k=64")].iloc[0]
    assert hot["% peak"] == "298 ⚠" and "298% of the measured (automatic probe) GFLOP/s" in hot["notes"]
    assert hot["ceiling"] == "100 GFLOP/s (probe)"
    noisy = t[t["median ± IQR"].str.startswith("~ ")]
    assert len(noisy) >= 1 and noisy["notes"].str.contains("noisy: spread").all()
    quiet = t[(t["status"] == "ok") & ~t["median ± IQR"].str.startswith("~")]
    assert (quiet["notes"] == "").sum() >= 1


def test_old_rows_fall_back_to_spread_and_work_out_the_cache_note(df):
    d = df[df["run_id"] == "run-a"].drop(columns=["noisy", "noise_note", "peak_note", "ceiling_source",
                                                  "ceiling_gbps", "ceiling_gflops"])
    d.loc[d["bound"] == "memory-bound", "pct_peak_bw"] = 436.0  # a merged report's figure from another machine
    envs = {"env-demo": {"host": {"last_level_cache_bytes": 32 * 2**20}}}
    t = summary_table(d, envs)
    small = t[(t["variant"] == "numpy") & (t["size"] == "n=4096")].iloc[0]
    assert small["% peak"] == "436 ⚠" and "fits in the 32 MiB last-level cache" in small["notes"]
    big = t[(t["variant"] == "numpy") & (t["size"] == "n=4194304")].iloc[0]
    assert "exceeds the 32 MiB last-level cache" in big["notes"]
    spread = pd.to_numeric(d["rel_spread"]) > 0.10
    assert t["median ± IQR"].str.startswith("~").sum() == int((spread & (d["status"] == "ok")).sum())


def test_html_marks_noise_and_peaks_where_users_look(df, tmp_path):
    text = write_report(_with_flags(df), None, tmp_path / "flags.html").read_text(encoding="utf-8")
    assert 'class="noisy"' in text and 'title="noisy: spread' in text
    assert "measured cells were noisy" in text
    assert 'title="298% of the measured (automatic probe) GFLOP/s ceiling' in text
    assert "cells are above 100% of a ceiling" in text and "Ceilings behind % of peak" in text
    assert ".verdict-same" in text  # the neutral verdict has its colour
    md = write_report(_with_flags(df), None, tmp_path / "flags.md").read_text(encoding="utf-8")
    assert "measured cells were noisy" in md and "298 ⚠" in md


def test_verdict_counts_order_and_same():
    from workbench.report.summary import verdict_counts

    assert verdict_counts(["same", "slower", "baseline", "faster", "same", "ambiguous"]) == {
        "faster": 1, "same": 2, "slower": 1, "ambiguous": 1}
