"""Issue 38 scale: a checked batch of plain rows is transposed once (:func:`plain_groups`) and its columns serve the
insert, the JSON column checks and the cell bookkeeping; a cell listed again inside such a batch, or across
batches, is still found (the same once, refused when it differs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_docs import import_doc
from import_docs import import_row as _row

from workbench.cli import main
from workbench.store.database import Store
from workbench.store.import_stream import insert_groups
from workbench.store.plain_rows import plain_groups, plain_rows


def _doc(rows: list[dict]) -> dict:
    return import_doc(rows, runs=("r1", "r2"))


def _import(tmp_path: Path, rows: list[dict], capsys, monkeypatch, batch: int = 4) -> tuple[int, str, Path]:
    monkeypatch.setattr("workbench.store.import_stream.STREAM_FROM_BYTES", 0)
    monkeypatch.setattr("workbench.store.import_schema.PLAIN_BATCH_ROWS", batch)
    f, store = tmp_path / "in.json", tmp_path / "s.sqlite"
    f.write_text(json.dumps(_doc(rows)))
    rc = main(["import", str(f), "--store", str(store)])
    return rc, capsys.readouterr().err, store


def test_plain_groups_hold_each_set_of_fields_once_with_its_rows_and_columns():
    rows = [_row("a"), _row("b", note="x"), _row("c"), _row("d", note="y")]
    groups = plain_groups(rows)
    assert groups is not None and plain_rows(rows)
    assert [g.members for g in groups] == [[0, 2], [1, 3]]
    for g in groups:
        assert [dict(zip(g.keys, values, strict=True)) for values in zip(*g.columns, strict=True)] == \
            [rows[i] for i in g.members]
    assert groups[1].column("note") == ("x", "y") and groups[0].column("note") is None
    assert plain_groups([_row("a"), _row("b", size=-1)]) is None  # any value in doubt: no groups, row by row


def test_insert_groups_of_plain_groups_put_every_row_at_its_place_with_its_values():
    rows = [_row("a"), _row("b", median_s=None), _row("c", note="x")]
    got = {}
    for cols, batch in insert_groups(rows, plain_groups(rows), 10):
        for values in batch:
            rec = dict(zip(cols, values, strict=True))
            got[rec.pop("rowid")] = rec
    assert sorted(got) == [10, 11, 12]
    assert got[10]["cell_key"] == "a" and got[10]["median_s"] == 1e-3
    assert got[11]["median_s"] is None  # NULL where other rows of its statement have a value
    assert json.loads(got[12]["extra"]) == {"note": "x"}


def test_a_cell_listed_again_within_and_across_plain_batches_is_imported_once(tmp_path, capsys, monkeypatch):
    rows = [_row("a"), _row("b"), _row("a"), _row("c"), _row("d"), _row("b"), _row("a", run="r2"), _row("e")]
    rc, err, store = _import(tmp_path, rows, capsys, monkeypatch)
    assert rc == 0, err
    assert [r["cell_key"] for r in Store(store).rows("r1")] == list("abcde")
    assert [r["cell_key"] for r in Store(store).rows("r2")] == ["a"]


@pytest.mark.parametrize("place", [2, 6], ids=["same batch", "later batch"])
def test_a_cell_listed_again_with_other_values_is_refused_naming_both_places(tmp_path, capsys, monkeypatch, place):
    rows = [_row(k) for k in "abcdefgh"]
    rows[place] = _row("b", median_s=2e-3)
    rc, err, store = _import(tmp_path, rows, capsys, monkeypatch)
    assert rc != 0 and f"results[{place}]" in err and "results[1]" in err and "'b'" in err
    assert not store.exists()  # nothing stored


def test_the_environments_of_plain_rows_are_recorded_and_a_row_without_one_names_none(tmp_path, capsys,
                                                                                      monkeypatch):
    rows = [_row("a"), _row("b", env_id="envB"), _row("c", env_id=None), _row("d")]
    rc, err, store = _import(tmp_path, rows, capsys, monkeypatch)
    assert rc == 0, err
    s = Store(store)
    assert s.environment("envB")["described"] is False  # named by a row, described by nobody: recorded so
    assert {r["cell_key"]: r["env_id"] for r in s.rows("r1")} == {"a": "envA", "b": "envB", "c": None, "d": "envA"}


def test_a_column_some_rows_leave_null_and_one_all_leave_null_are_stored_as_each_row_has_them(tmp_path, capsys,
                                                                                              monkeypatch):
    """Issue 38: a plain batch's statement binds NULL where some of its rows fill a column, and leaves out a column
    none of them fills; each row reads back with its own values."""
    rows = [_row("a", message="slow", mean_s=None), _row("b", message=None, mean_s=None),
            _row("c", message="x", mean_s=None, note="n"), _row("d", message=None, mean_s=2e-3)]
    rc, err, store = _import(tmp_path, rows, capsys, monkeypatch)
    assert rc == 0, err
    got = {r["cell_key"]: r for r in Store(store).rows("r1")}
    assert [got[k]["message"] for k in "abcd"] == ["slow", None, "x", None]
    assert [got[k]["mean_s"] for k in "abcd"] == [None, None, None, 2e-3]
    assert got["c"]["note"] == "n" and "note" not in got["a"]


@pytest.mark.parametrize("value, plain", [(2**63 - 1, True), (-2**63, True), (2**63, False), (-2**63 - 1, False)])
def test_numbers_near_the_64_bit_limit_are_judged_exactly(value, plain):
    """Issue 38: one math.hypot judges a column or a batch's sample lists; where it cannot vouch for them (2**62
    or more: many large numbers), max and min judge exactly, so a column of large seeds stays on the fast path."""
    from workbench.store.plain_rows import plain_number_lists

    rows = [_row(k, seed=value - (k == "b") * (1 if value > 0 else -1), peak_mem_bytes=2**62 + 7) for k in "abc"]
    assert (plain_groups(rows) is not None) is plain
    assert plain_number_lists([json.dumps([2**63 - 1, -2**62]), json.dumps([3e18] * 9)])
    assert not plain_number_lists([json.dumps([2**62] * 4), json.dumps([2**63])])


def test_the_collector_runs_less_often_while_rows_are_read_and_as_before_after():
    """Issue 38: the cyclic collector's first threshold is raised while a large file is read (not turned off), and
    set back after, also after an error; a collector someone turned off stays off."""
    import gc

    from workbench.store.import_stream import GC_YOUNG_THRESHOLD, fewer_gc_passes

    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_gc_passes():
        assert gc.get_threshold()[0] == max(before[0], GC_YOUNG_THRESHOLD) and gc.isenabled()
        raise RuntimeError
    assert gc.get_threshold() == before
    try:
        gc.set_threshold(0)
        with fewer_gc_passes():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_a_large_files_batches_hold_about_a_megabyte_of_sample_texts():
    """Issue 38: the next batch of a large file takes about BATCH_TEXT_CHARS of JSON text columns at the last
    batch's rate (real rows with hundreds of samples: ~160 rows), MIN_BATCH_ROWS at least, the limit at most (a
    batch of small rows, or one that was not plain, takes the limit)."""
    from workbench.store.plain_rows import BATCH_TEXT_CHARS, MIN_BATCH_ROWS, next_batch_rows

    big = [_row(k, samples_s=json.dumps([1.25e-05] * 500)) for k in "abcd"]
    per_row = len(big[0]["samples_s"]) + len(big[0]["params"])
    assert next_batch_rows(plain_groups(big), 4, 1024) == BATCH_TEXT_CHARS // per_row
    huge = [_row(k, samples_s=json.dumps([1.25e-05] * 60_000)) for k in "ab"]
    assert next_batch_rows(plain_groups(huge), 2, 1024) == MIN_BATCH_ROWS
    assert next_batch_rows(plain_groups([_row("a"), _row("b")]), 2, 1024) == 1024
    assert next_batch_rows(None, 4, 1024) == 1024 and next_batch_rows(plain_groups(huge), 2, 4) == 4
