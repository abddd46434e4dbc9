"""Issue 24, stores that lose or damage data: a -wal deleted after SIGKILL costs at most a few rows and
`store check` names the run; a store with damaged pages gives every command one message saying what to do
(exit 2) and nothing writes into it; a 0-byte store left by an early kill reads as a new, empty store."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.report.sample_data import synthetic_environment, synthetic_results
from workbench.store.database import CHECKPOINT_EVERY_ROWS, Store, StoreError

WRITER = """
import os, signal, sys
from workbench.report.sample_data import synthetic_results
from workbench.store.database import Store
s = Store(sys.argv[1])
rid = s.new_run(name="killed", env_id="env-demo")
rows = synthetic_results(rid, seed=1).to_dict("records")[: int(sys.argv[2])]
for row in rows:
    s.record(row)
print(rid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close, no final checkpoint
"""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_deleted_wal_after_sigkill_loses_at_most_a_few_rows_and_check_names_the_run(tmp_path, capsys):
    path = tmp_path / "r.sqlite"
    n = 20
    out = subprocess.run([sys.executable, "-c", WRITER, str(path), str(n)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == -signal.SIGKILL, out.stderr
    run_id = out.stdout.split()[0]
    Path(f"{path}-wal").unlink()  # what the user did
    Path(f"{path}-shm").unlink(missing_ok=True)
    with sqlite3.connect(path) as con:
        kept = con.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,)).fetchone()[0]
        assert con.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone() == ("running",)
    assert n - kept < CHECKPOINT_EVERY_ROWS  # without the checkpoints every row and the run were gone
    assert main(["store", "check", "--store", str(path)]) == 1
    report = capsys.readouterr().out
    assert run_id in report and f"it has {kept} rows" in report and "--resume" in report
    assert Store(path, read_only=True).latest_run_id(unfinished=True) == run_id  # what --resume picks


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "d.sqlite"
    s = Store(path)
    for i in range(3):
        rid = s.new_run(name=f"r{i}", env_id="env-demo")
        s.add_environment("env-demo", synthetic_environment())
        for row in synthetic_results(rid, seed=1).to_dict("records"):
            s.record(row)
        s.set_run_status(rid, "finished", wall_s=1.0)
    s.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:  # scribble over the middle pages (the rows' b-tree)
        for off in range(size // 3, 2 * size // 3, 4096):
            f.seek(off + 100)
            f.write(b"\xde\xad\xbe\xef" * 200)
    return path


@pytest.mark.parametrize("argv", [["runs"], ["report", "latest", "--out", "OUT.html"], ["export", "-o", "OUT.json"],
                                  ["compare", "latest", "latest"]])
def test_a_damaged_store_gives_one_message_saying_what_to_do(tmp_path, capsys, argv):
    path = _damaged(tmp_path)
    before = _digest(path)
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    assert main([*argv, "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err
    assert "damaged" in err and "workbench store check" in err and "import" in err
    assert _digest(path) == before


def test_nothing_writes_into_a_damaged_store(tmp_path, capsys):
    path = _damaged(tmp_path)
    before = _digest(path)
    good = tmp_path / "good.json"
    src = tmp_path / "src.sqlite"
    s = Store(src)
    rid = s.new_run(name="x", env_id="env-demo")
    s.record(synthetic_results(rid, seed=2).to_dict("records")[0])
    s.export(None, good)
    s.close()
    assert main(["import", str(good), "--store", str(path)]) == 2
    assert "damaged" in capsys.readouterr().err
    with pytest.raises(StoreError, match="store check"):
        Store(path)  # what bench opens: refused before the schema or a run is written
    assert _digest(path) == before
    assert main(["store", "check", "--store", str(path)]) == 1  # check itself still examines it
    out = capsys.readouterr().out
    assert "SQLite integrity check" in out and "nothing will be written" in out


def test_a_zero_byte_store_is_a_new_empty_store(tmp_path, capsys):
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    assert main(["runs", "--store", str(path)]) == 0
    assert "no runs in" in capsys.readouterr().out
    assert path.stat().st_size == 0  # reading wrote nothing
    s = Store(path)  # a writer makes it a store
    rid = s.new_run(name="first")
    s.close()
    assert json.loads(json.dumps(Store(path, read_only=True).run(rid)))["name"] == "first"


def test_a_finished_run_is_in_the_main_file_without_its_wal(tmp_path):
    path = tmp_path / "f.sqlite"
    s = Store(path)
    rid = s.new_run(name="done")
    for row in synthetic_results(rid, seed=3).to_dict("records")[:3]:
        s.record(row)
    s.set_run_status(rid, "finished")
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(path.read_bytes())  # the main file alone, while the writer is still open
    with sqlite3.connect(copy) as con:
        assert con.execute("SELECT status FROM runs").fetchone() == ("finished",)
        assert con.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 3
    s.close()
    os.unlink(copy)


def test_store_check_counts_the_cells_an_interrupted_run_lacks(tmp_path):
    from workbench.sweep.driver import SweepSpec

    spec = SweepSpec(kernels=["vector_add"], backends=["numpy"], sizes=[(64,), (128,)], rounds=3)
    planned = len(spec.cells())
    s = Store(tmp_path / "r.sqlite")
    rid = s.new_run(name="cut short", spec=spec.to_dict())
    row = synthetic_results(rid, seed=1).to_dict("records")[0]
    s.record({**row, "status": "ok", "rounds": 1})  # one cell, one of its three rounds; then the process died
    from workbench.cli.cmd_store import planned_cells

    found = [p for p in s.check(planned=planned_cells) if rid in p]
    assert found and f"it has 1 of its {planned} cells (1 with fewer rounds than 3)" in found[0]
    assert "rows are missing" in found[0] and f"--resume {rid}" in found[0]
