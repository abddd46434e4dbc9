"""Issue 24 scale: the faster import paths store exactly what the file says, in file order, and leave every
imported row in the main file; the fast checks of JSON text columns refuse and accept what the slow ones do.
Each case runs with the file parsed whole and read row by row (as files of 64 MB and more are)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from import_docs import import_doc as _doc
from import_docs import import_row as _row

from workbench.cli import main
from workbench.store.database import Store


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def reading(request, monkeypatch) -> str:
    if request.param == "streamed":
        monkeypatch.setattr("workbench.store.import_stream.STREAM_FROM_BYTES", 0)
    return request.param


def _import(tmp_path: Path, doc: dict, capsys) -> tuple[int, str, Path]:
    f, store = tmp_path / "in.json", tmp_path / "s.sqlite"
    f.write_text(json.dumps(doc))
    rc = main(["import", str(f), "--store", str(store)])
    return rc, capsys.readouterr().err, store


def test_rows_with_different_columns_keep_their_values_and_file_order(tmp_path, capsys):
    rows = [_row("a"), _row("b", status="error", median_s=None, samples_s=None, message="boom"),
            _row("c", custom_field=3, note=None), _row("d", params={"n": 16}, samples_s=[2e-3, 2.5e-3]),
            _row("e", rounds=3, noisy=True), _row("f")]
    rc, err, store = _import(tmp_path, _doc(rows), capsys)
    assert rc == 0, err
    got = Store(store).rows("r1")
    assert [r["cell_key"] for r in got] == list("abcdef")  # file order, across statements of other columns
    by_key = {r["cell_key"]: r for r in got}
    assert by_key["b"]["median_s"] is None and by_key["b"]["message"] == "boom" and by_key["b"]["status"] == "error"
    assert by_key["c"]["custom_field"] == 3 and "note" in by_key["c"] and by_key["c"]["note"] is None
    assert json.loads(by_key["d"]["params"]) == {"n": 16} and json.loads(by_key["d"]["samples_s"]) == [2e-3, 2.5e-3]
    assert by_key["e"]["rounds"] == 3 and by_key["e"]["noisy"] == 1
    assert by_key["a"]["median_s"] == 1e-3 and by_key["a"]["size"] == 8 and by_key["a"]["message"] is None


def test_imported_rows_are_in_the_main_file_once_the_import_returns(tmp_path, capsys):
    rc, err, store = _import(tmp_path, _doc([_row(f"k{i}") for i in range(50)]), capsys)
    assert rc == 0, err
    wal = Path(f"{store}-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed and emptied, not merely committed
    alone = tmp_path / "copy.sqlite"
    shutil.copy(store, alone)  # the main file without its -wal holds every row
    with sqlite3.connect(alone) as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 50


@pytest.mark.parametrize("samples, ok", [
    ("[1e999]", False),            # an infinity: refused (the fast sum sees it)
    ("[1e308, 1e308]", True),      # finite numbers whose sum overflows: the slow path accepts them
    ("  [0.001, 0.002]  ", True),  # whitespace around: the slow path accepts it
    ("[0.001, NaN]", False),
    ("[0.001, true]", False),
    ('[0.001, "x"]', False),
    ("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", False),
])
def test_json_text_columns_are_judged_as_the_slow_path_judges_them(samples, ok, tmp_path, capsys):
    rc, err, _ = _import(tmp_path, _doc([_row("a", samples_s=samples)]), capsys)
    assert (rc == 0) == ok, err
    if not ok:
        assert rc == 2 and "results[0].samples_s" in err and err.count("\n") == 1, err


def test_a_bad_value_deep_in_a_batch_is_named_by_its_row(tmp_path, capsys):
    rows = [_row(f"k{i}") for i in range(1500)]
    rows[1300]["median_s"] = -1.0
    rc, err, _ = _import(tmp_path, _doc(rows), capsys)
    assert rc == 2 and "results[1300].median_s: -1.0 is out of range" in err, err


HOSTILE = [None, -1, -0.0, 0, 1.5, 2**63, -(2**63) - 1, 10**400, 1e308, True, "", "x", "a\x01b", "ab\n", "\x7f",
           "x" * 129, "x" * 5000, [1], {"a": 1}, [], "-abc", ".abc", "abc-def.g:h+1"]


@pytest.mark.parametrize("column", ["run_id", "cell_key", "env_id", "kernel", "status", "size", "median_s",
                                    "samples_s", "message", "rounds", "noisy", "device", "unknown_field"])
def test_the_batch_check_never_passes_a_row_the_row_check_refuses(column):
    from workbench.store.plain_rows import plain_row, plain_rows

    for value in HOSTILE:
        batch = [_row(f"k{i}") for i in range(4)]
        for r in batch:
            r.setdefault(column, None)
        batch[2][column] = value
        if plain_rows(batch):
            assert all(plain_row(r) for r in batch), (column, value)
    assert plain_rows([_row(f"k{i}") for i in range(4)])  # the usual batch takes the fast path


def test_the_import_command_does_without_jsonschemas_optional_iri_grammar(tmp_path):
    """`workbench import` never builds rfc3987_syntax's grammar (1.5 s of every import; no format is checked)
    and still refuses a row the schema refuses, by name (a fresh process: the module may be loaded here)."""
    import subprocess
    import sys

    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_doc([_row("c1")])), encoding="utf-8")
    bad.write_text(json.dumps(_doc([_row("c1", size="eight")])), encoding="utf-8")
    code = ("import sys; from workbench.cli import main; rc = [main(['import', f, '--store', sys.argv[1]]) "
            "for f in sys.argv[2:]]; print(rc, 'rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] "
            "is not None, 'jsonschema' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.sqlite"), str(good)], capture_output=True,
                       text=True, cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert p.stdout.split()[-3:] == ["[0]", "False", "True"], p.stdout + p.stderr
    p = subprocess.run([sys.executable, "-m", "workbench", "import", str(bad), "--store", str(tmp_path / "t.sqlite")],
                       capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert p.returncode == 2 and "results[0].size" in p.stderr, p.stderr


def test_fields_that_are_no_column_take_the_fast_path_and_keep_their_values(tmp_path, capsys, monkeypatch):
    """Issue 38: a sweep's rows carry fields that are no column (``round_ids``, ``precision``: kept in
    ``extra``); a row with one went through jsonschema (100 us), and real rows imported 20x slower than
    synthetic ones."""
    rows = [_row(f"k{i}", round_ids=json.dumps([f"{i}:0", f"{i}:1"]), precision="tf32" if i % 2 else None,
                 flag=bool(i % 3), count=i) for i in range(1500)]
    class NoSchema:
        def iter_errors(self, row):
            pytest.fail(f"row {row['cell_key']} was checked by jsonschema")

    monkeypatch.setattr("workbench.store.import_schema._row_validator", NoSchema)
    rc, err, store = _import(tmp_path, _doc(rows), capsys)
    assert rc == 0, err
    got = Store(store).rows("r1")
    assert [r["cell_key"] for r in got] == [f"k{i}" for i in range(1500)]
    for i in (0, 1, 2, 1499):
        assert json.loads(got[i]["round_ids"]) == [f"{i}:0", f"{i}:1"] and got[i]["count"] == i
        assert got[i]["precision"] == ("tf32" if i % 2 else None) and bool(got[i]["flag"]) == bool(i % 3)


def test_the_fast_check_of_other_fields_never_passes_what_the_schema_refuses():
    from workbench.store.import_schema import _row_validator
    from workbench.store.plain_rows import plain_row, plain_rows

    for value in [*HOSTILE, "x" * 70_000, float("nan"), float("inf")]:
        row = _row("a", unknown_field=value)
        if plain_row(row) or plain_rows([row, _row("b", unknown_field=value)]):
            assert not list(_row_validator().iter_errors(row)), value


def test_rows_of_interleaved_shapes_keep_file_order_after_the_rows_stored_before(tmp_path, capsys, monkeypatch):
    """Real sweeps interleave rows of other fields and other NULLs (an error row, a GPU's clock, a sweep's own
    fields): the fast path groups them by shape and still stores them in file order, after what the store
    held (issue 38: they went one ``executemany`` each)."""
    def shaped(i: int) -> dict:
        if i % 3 == 0:
            return _row(f"k{i}", status="error", median_s=None, samples_s=None, message=f"boom {i}")
        if i % 3 == 1:
            return _row(f"k{i}", gpu_clock_mhz=None if i % 2 else 1400.0, round_ids=json.dumps([str(i)]))
        return _row(f"k{i}", precision="tf32")

    class NoSchema:
        def iter_errors(self, row):
            pytest.fail(f"row {row['cell_key']} was checked by jsonschema")

    store = tmp_path / "s.sqlite"
    first = _doc([_row("old0"), _row("old1")])
    first["runs"][0]["run_id"] = "r0"
    for r in first["results"]:
        r["run_id"] = "r0"
    (tmp_path / "first.json").write_text(json.dumps(first))
    assert main(["import", str(tmp_path / "first.json"), "--store", str(store)]) == 0
    monkeypatch.setattr("workbench.store.import_schema._row_validator", NoSchema)
    (tmp_path / "in.json").write_text(json.dumps(_doc([shaped(i) for i in range(2500)])))
    assert main(["import", str(tmp_path / "in.json"), "--store", str(store)]) == 0, capsys.readouterr().err
    got = Store(store).rows()
    assert [r["cell_key"] for r in got] == ["old0", "old1", *(f"k{i}" for i in range(2500))]
    for i in (0, 1, 2, 3, 2497, 2498, 2499):
        r, want = got[i + 2], shaped(i)
        assert r["message"] == want.get("message") and r["median_s"] == want["median_s"]
        assert r.get("gpu_clock_mhz") == want.get("gpu_clock_mhz") and r.get("precision") == want.get("precision")
        assert r.get("round_ids") == want.get("round_ids")


def test_a_large_file_is_read_once_and_inserted_as_it_is_checked(tmp_path, capsys, monkeypatch, reading):
    """Issue 38: a streamed import inserts each checked batch in its transaction, with no spool of the rows
    (a temporary file of every row, read back for a second pass, was a third of the import's time)."""
    import tempfile

    def no_spool(*_a, **_k):
        pytest.fail("the import spooled its rows to a temporary file")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_spool)
    walks = []
    from workbench.store import import_schema

    real = import_schema.iter_export
    monkeypatch.setattr(import_schema, "iter_export", lambda *a, **k: walks.append(1) or real(*a, **k))
    rc, err, store = _import(tmp_path, _doc([_row(f"k{i}") for i in range(3000)]), capsys)
    assert rc == 0, err
    assert len(Store(store).rows("r1")) == 3000
    assert len(walks) == (1 if reading == "streamed" else 0)


def test_a_bad_row_after_inserted_batches_leaves_no_new_store_and_no_rows(tmp_path, capsys, reading):
    """The rows of the batches before a bad one were inserted already: the transaction is rolled back, and a
    store the import created is removed (a bad file creates nothing)."""
    rows = [_row(f"k{i}") for i in range(3000)]
    rows[2900]["size"] = -1
    rc, err, store = _import(tmp_path, _doc(rows), capsys)
    assert rc == 2 and "results[2900].size" in err, err
    assert not store.exists() and not Path(f"{store}-wal").exists()
    Store(store).close()
    rc, err, store = _import(tmp_path, _doc(rows), capsys)
    assert rc == 2 and "results[2900].size" in err, err
    with sqlite3.connect(store) as con:  # the existing store is kept, without a row of the file
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def test_a_store_a_large_import_creates_has_16k_pages_and_others_keep_theirs(tmp_path, capsys, reading):
    """Real rows (5.5 KB) overflowed 4 KB pages: SQLite wrote a million of them at half the speed (issue 38).
    Only a store created for a large import gets 16 KB pages: a sweep commits row by row, whole pages each."""
    rc, err, store = _import(tmp_path, _doc([_row(f"k{i}") for i in range(3)]), capsys)
    assert rc == 0, err
    with sqlite3.connect(store) as con:
        assert con.execute("PRAGMA page_size").fetchone()[0] == (16384 if reading == "streamed" else 4096)
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 3
    Store(tmp_path / "plain.sqlite").close()
    with sqlite3.connect(tmp_path / "plain.sqlite") as con:
        assert con.execute("PRAGMA page_size").fetchone()[0] == 4096
    old = tmp_path / "old.sqlite"
    Store(old).close()
    Store(old, page_size=16384).close()  # an existing store keeps its own
    with sqlite3.connect(old) as con:
        assert con.execute("PRAGMA page_size").fetchone()[0] == 4096


def test_a_store_a_large_import_creates_is_written_through_a_rollback_journal_then_wal(tmp_path, capsys, reading,
                                                                                      monkeypatch):
    """Issue 38: in WAL mode each page of a new store's import was written twice (the -wal, then the checkpoint);
    a store the import created is written through a rollback journal, and is in WAL mode again after."""
    from workbench.store import exchange

    modes = []
    real = exchange._RowWriter.__call__

    def spy(self, rows, plain, start):
        modes.append(self.c.execute("PRAGMA journal_mode").fetchone()[0])
        return real(self, rows, plain, start)

    monkeypatch.setattr(exchange._RowWriter, "__call__", spy)
    rc, err, store = _import(tmp_path, _doc([_row(f"k{i}") for i in range(3)]), capsys)
    assert rc == 0, err
    assert set(modes) == ({"delete"} if reading == "streamed" else set())
    with sqlite3.connect(store) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 3
    modes.clear()  # into the store that exists now: WAL throughout (a reader of it is never locked out)
    rc, err, _ = _import(tmp_path, _doc([_row(f"k{i}") for i in range(3, 6)]), capsys)
    assert rc == 0, err
    assert set(modes) <= {"wal"}
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 6


def test_the_rollback_journal_is_skipped_while_another_connection_holds_the_store(tmp_path):
    """Leaving WAL needs the store to itself: with a reader open, the import stays in WAL (and says so)."""
    from workbench.store.bulk_journal import rollback_journal

    store = Store(tmp_path / "s.sqlite")
    with rollback_journal(store._conn) as switched:
        assert switched and store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = sqlite3.connect(tmp_path / "s.sqlite")
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM results").fetchone()
    store._conn.execute("PRAGMA busy_timeout = 100")
    with rollback_journal(store._conn) as switched:
        assert not switched and store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with rollback_journal(store._conn, enabled=False) as switched:
        assert not switched
    reader.close()
    store.close()


def test_a_spec_many_runs_share_is_checked_once_and_a_bad_one_is_named_by_its_run():
    """Issue 38: a sweep's 14 KB spec took jsonschema 25 ms a run (100 runs of one suite: 2.5 s); a spec an
    earlier run has is not walked again, and any other spec still is."""
    from workbench.store.import_schema import _specs_once, validate_export

    good = {"kernels": ["saxpy"], "budget_s": 0.04}
    runs = [{"run_id": f"r{i}", "status": "finished", "spec": dict(good)} for i in range(3)]
    assert [r["spec"] for r in _specs_once(runs)] == [good, None, None]
    assert [r["spec"] for r in runs] == [good, good, good]  # the document itself keeps every spec
    doc = {"format": "workbench-results", "version": 1, "runs": runs, "environments": [], "results": [],
           "peaks": []}
    validate_export(doc, "f.json")
    runs.append({"run_id": "r3", "status": "finished", "spec": {**good, "budget_s": -1}})
    with pytest.raises(ValueError, match=r"runs\[3\]\.spec\.budget_s"):
        validate_export(doc, "f.json")
    runs[:] = [{"run_id": f"r{i}", "status": "finished", "spec": {**good, "budget_s": -1}} for i in range(2)]
    with pytest.raises(ValueError, match=r"runs\[0\]\.spec\.budget_s"):
        validate_export(doc, "f.json")


@pytest.mark.parametrize("texts, ok", [
    (["[1.5e-3, 2e-3]", "[3, 4.25]", "[]"], True),
    (["[1", "2]"], False),  # neither text is JSON, though the two joined are
    (["[1],[2]", "[3"], False),
    (["[1]", "2],[3]"], False),
    (["[1, [2]]"], False), (["[true]"], False), (["[null, 1.0]"], False), (['["1"]'], False), (["[1e999]"], False),
    (["[99999999999999999999]"], False), (["[-9223372036854775809]"], False), (["[NaN]"], False),
    ([" [1.0]"], False), (["[1.0] "], False), (["{\"n\": 1}"], False), (["[1.0]", "[2.0]", "[3.0]"], True),
    # a lone non-number compares with nothing in its own list: the comparison across lists refuses it
    (["[[1]]"], False), (['["a"]'], False), (["[{}]"], False), (["[null]"], False), (['["a", "b"]'], False),
    (["[1.0, false]"], False), (["[2.0]", "[true]"], False), (["[9.3e18]"], False), (["[-9.3e18]"], False),
    (["[9.2e18, -9.2e18]", "[0]"], True), (["[]", "[]"], True), ([], True),
])
def test_the_one_decode_check_of_sample_texts_passes_only_what_each_text_passes(texts, ok):
    """Issue 38: a batch's sample texts are judged together (each decoded alone, the numbers by each list's max and
    min); True only when each text alone is a plain list."""
    from workbench.store.plain_rows import plain_json_column, plain_number_lists

    assert plain_number_lists(texts) is ok
    if ok:
        assert all(plain_json_column("samples_s", json.loads(t)) for t in texts)


@pytest.mark.parametrize("names, rows", [
    (["round_ids"], [("r0,r1",), ("r2",), ("",)]),
    (["round_ids", "precision"], [("r0", "tf32"), ("é\u2028\"\\\x01", "日本")]),
    (["note", "flag", "n", "x"], [(None, True, 3, 1.5), ("s", False, -2, 1e-300), ("t", None, 2**62, 3.0)]),
    (["a\"b", "\x07"], [("v", "w"), ("v\n", None)]),
])
def test_extra_fields_are_the_text_json_dumps_writes(names, rows):
    """Issue 38: the fields that are no column are encoded a column at a time; the text is json.dumps's."""
    from workbench.store.import_stream import extra_texts

    columns = list(zip(*rows, strict=True))
    assert extra_texts(names, columns) == tuple(json.dumps(dict(zip(names, r, strict=True))) for r in rows)
