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
