"""The results store: rows and runs round-trip, two processes write at once, imports merge idempotently,
and loading a hostile file executes nothing."""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from workbench.core.record import RESULT_COLUMNS
from workbench.store.database import EXPORT_FORMAT, Store, default_store_path

REPO = Path(__file__).resolve().parents[2]


def _row(run_id: str, key: str, **kw) -> dict:
    row = {"run_id": run_id, "cell_key": key, "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
           "dtype": "float32", "params": json.dumps({"n": 8}), "status": "ok", "median_s": 1e-3,
           "samples_s": json.dumps([1e-3, 1.1e-3]), "env_id": "env0"}
    row.update(kw)
    return row


def test_round_trip_of_runs_rows_environments_and_peaks(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run(name="first", suite="quick", argv=["workbench", "bench"], env_id="env0",
                        spec={"kernels": ["saxpy"]})
    st.add_environment("env0", {"host": {"cpu": "test"}})
    st.record(_row(run_id, "a", max_error=float("inf"), custom_field=3))
    st.record(_row(run_id, "b", status="error", median_s=None))
    st.record(_row(run_id, "b", status="ok"))  # the same cell again replaces, never duplicates
    st.set_peak("env0", "numpy", "bandwidth_gbps", "float32", 12.5, "GB/s", "saxpy")
    st.set_run_status(run_id, "finished", wall_s=1.5)

    df = st.results()
    assert list(df.columns[:len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    assert len(df) == 2 and sorted(df["cell_key"]) == ["a", "b"]
    assert df.set_index("cell_key").loc["b", "status"] == "ok"
    assert df.set_index("cell_key").loc["a", "custom_field"] == 3  # unknown fields survive
    assert json.loads(df["samples_s"][0]) == [1e-3, 1.1e-3]
    runs = st.runs()
    assert runs.loc[0, "status"] == "finished" and runs.loc[0, "n_results"] == 2 and runs.loc[0, "n_ok"] == 2
    assert st.run(run_id)["spec"] == {"kernels": ["saxpy"]}
    assert st.environment("env0") == {"host": {"cpu": "test"}}
    assert st.peak_values("env0", "numpy") == {("bandwidth_gbps", "float32"): 12.5}
    assert st.cell_keys(run_id) == {"a", "b"}
    assert st.latest_run_id() == run_id and st.latest_run_id(unfinished=True) is None
    with pytest.raises(ValueError, match="unknown run id"):
        st.run("nope")
    with pytest.raises(KeyError):
        st.environment("nope")
    mode = sqlite3.connect(tmp_path / "s.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_default_path_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("WORKBENCH_STORE", raising=False)
    assert default_store_path() == Path("workbench-results.sqlite")
    monkeypatch.setenv("WORKBENCH_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"


WRITER = """
import sys, time
from workbench.store.database import Store
path, tag, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
st = Store(path)
time.sleep(max(0.0, start - time.time()))  # both writers begin together
run_id = st.new_run(name=tag)
for i in range(n):
    st.record({"run_id": run_id, "cell_key": f"{tag}-{i}", "kernel": "k", "status": "ok", "median_s": i * 1e-6})
st.set_run_status(run_id, "finished")
print(run_id)
"""


def test_two_processes_writing_one_store_lose_nothing(tmp_path):
    path = tmp_path / "shared.sqlite"
    Store(path).close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    n = 600
    start = time.time() + 3.0
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(n), str(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("p1", "p2")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    st = Store(path)
    df = st.results()
    assert len(df) == 2 * n
    assert set(df["cell_key"]) == {f"{t}-{i}" for t in ("p1", "p2") for i in range(n)}
    assert sorted(st.runs()["status"]) == ["finished", "finished"]


def test_export_then_import_is_idempotent(tmp_path):
    src = Store(tmp_path / "a.sqlite")
    r1 = src.new_run(name="one", env_id="envA")
    r2 = src.new_run(name="two", env_id="envA")
    src.add_environment("envA", {"host": "A"})
    src.set_peak("envA", "numpy", "gflops", "float32", 99.0, "GFLOP/s", "gemm")
    for i in range(5):
        src.record(_row(r1, f"k{i}", env_id="envA", max_error=float("inf") if i == 0 else 1e-7))
    src.record(_row(r2, "other", env_id="envA"))
    out = src.export([r1], tmp_path / "export.json")
    doc = json.loads(out.read_text())  # strict JSON: no NaN / Infinity tokens
    assert doc["format"] == EXPORT_FORMAT and doc["version"] == 1
    assert [r["run_id"] for r in doc["runs"]] == [r1] and len(doc["results"]) == 5
    assert doc["environments"][0]["record"] == {"host": "A"} and doc["peaks"][0]["value"] == 99.0

    dst = Store(tmp_path / "b.sqlite")
    local = dst.new_run(name="local")
    dst.record(_row(local, "mine"))
    first = dst.import_file(out)
    assert first == {"runs": 1, "environments": 1, "results": 5, "peaks": 1}
    before = dst.results().sort_values(["run_id", "cell_key"]).reset_index(drop=True)
    second = dst.import_file(out)
    assert second == {"runs": 0, "environments": 0, "results": 0, "peaks": 0}
    after = dst.results().sort_values(["run_id", "cell_key"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(before, after)
    assert len(after) == 6 and len(dst.runs()) == 2
    assert dst.environment("envA") == {"host": "A"}
    with pytest.raises(ValueError, match="unknown run id"):
        src.export(["missing"], tmp_path / "x.json")


def test_import_rejects_other_documents(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(ValueError, match="not a workbench results export"):
        Store(tmp_path / "s.sqlite").import_file(p)
    p.write_text(json.dumps({"format": EXPORT_FORMAT, "version": 999}))
    with pytest.raises(ValueError, match="newer"):
        Store(tmp_path / "s.sqlite").import_file(p)


class _Boom:
    """Unpickling this would create a file: proof that something was executed."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_loading_hostile_values_executes_nothing(tmp_path):
    canary = tmp_path / "pwned"
    payload = pickle.dumps(_Boom(str(canary)))
    code = f"__import__('pathlib').Path({str(canary)!r}).touch()"
    doc = {"format": EXPORT_FORMAT, "version": 1,
           "runs": [{"run_id": "evil", "name": code, "argv": [code], "spec": {"kernels": [code]}}],
           "environments": [{"env_id": "e", "record": {"host": code, "pickle": payload.hex()}}],
           "results": [_row("evil", "k1", message=code, traceback=payload.decode("latin-1"),
                            extra_field={"__reduce__": code}, noise_note="{{7*7}}")],
           "peaks": [{"env_id": "e", "backend": code, "metric": "m", "dtype": "float32", "value": 1.0}]}
    f = tmp_path / "evil.json"
    f.write_text(json.dumps(doc))
    st = Store(tmp_path / "s.sqlite")
    st.import_file(f)
    # values of the wrong type (code where a number or a JSON list belongs) are refused before any write
    for field, value in (("median_s", "{{7*7}}"), ("params", code), ("samples_s", payload.decode("latin-1"))):
        bad = tmp_path / f"bad-{field}.json"
        bad.write_text(json.dumps({**doc, "results": [_row("evil", "k9", **{field: value})]}))
        with pytest.raises(ValueError, match=f"results\\[0\\].{field}"):
            st.import_file(bad)
    assert "k9" not in st.cell_keys("evil")
    # and a pickle smuggled straight into the SQLite file, as bytes in a text column
    st.record(_row("evil", "k2"))
    with sqlite3.connect(tmp_path / "s.sqlite") as raw:
        raw.execute("UPDATE results SET traceback = ?, extra = ? WHERE cell_key = 'k2'",
                    (sqlite3.Binary(payload), json.dumps({"x": code})))
    df = st.results()
    runs = st.runs()
    env = st.environment("e")
    st.export(None, tmp_path / "again.json")
    Store(tmp_path / "t.sqlite").import_file(tmp_path / "again.json")
    assert not canary.exists()
    assert df.set_index("cell_key").loc["k1", "message"] == code  # stays inert text
    assert df.set_index("cell_key").loc["k2", "traceback"] == payload  # raw bytes, never unpickled
    assert runs.loc[0, "name"] == code and env["host"] == code


def test_a_row_stored_again_is_updated_in_place(tmp_path):
    """A sweep with rounds stores a cell after every round: the row changes, its position does not."""
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run()
    for key in ("a", "b", "c"):
        st.record(_row(run_id, key, rounds=1, round_medians_s=json.dumps([1e-3])))
    st.record(_row(run_id, "a", rounds=2, round_medians_s=json.dumps([1e-3, 2e-3]), median_s=1.5e-3, extra_x=1))
    rows = st.rows([run_id])
    assert [r["cell_key"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["rounds"] == 2 and json.loads(rows[0]["round_medians_s"]) == [1e-3, 2e-3]
    assert rows[0]["median_s"] == 1.5e-3 and rows[0]["extra_x"] == 1 and len(st.results()) == 3


def test_a_run_id_drawn_twice_is_drawn_again(tmp_path, monkeypatch):
    """Run ids share their second and 24 random bits: 400 runs made in one second once drew the same id."""
    from workbench.store import database as store_mod

    ids = iter(["20261126T000000Z-aaaaaa", "20261126T000000Z-aaaaaa", "20261126T000000Z-bbbbbb"])
    monkeypatch.setattr("workbench.store.runs.new_run_id", lambda: next(ids))  # where Store.new_run finds it
    st = store_mod.Store(tmp_path / "s.sqlite")
    assert st.new_run(name="one") == "20261126T000000Z-aaaaaa"
    assert st.new_run(name="two") == "20261126T000000Z-bbbbbb"
