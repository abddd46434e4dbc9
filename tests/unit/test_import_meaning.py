"""Issue 24, imports that lie: an export is checked by meaning, not only by schema — contradictions inside the
file or with the store, impossible numbers, rows reports cannot use, running runs, unknown environments and
peak details that are not JSON — each refused naming the exact problem (nothing written), or imported as
documented (``Store.import_file``)."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.store.database import Store


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def reading(request, monkeypatch) -> str:
    """Every case twice: the file parsed whole, and read row by row (as files of 64 MB and more are)."""
    if request.param == "streamed":
        monkeypatch.setattr("workbench.store.import_stream.STREAM_FROM_BYTES", 0)
    return request.param


def _row(run_id: str, key: str, **kw) -> dict:
    row = {"run_id": run_id, "cell_key": key, "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
           "dtype": "float32", "params": json.dumps({"n": 8}), "size": 8, "status": "ok", "median_s": 1e-3,
           "samples_s": json.dumps([1e-3, 1.1e-3]), "env_id": "envA"}
    row.update(kw)
    return row


def _doc() -> dict:
    return {"format": "workbench-results", "version": 1,
            "runs": [{"run_id": "r1", "created_at": "2026-01-01T00:00:00.000Z", "name": "one", "status": "finished",
                      "env_id": "envA", "argv": ["workbench", "bench"], "spec": None}],
            "environments": [{"env_id": "envA", "record": {"host": "A"}}],
            "results": [_row("r1", "k1"), _row("r1", "k2", median_s=2e-3)],
            "peaks": [{"env_id": "envA", "backend": "numpy", "metric": "gflops", "dtype": "float32", "value": 9.0,
                       "unit": "GFLOP/s", "method": "gemm", "details": {"n": 1}}]}


def _snapshot(path: Path) -> tuple:
    with sqlite3.connect(path) as con:
        return (con.execute("SELECT run_id, name, status FROM runs ORDER BY run_id").fetchall(),
                con.execute("SELECT run_id, cell_key, median_s FROM results ORDER BY 1, 2").fetchall())


def _import(tmp_path: Path, doc: dict, store: Path, capsys) -> tuple[int, str]:
    f = tmp_path / "in.json"
    f.write_text(json.dumps(doc))
    rc = main(["import", str(f), "--store", str(store)])
    return rc, capsys.readouterr().err


def _mutated(mutate) -> dict:
    d = _doc()
    mutate(d)
    return d


FILE_CASES = [
    ("run-twice-differing", lambda d: d["runs"].append({**d["runs"][0], "name": "other"}),
     "run 'r1' is listed again (first at runs[0]) with a different name"),
    ("cell-twice-differing", lambda d: d["results"].append(_row("r1", "k1", median_s=5.0)),
     "cell 'k1' of run 'r1' is listed again (first at results[0]) with"),
    ("negative-median", lambda d: d["results"][0].update(median_s=-1e-3),
     "results[0].median_s: -0.001 is out of range"),
    ("negative-size", lambda d: d["results"][1].update(size=-8), "results[1].size: -8 is out of range"),
    ("four-fields", lambda d: d["results"].__setitem__(0, {"run_id": "r1", "cell_key": "k1", "kernel": "saxpy",
                                                           "median_s": 1.0}), "results[0]: 'variant' is a required"),
    ("null-backend", lambda d: d["results"][0].update(backend=None), "results[0].backend"),
    ("peak-details-not-json", lambda d: d["peaks"][0].update(details="{not json"), "peaks[0].details (JSON text)"),
    ("peak-details-list", lambda d: d["peaks"][0].update(details="[1, 2]"), "peaks[0].details: a list"),
    ("unknown-run-status", lambda d: d["runs"][0].update(status="paused"), "runs[0].status"),
]


@pytest.mark.parametrize("case", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_file_that_contradicts_itself_or_cannot_be_true_is_refused(case, tmp_path, capsys):
    name, mutate, needle = case
    store = tmp_path / "s.sqlite"
    Store(store).close()
    before = _snapshot(store)
    rc, err = _import(tmp_path, _mutated(mutate), store, capsys)
    assert rc == 2 and needle in err, err
    assert err.count("\n") == 1
    assert _snapshot(store) == before


def test_exact_repeats_are_harmless(tmp_path, capsys):
    doc = _mutated(lambda d: (d["runs"].append(copy.deepcopy(d["runs"][0])),
                              d["results"].append(copy.deepcopy(d["results"][0]))))
    rc, err = _import(tmp_path, doc, tmp_path / "s.sqlite", capsys)
    assert rc == 0, err
    assert len(_snapshot(tmp_path / "s.sqlite")[1]) == 2


def test_a_run_id_the_store_has_for_another_run_is_refused(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    assert _import(tmp_path, _doc(), store, capsys)[0] == 0
    before = _snapshot(store)
    other = _mutated(lambda d: (d["runs"][0].update(name="someone else's"),
                                d["results"].append(_row("r1", "k3"))))
    rc, err = _import(tmp_path, other, store, capsys)
    assert rc == 2 and "run 'r1' is already in" in err and "different name" in err, err
    assert _snapshot(store) == before  # k3 was not slipped in either


def test_a_cell_the_store_has_with_another_median_is_refused(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    assert _import(tmp_path, _doc(), store, capsys)[0] == 0
    before = _snapshot(store)
    rc, err = _import(tmp_path, _mutated(lambda d: d["results"][1].update(median_s=9.0)), store, capsys)
    assert rc == 2 and "cell 'k2' of run 'r1' is already in" in err and "median_s 0.002" in err, err
    assert _snapshot(store) == before
    rc, err = _import(tmp_path, _mutated(lambda d: d["results"].append(_row("r1", "k4"))), store, capsys)
    assert rc == 0, err  # new cells of a known run still merge
    assert len(_snapshot(store)[1]) == 3


def test_a_running_run_is_imported_as_interrupted_and_resumable(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    doc = _mutated(lambda d: d["runs"][0].update(status="running", owner_pid=1, owner_host="elsewhere"))
    assert _import(tmp_path, doc, store, capsys)[0] == 0
    s = Store(store)
    run = s.run("r1")
    assert run["status"] == "interrupted" and run["owner_pid"] is None
    assert s.latest_run_id(unfinished=True) == "r1"
    assert not [p for p in s.check() if "r1" in p]


def test_an_undescribed_environment_is_recorded_as_such(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    doc = _mutated(lambda d: d["results"][0].update(env_id="envZ"))
    assert _import(tmp_path, doc, store, capsys)[0] == 0
    record = Store(store).environment("envZ")
    assert record["described"] is False and "in.json" in record["note"]
    assert Store(store).environment("envA") == {"host": "A"}


def test_peak_details_as_json_text_are_stored_as_an_object_and_export_again(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    doc = _mutated(lambda d: d["peaks"][0].update(details='{"gemm": 384}'))
    assert _import(tmp_path, doc, store, capsys)[0] == 0
    out = Store(store).export(None, tmp_path / "again.json")
    assert json.loads(out.read_text())["peaks"][0]["details"] == {"gemm": 384}
