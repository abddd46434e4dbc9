"""Issue 24 scale, reports: a store's rows read a frame at a time (``Store.result_frames``, what a CSV report
streams) are the rows ``Store.results`` gives, with the same columns in every frame, and the CSV written
from many frames is the CSV written from one."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from workbench.core.record import RESULT_COLUMNS
from workbench.report.data import row_frames
from workbench.report.exporters import CSV_FORMULA_PREFIXES as CSV_PREFIXES
from workbench.report.exporters import csv_text, write_report
from workbench.store.database import Store


def _store(tmp_path, n: int = 7) -> Store:
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run(name="frames", env_id="env0")
    for i in range(n):
        row = {"run_id": run_id, "cell_key": f"c{i}", "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
               "dtype": "float32", "params": json.dumps({"n": 8 * (i + 1)}), "status": "ok",
               "median_s": 1e-3 * (i + 1), "size": None if i == 1 else 8 * (i + 1), "label": "=cmd"}
        if i == n - 1:
            row["late_field"] = "only here"  # an extra field of the last row alone
        st.record(row)
    return st


def test_frames_hold_the_rows_of_results_with_the_same_columns(tmp_path):
    st = _store(tmp_path)
    whole = st.results()
    frames = list(st.result_frames(None, rows_per_frame=3))
    assert [len(f) for f in frames] == [3, 3, 1]
    assert all(list(f.columns) == list(whole.columns) for f in frames)
    assert list(whole.columns[:len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS) and "late_field" in whole
    joined = pd.concat(frames, ignore_index=True)
    assert list(joined["cell_key"]) == list(whole["cell_key"])
    assert list(joined["late_field"].fillna("")) == [""] * 6 + ["only here"]
    assert joined["median_s"].tolist() == whole["median_s"].tolist()
    assert list(st.result_frames([], rows_per_frame=3))[0].empty  # no run: one empty frame, with columns
    assert list(next(st.result_frames([])).columns) == list(st.results([]).columns) == list(RESULT_COLUMNS)


def test_a_csv_from_many_frames_is_the_csv_from_one(tmp_path):
    st = _store(tmp_path)
    pieces = [csv_text(f, header=i == 0) for i, f in enumerate(row_frames(st, None, rows_per_frame=2))]
    one = csv_text(next(row_frames(st, None, rows_per_frame=100)))
    assert "".join(pieces) == one
    rows = list(csv.DictReader(io.StringIO(one, newline="")))
    # a count is written as a count in every frame, a gap stays empty; formulas are neutralised
    assert [r["size"] for r in rows[:3]] == ["8", "", "24"] and rows[0]["label"] == "'=cmd"
    out = write_report(st, "latest", tmp_path / "r.csv")
    assert out.read_bytes().decode() == one


def test_an_export_written_a_batch_at_a_time_is_the_whole_document(tmp_path, monkeypatch):
    st = _store(tmp_path)
    whole = {"results": [{k: v for k, v in r.items()} for r in st.rows()]}
    batches = Store.row_batches
    monkeypatch.setattr(Store, "row_batches", lambda self, ids=None, rows_per_batch=2: batches(self, ids, 2))
    assert [len(b) for b in st.row_batches(None)] == [2, 2, 2, 1]
    doc = json.loads(st.export(None, tmp_path / "e.json").read_text())
    assert list(doc) == ["format", "version", "exported_at", "runs", "environments", "results", "peaks"]
    assert doc["results"] == whole["results"] and doc["results"][-1]["late_field"] == "only here"
    assert json.loads(st.export([], tmp_path / "none.json").read_text())["results"] == []


def test_a_csv_straight_from_sqlite_is_the_csv_of_the_frames(tmp_path):
    st = _store(tmp_path)
    run_id = st.latest_run_id()
    st.record({**st.rows()[0], "cell_key": "flags", "flag": True, "other": False, "note": "+1", "size": 3})
    from workbench.report.exporters import csv_pieces

    def frames_csv() -> str:
        return "".join(csv_text(f, header=i == 0) for i, f in enumerate(row_frames(st, None, rows_per_frame=3)))

    assert st.result_tuples(None, ("=",)) is not None  # the SQLite path is taken
    assert "".join(csv_pieces(st, None)) == frames_csv()  # extra booleans, quoted extra text, counts alike
    rows = list(csv.DictReader(io.StringIO("".join(csv_pieces(st, [run_id])), newline="")))
    assert rows[-1]["flag"] == "True" and rows[-1]["other"] == "False" and rows[-1]["note"] == "'+1"
    with st._write() as c:  # the store writes nested fields as JSON text; a store written otherwise:
        c.execute("""UPDATE results SET extra = '{"nested_field": {"a": 1}}' WHERE cell_key = 'c0'""")
    assert st.result_tuples(None, ("=",)) is None  # a nested extra field: the frames write it
    assert "".join(csv_pieces(st, None)) == frames_csv()


def test_results_read_in_chunks_equal_one_read_and_share_repeated_strings(tmp_path, monkeypatch):
    """``Store.results`` reads SQLite a chunk at a time and shares each text column's repeated values: the
    frame is the one a single read gives (a numeric column NULL throughout a chunk stays numeric), and a
    kernel name repeated on every row is one object, not a string per row."""
    import workbench.store.rows as store_module

    st = _store(tmp_path, n=9)
    single = st.results()
    monkeypatch.setattr(store_module, "RESULT_CHUNK_ROWS", 2)  # row 1's size is NULL: chunk 0 reads it as None
    chunked = st.results()
    assert list(chunked.columns) == list(single.columns)
    for name in single.columns:
        assert chunked[name].dtype == single[name].dtype, name
        assert chunked[name].astype(object).fillna(-1).tolist() == single[name].astype(object).fillna(-1).tolist()
    assert chunked["size"].dtype.kind == "f" and chunked["size"].isna().sum() == 1
    kernels = chunked["kernel"].tolist()
    assert all(k is kernels[0] for k in kernels)  # shared across chunks too
    reduced = st.results(columns=["kernel", "median_s"])
    assert reduced["kernel"].tolist() == ["saxpy"] * 9 and reduced["median_s"].tolist() == single["median_s"].tolist()
    assert st.results([]).empty and list(st.results([]).columns) == list(RESULT_COLUMNS)


def test_csv_fields_quoted_by_sqlite_are_what_the_csv_module_writes(tmp_path):
    """Issue 38: SQLite quotes a million rows' fields (commas, quotes, CR, LF, formula prefixes) faster than the
    csv module; the lines joined from its fields are the module's lines, byte for byte."""
    st = _store(tmp_path)
    hostile = ["a,b", 'say "hi"', "line\nbreak", "cr\ronly", "=1+2", '=a,"b"', "\rlead", "+", "-1", "@x", "\ttab",
               "", "µs ÷ ✓", " spaced ", "'", '"', ",", "plain"]
    base = st.rows()[0]
    for i, text in enumerate(hostile):
        st.record({**base, "cell_key": f"h{i}", "message": text, "note": text, "median_s": 0.1 + 0.2 * i,
                   "size": 10 ** (i % 19), "flag": i % 2 == 0, "weird": text})
    cols, plain = st.result_tuples(None, CSV_PREFIXES)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for batch in plain:
        writer.writerows(batch)
    cols2, fields = st.result_tuples(None, CSV_PREFIXES, rows_per_batch=5, csv_fields=True)
    assert cols2 == cols
    assert "".join(",".join(map(str, row)) + "\r\n" for batch in fields for row in batch) == buf.getvalue()
    from workbench.report.exporters import csv_pieces

    rows = list(csv.reader(io.StringIO("".join(csv_pieces(st, None)), newline="")))
    got = {r[cols.index("cell_key")]: r for r in rows[1:]}
    for i, text in enumerate(hostile):
        assert got[f"h{i}"][cols.index("weird")] == ("'" + text if text[:1] in CSV_PREFIXES else text)


def test_rows_of_chosen_runs_are_read_in_stored_order_without_a_sort(tmp_path):
    """Filtered by run_id itself, SQLite read a million chosen rows by the run index and sorted them all for
    ORDER BY rowid in a temporary B-tree (issue 38); the runs' rowids come from the index instead."""
    from workbench.store.rows import run_filter

    st = _store(tmp_path)
    where, ids = run_filter([st.latest_run_id(), "no-such-run"])
    plan = [r[3] for r in st._conn.execute(f"EXPLAIN QUERY PLAN SELECT * FROM results {where} ORDER BY rowid", ids)]
    assert not any("TEMP B-TREE" in step for step in plan), plan
    got = [r["cell_key"] for r in st.rows([st.latest_run_id()])]
    assert got == [r["cell_key"] for r in st.rows() if r["run_id"] == st.latest_run_id()] and got


def test_a_reports_read_holds_at_most_ten_thousand_rows_before_thinning_them(tmp_path):
    """Issue 38: a chunk of rows is held whole (real rows carry 5 KB of samples) until ``chunk_map`` thins it:
    50,000 rows a chunk took 560 MB above a report's frame; 10,000 at most now."""
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run(name="chunks", env_id="env0")
    with st._write() as c:
        c.executemany("INSERT INTO results (run_id, cell_key, kernel, status, samples_s) VALUES (?, ?, ?, ?, ?)",
                      ((run_id, f"c{i}", "saxpy", "ok", "[0.001, 0.002]") for i in range(25_000)))
    seen: list[int] = []

    def spy(chunk: pd.DataFrame) -> pd.DataFrame:
        seen.append(len(chunk))
        return chunk

    df = st.results([run_id], columns=["kernel", "samples_s"], share_empty=True, chunk_map=spy)
    assert len(df) == 25_000 and sum(seen) == 25_000
    assert max(seen) <= 10_000
