"""Rows stored without params (an import, an old store: NULL, empty text, or ``{}``) are cells of their kernel
with no size (issue 38, hostile round five): the Markdown and HTML reports failed with "single positional
indexer is out-of-bounds", and ``compare`` printed "None" as the size."""

from __future__ import annotations

import sqlite3

import pytest

from workbench.cli import main
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import Store


def _fill(store: Store, seed: int, slowdown: float = 1.0) -> str:
    rid = store.new_run(name=f"r{seed}", env_id="env-demo")
    store.add_environment("env-demo", synthetic_environment())
    rows = synthetic_results(rid, seed=seed, slowdown=slowdown)
    for row in rows[rows["kernel"] == rows["kernel"].iloc[0]].to_dict("records"):
        store.record(row)
    store.set_run_status(rid, "finished", wall_s=3.0)
    return rid


@pytest.mark.parametrize("params", [None, "", "  ", "{}"])
def test_reports_and_compare_read_rows_without_params(tmp_path, capsys, params):
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        ids = [_fill(s, 1), _fill(s, 2, slowdown=0.5)]
    with sqlite3.connect(path) as c:
        c.execute("UPDATE results SET params = ?, size = NULL, size_label = NULL", (params,))
    for fmt in ("md", "html", "csv"):
        out = tmp_path / f"r.{fmt}"
        assert main(["report", ids[1], "--store", str(path), "--out", str(out)]) == 0, capsys.readouterr().err
        assert out.stat().st_size > 0
    err = capsys.readouterr().err
    assert "error" not in err
    assert main(["compare", *ids, "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "nan" not in out
    table = [ln for ln in out.splitlines() if ln.lstrip().startswith("saxpy")]
    assert table and all(" - " in ln for ln in table), out
