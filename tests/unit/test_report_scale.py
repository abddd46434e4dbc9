"""A report's work grows with its rows, not with rows times references (issue 24 scale): baselines are
picked without filtering a frame per row, each reference series is indexed once and each of its size
trends fitted once, and the rows the kernel sections judged are not judged again for the key findings.
Counted, not timed; the answers stay those of the plain functions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.judge import compare as stats_compare
from workbench.report import findings, model
from workbench.report.data import ReportData
from workbench.report.findings import key_findings, reference_anomaly
from workbench.report.reference_checks import ReferenceChecks
from workbench.report.sample_data import synthetic_results


def _runs(n: int, **kw) -> pd.DataFrame:
    return pd.concat([synthetic_results(run_id=f"run-{i}", seed=i, **kw) for i in range(n)], ignore_index=True)


def _bool_filters(monkeypatch) -> list[int]:
    """Counts DataFrame[boolean mask] calls (a frame filtered)."""
    calls = [0]
    original = pd.DataFrame.__getitem__

    def counting(self, key):
        if isinstance(key, (pd.Series, np.ndarray)) and key.dtype.kind == "b":
            calls[0] += 1
        return original(self, key)

    monkeypatch.setattr(pd.DataFrame, "__getitem__", counting)
    return calls


@pytest.mark.parametrize("baseline", [(None, None), ("numpy", None), (None, "numpy"), ("numpy", "numpy")])
def test_baselines_are_picked_without_a_frame_filter_per_row(monkeypatch, baseline):
    small, large = _runs(1), _runs(6)
    calls = _bool_filters(monkeypatch)
    pairs_small, _ = stats_compare.baseline_pairs(small, *baseline)
    n_small, calls[0] = calls[0], 0
    pairs_large, _ = stats_compare.baseline_pairs(large, *baseline)
    assert len(pairs_large) > 5 * len(pairs_small) > 0
    assert calls[0] == n_small  # the same few filters (the ok rows, the library variants) at any size


def test_baseline_pairs_pick_the_rows_own_backend_else_the_first_backend_by_name():
    rows = [{"run_id": "r", "kernel": "k", "dtype": "float32", "params": "n=1", "cache": "hot", "status": "ok",
             "variant": v, "backend": b, "library": lib, "median_s": 1e-3}
            for v, b, lib in [("lib", "zeta", 1), ("lib", "alpha", 1), ("fast", "zeta", 0), ("fast", "beta", 0)]]
    pairs, _ = stats_compare.baseline_pairs(pd.DataFrame(rows))
    picked = {(r["variant"], r["backend"]): (b["variant"], b["backend"]) for r, b in pairs}
    assert picked == {("lib", "zeta"): ("lib", "zeta"), ("lib", "alpha"): ("lib", "alpha"),
                      ("fast", "zeta"): ("lib", "zeta"), ("fast", "beta"): ("lib", "alpha")}
    assert all(b.name in (0, 1) for _, b in pairs)  # the baseline is the frame's own row (its index kept)


def test_each_size_trend_is_fitted_once_per_series_and_run(monkeypatch):
    df = _runs(3)
    ref = (df["kernel"] == "gemm") & (df["variant"] == "numpy")
    # one reference size far off its other sizes in run-1
    bad = ref & (df["run_id"] == "run-1") & (df["size_label"] == "m=128 n=128 k=128")
    df.loc[bad, "median_s"] = 50 * df.loc[ref, "median_s"].max()
    df.loc[df["run_id"] == "run-1", "env_id"] = "env-other"  # no other run on its machine to compare with
    fits = [0]
    original = np.triu_indices

    def counting(*a, **kw):
        fits[0] += 1
        return original(*a, **kw)

    monkeypatch.setattr(np, "triu_indices", counting)
    checks = ReferenceChecks(df)
    answers = {i: checks.anomaly(r) for i, r in df[ref].iterrows()}
    assert fits[0] == 3  # one fit per run of the gemm reference series, however many sizes ask
    flagged = [i for i, why in answers.items() if why]
    assert flagged == list(df.index[bad]) and "off its own other sizes" in answers[flagged[0]]
    monkeypatch.setattr(np, "triu_indices", original)
    assert all(reference_anomaly(df, df.loc[i]) == why for i, why in answers.items())  # the one-off form agrees


def test_the_reference_of_another_run_on_the_same_machine_is_found_through_the_index():
    df = pd.concat([synthetic_results(run_id="run-a"), synthetic_results(run_id="run-b", slowdown=10.0)],
                   ignore_index=True)
    checks = ReferenceChecks(df)
    key = ("gemm", "numpy", "numpy", str(df["dtype"].iloc[0]))
    params = df.loc[(df["kernel"] == "gemm") & (df["variant"] == "numpy"), "params"].iloc[0]
    ref = checks.first_row(key, params, "run-a")
    assert ref is not None and ref["run_id"] == "run-a" and ref["params"] == params
    assert "in run run-b on the same machine" in checks.anomaly(ref)
    assert checks.first_row(key, params, "no-such-run") is None and checks.first_row(key, None, "run-a") is None


def test_key_findings_reuse_the_kernel_sections_judgements(monkeypatch):
    df = _runs(2)
    data = ReportData(df, run_ids=["run-0", "run-1"])
    plain = key_findings(df)
    judged_calls = [0]
    original = stats_compare.speedup_vs_baseline

    def counting(*a, **kw):
        judged_calls[0] += 1
        return original(*a, **kw)

    for module in (model, findings):
        monkeypatch.setattr(module, "speedup_vs_baseline", counting)
    judged: dict = {}
    kernels = model.kernel_sections(data, figures=False, judged=judged)
    n_sections = judged_calls[0]
    assert n_sections == len(kernels) == len(judged) > 1
    reused = key_findings(df, judged=judged)
    assert judged_calls[0] == n_sections  # no kernel's rows judged again, for either run
    assert reused == plain


def test_per_row_passes_read_rows_as_dicts_not_series(monkeypatch):
    """The passes over every row (notes, noise marks, caveats, the compact tables) never build a row Series
    (one per row was most of a large report's time); their answers are unchanged."""
    from workbench.report.caveats import report_caveats
    from workbench.report.plots import noisy_mask
    from workbench.report.row_notes import row_notes
    from workbench.report.tables import pivot

    df = _runs(2)
    before = (row_notes(df), noisy_mask(df), report_caveats(df), pivot(df[df["kernel"] == "gemm"], ("numpy", "numpy")))

    def no_series(self):
        raise AssertionError("a row Series was built")

    monkeypatch.setattr(pd.DataFrame, "iterrows", no_series)
    after = (row_notes(df), noisy_mask(df), report_caveats(df), pivot(df[df["kernel"] == "gemm"], ("numpy", "numpy")))
    assert after[0].equals(before[0]) and (after[1] == before[1]).all() and after[2:] == before[2:]
    assert len(after[3]["rows"]) == df[df["kernel"] == "gemm"][["run_id", "params"]].drop_duplicates().shape[0]


def test_a_kernels_speed_up_table_is_capped_like_the_all_rows_table_and_says_so():
    from workbench.report.model import build_report
    from workbench.report.render import html, markdown

    df = _runs(2)
    full = build_report(df, figures=False)
    capped = build_report(df, figures=False, max_table_rows=3)
    for k, c in zip(full.kernels, capped.kernels, strict=True):
        assert k.n_speedups == len(k.speedups) == c.n_speedups > 3 and k.speedups_note == ""
        assert c.speedups == k.speedups[:3] and c.verdicts == k.verdicts  # the counts still count every one
        assert c.speedups_note == f"the first 3 of {k.n_speedups:,} speed-ups are shown; the verdict counts count " \
                                  "them all"
    page, text = html(capped), markdown(capped)
    assert all(c.speedups_note in page and f"{c.kernel}: {c.speedups_note}" in text for c in capped.kernels)
    assert "speed-ups are shown" not in html(full) + markdown(full)


def test_noisy_marks_read_the_flag_else_the_spread():
    from workbench.report.plots import noisy_mask
    from workbench.roofs.ceilings import is_noisy

    df = pd.DataFrame({"noisy": [1, 0, None, None, float("nan"), True],
                       "rel_spread": [0.0, 0.9, 0.9, 0.01, "bad", None], "kernel": "k"})
    assert noisy_mask(df).tolist() == [is_noisy(dict(r)) for _, r in df.iterrows()] == \
        [True, False, True, False, False, True]
    assert noisy_mask(df.drop(columns="noisy")).tolist() == [False, True, True, False, False, False]


def test_report_baseline_flag_is_checked_on_the_series_columns_only(tmp_path, monkeypatch, capsys):
    from workbench.cli import main
    from workbench.report.sample_data import synthetic_environment
    from workbench.store.database import Store

    s = Store(tmp_path / "s.sqlite")
    s.add_environment("env-demo", synthetic_environment())
    rid = s.new_run(name="demo", env_id="env-demo")
    for row in synthetic_results(rid).to_dict("records"):
        s.record(row)
    s.set_run_status(rid, "finished", wall_s=1.0)
    asked = []
    original = Store.results

    def recording(self, run_ids=None, columns=None, **kw):
        asked.append(None if columns is None else sorted(columns))
        return original(self, run_ids, columns, **kw)

    monkeypatch.setattr(Store, "results", recording)
    assert main(["report", rid, "--store", str(s.path), "--baseline", "nope", "--out", str(tmp_path / "r.md")]) == 2
    assert "names no measured series" in capsys.readouterr().err
    assert asked == [["backend", "status", "variant"]]  # no load of every column for the check
    assert main(["report", rid, "--store", str(s.path), "--baseline", "numpy@numpy", "--out",
                 str(tmp_path / "r.md")]) == 0
    assert None not in asked  # the report itself loads the report's columns, never every one


def test_a_reports_empty_columns_are_not_read_but_shared(tmp_path):
    """Columns NULL in every selected row come back as the None columns a full read gives (one shared array,
    not 8 MB each per million rows); columns with a value in any selected row are read as they are."""
    from workbench.report.data import REPORT_COLUMNS
    from workbench.store.database import Store

    s = Store(tmp_path / "s.sqlite")
    ids = [s.new_run(name=f"r{i}", env_id="env-demo") for i in range(2)]
    rows = [row for i, rid in enumerate(ids) for row in synthetic_results(rid, seed=i).to_dict("records")]
    rows[-1]["llm_shape"] = "only the last run has one"
    for row in rows:
        s.record(row)
    first = ids[:1]
    for ids in (first, None):
        plain = s.results(ids, columns=REPORT_COLUMNS)
        shared = s.results(ids, columns=REPORT_COLUMNS, share_empty=True)
        pd.testing.assert_frame_equal(shared, plain, check_exact=True)
        empty = [c for c in shared.columns if shared[c].isna().all() and shared[c].dtype == object]
        assert len(empty) >= 3 and (ids is None) != ("llm_shape" in empty)
        assert all(shared[c].tolist() == [None] * len(shared) for c in empty)
        assert len({id(shared[c].array._ndarray) for c in empty}) == 1  # one array, shared


def test_rows_taken_from_a_frame_keep_shared_columns_shared():
    """frames.take_rows / where_rows give what filtering gives (values, dtypes, index, text columns left as
    object), and columns that shared one array share one again instead of a copy each."""
    from workbench.core.frames import split_by, take_rows, where_rows

    n = 1000
    nulls = pd.Series(np.full(n, None, dtype=object))
    df = pd.concat([pd.DataFrame({"k": pd.Series(["a", "b", None, "a"] * (n // 4), dtype=object),
                                  "x": np.arange(n, dtype=float), "i": pd.array([1, None] * (n // 2), dtype="Int64"),
                                  "s": pd.array(["q", "r"] * (n // 2), dtype="string")}),
                    pd.DataFrame(dict.fromkeys(["e1", "e2", "e3"], nulls), copy=False)], axis=1)
    df.index = df.index * 3
    mask = (df["k"] == "a").to_numpy()
    for got in (where_rows(df, mask), take_rows(df, np.flatnonzero(mask)), split_by(df, "k")["a"]):
        pd.testing.assert_frame_equal(got, df[mask], check_exact=True)
        assert len({id(got[c].array._ndarray) for c in ("e1", "e2", "e3")}) == 1
        assert not np.shares_memory(got["x"].to_numpy(), df["x"].to_numpy())
    pd.testing.assert_frame_equal(where_rows(df, np.ones(n, bool)), df)
    parts = split_by(df, "k")
    assert list(parts)[:2] == ["a", "b"] and len(parts) == 3 and sum(map(len, parts.values())) == n
