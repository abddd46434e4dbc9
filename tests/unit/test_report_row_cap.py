"""A report of a huge store embeds at most a capped number of rows in its "All rows" table and says in one
line how many there are and the command that writes them all; every summary still counts every row."""

import csv
import re
import shlex

import pytest

from workbench.cli import main
from workbench.report.model import build_report
from workbench.report.render import html, markdown
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import Store


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "big store.sqlite")  # a space: the command in the note must quote the path
    s.add_environment("env-demo", synthetic_environment())
    s.ids = []
    for seed in (1, 2):
        rid = s.new_run(name="demo", env_id="env-demo")
        for row in synthetic_results(rid, seed=seed).to_dict("records"):
            s.record(row)
        s.set_run_status(rid, "finished", wall_s=3.0)
        s.ids.append(rid)
    return s


def _results_rows(page: str) -> int:
    table = page[page.index('<h2 id="results">'):page.index('<h2 id="environment">')]
    return len(re.findall(r"<tr[ >]", table)) - 1  # less the header row


def test_store_over_the_cap_gives_a_note_and_a_capped_table(store, tmp_path, monkeypatch):
    full = build_report(store, store.ids, figures=False)
    n = full.n_rows
    assert n > 7 and full.rows_note == "" and len(full.results) == n  # a normal store: every row, no note
    report = build_report(store, store.ids, figures=False, max_table_rows=7)
    assert len(report.results) == 7 and len(report.results_table) == 7
    assert report.results_table.equals(full.results_table.head(7))
    assert report.n_rows == n and sum(report.counts.values()) == sum(full.counts.values())  # summaries: all rows
    assert report.findings == full.findings and report.noise_line == full.noise_line
    note = report.rows_note
    assert note.startswith(f"{n:,} rows: the first 7 are shown here") and "\n" not in note
    page = html(report)
    assert _results_rows(page) == 7 and _results_rows(html(full)) == n
    assert note.replace("'", "&#39;") in page and note in markdown(report)
    # the note's command is exact: run as written, it writes every row
    command = note[note.index("workbench report"):]
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(command)[1:]) == 0
    with open(tmp_path / "rows.csv", newline="", encoding="utf-8") as f:
        assert sum(1 for _ in csv.DictReader(f)) == n


def test_report_loads_only_the_columns_it_reads_and_shows_the_same(store):
    from workbench.report.data import NOT_IN_REPORT, gather

    store.record({**synthetic_results(store.ids[0], seed=3).iloc[0].to_dict(), "cell_key": "x", "worker": "w1"})
    some = store.results(store.ids, columns=["kernel", "status"])
    assert list(some.columns) == ["kernel", "status", "worker"]  # the extra field stays
    pruned = build_report(store, store.ids)
    assert NOT_IN_REPORT and not NOT_IN_REPORT & set(gather(store, store.ids, columns=["kernel"]).df.columns)
    every_column = build_report(gather(store, store.ids))
    every_column.generated = pruned.generated
    assert html(pruned) == html(every_column) and markdown(pruned) == markdown(every_column)


def test_a_kernel_table_holds_at_most_the_cap_and_says_how_many_rows_there_are(store):
    """A kernel's compact table (sizes down, series across) is capped like the all-rows table: at a million
    rows it held 50,000 lines per kernel. The note says how many rows there are; Markdown and HTML show it."""
    full = build_report(store, store.ids, figures=False)
    capped = build_report(store, store.ids, figures=False, max_table_rows=3)
    for whole, part in zip(full.kernels, capped.kernels, strict=True):
        n = whole.pivot["n_rows"]
        assert len(whole.pivot["rows"]) == n and whole.pivot["note"] == ""
        assert part.pivot["n_rows"] == n and part.pivot["rows"] == whole.pivot["rows"][:3]
        if n > 3:
            assert part.pivot["note"] == f"the first 3 of {n:,} rows are shown (every cell is in the CSV of all rows)"
            assert f"The first 3 of {n:,} rows are shown" in markdown(capped)
            assert f"The first 3 of {n:,} rows are shown" in html(capped)
    assert any(k.pivot["n_rows"] > 3 for k in full.kernels)
