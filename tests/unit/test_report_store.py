"""Reports and comparisons against the real SQLite store, and the report/compare commands."""

import json

import pandas as pd
import pytest

from workbench.cli import main
from workbench.report import write_report
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import Store


def fill(store, seed, slowdown=1.0, name="demo"):
    rid = store.new_run(name=name, env_id="env-demo")
    store.add_environment("env-demo", synthetic_environment())
    for row in synthetic_results(rid, seed=seed, slowdown=slowdown).to_dict("records"):
        store.record(row)
    store.set_run_status(rid, "finished", wall_s=3.0)
    return rid


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "results.sqlite")
    s.set_peak("env-demo", "numpy", "bandwidth_gbps", "float64", 20.0, "GB/s", "triad")
    s.set_peak("env-demo", "numpy", "gflops", "float32", 100.0, "GFLOP/s", "gemm")
    s.ids = [fill(s, 1, name="<i>first</i>"), fill(s, 2, slowdown=0.5, name="second")]
    return s


def test_html_from_store_has_environment_and_peaks(store, tmp_path):
    text = write_report(store, ["latest"], tmp_path / "r.html").read_text()
    assert store.ids[1] in text and store.ids[0] not in text
    assert "demo-host" in text and "OMP_NUM_THREADS" in text  # the environment record
    assert "bandwidth_gbps" in text  # measured peaks table
    assert text.count("<svg") == 3  # saxpy and gemm figures, gemm's roofline (its intensity grows)


def test_json_export_imports_into_fresh_store(store, tmp_path):
    path = write_report(store, store.ids, tmp_path / "r.json")
    fresh = Store(tmp_path / "fresh.sqlite")
    added = fresh.import_file(path)
    assert added == {"runs": 2, "environments": 1, "results": 32, "peaks": 2}
    pd.testing.assert_frame_equal(fresh.results(store.ids), store.results(store.ids))
    assert fresh.environment("env-demo") == store.environment("env-demo")


def test_json_from_bare_rows_imports_too(tmp_path):
    df = synthetic_results("run-x")
    path = write_report(df, None, tmp_path / "rows.json")
    fresh = Store(tmp_path / "fresh.sqlite")
    assert fresh.import_file(path)["results"] == len(df)
    back = fresh.results(["run-x"])
    assert list(fresh.runs()["run_id"]) == ["run-x"]
    for col in ("cell_key", "kernel", "variant", "params", "samples_s", "status", "message"):
        assert back[col].fillna("").tolist() == df[col].fillna("").tolist(), col
    pd.testing.assert_series_equal(back["median_s"], df["median_s"], check_dtype=False)


def test_cli_report_formats(store, tmp_path, capsys):
    for fmt in ("html", "md", "json", "csv"):
        out = tmp_path / f"rep.{fmt}"
        assert main(["report", store.ids[0], "--store", str(store.path), "--out", str(out)]) == 0
        assert out.stat().st_size > 0
    assert "wrote" in capsys.readouterr().out
    md = (tmp_path / "rep.md").read_text()
    assert "&lt;i&gt;first&lt;/i&gt;" in md
    out = tmp_path / "explicit.txt"
    assert main(["report", "latest", "--store", str(store.path), "--format", "csv", "--out", str(out)]) == 0
    assert out.read_text().startswith("run_id,")


def test_cli_unknown_run_names_valid_ones(store, tmp_path, capsys):
    assert main(["report", "nope", "--store", str(store.path), "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and store.ids[0] in err
    assert main(["compare", store.ids[0], "nope", "--store", str(store.path)]) == 2
    assert store.ids[1] in capsys.readouterr().err


def test_cli_compare_two_runs(store, capsys):
    assert main(["compare", store.ids[0], store.ids[1], "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert f"speed-up of {store.ids[1]} over {store.ids[0]}" in out
    # one stream a side: faster, but each interval wider than ±50% (not printed: "faster, disturbed")
    assert out.count(" faster, disturbed\n") == 14 and "not comparable" in out
    assert main(["compare", store.ids[0], store.ids[1], "--store", str(store.path), "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    ok = [r for r in recs if r["verdict"] == "faster"]
    assert len(ok) == 14 and all(1.8 < r["speedup"] < 2.2 and r["ci_low"] <= r["speedup"] <= r["ci_high"]
                                  for r in ok)


def test_cli_compare_against_baseline(store, capsys):
    assert main(["compare", "latest", "--store", str(store.path), "--baseline", "numpy@numpy", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    verdicts = {(r["kernel"], r["variant"]): r["verdict"] for r in recs}
    assert verdicts[("saxpy", "numba_parallel")] == "faster" and verdicts[("gemm", "naive")] == "slower"
    assert all(r["baseline_variant"] == "numpy" for r in recs)


def test_cli_missing_store_is_not_created(tmp_path, capsys):
    missing = tmp_path / "typo.sqlite"
    assert main(["report", "--store", str(missing), "--out", str(tmp_path / "x.html")]) == 2
    assert main(["compare", "latest", "--store", str(missing)]) == 2
    assert "no results store" in capsys.readouterr().err and not missing.exists()


def test_markdown_lists_measured_peaks(store, tmp_path):
    text = write_report(store, store.ids, tmp_path / "r.md").read_text()
    assert "## Measured peaks" in text and "bandwidth_gbps" in text
    assert "## Environment env-demo" in text and "demo-host" in text


def test_an_html_report_is_written_as_it_is_rendered_and_is_the_page_html_renders(store, tmp_path, monkeypatch):
    """Issue 38: the page went to the file in pieces of about 1 MB (rendering it whole held the template's
    millions of small strings in one list, then the page, then its bytes); the text is the same."""
    from workbench.core import output_guard
    from workbench.report import render
    from workbench.report.model import build_report

    wrote: list[int] = []
    real = output_guard.atomic_write_chunks

    def spy(path, chunks):
        def counted():
            for c in chunks:
                wrote.append(len(c))
                yield c
        return real(path, counted())

    monkeypatch.setattr(output_guard, "atomic_write_chunks", spy)
    monkeypatch.setattr(render, "html_pieces", lambda report, chunk_chars=1 << 20, real=render.html_pieces:
                        real(report, chunk_chars=4096))
    monkeypatch.setattr("workbench.report.exporters.html_pieces", render.html_pieces)
    out = write_report(store, None, tmp_path / "r.html")
    assert len(wrote) > 3  # pieces, not one page
    page = out.read_text(encoding="utf-8")
    whole = render.html(build_report(store, None))
    strip = lambda t: [ln for ln in t.splitlines() if "Generated " not in ln]  # noqa: E731 — the minute may tick
    assert strip(page) == strip(whole)
    with pytest.raises(ValueError, match="baseline"):  # a bad baseline: nothing written, before any rendering
        write_report(store, None, tmp_path / "bad.html", baseline="nosuch")
    assert not (tmp_path / "bad.html").exists()
