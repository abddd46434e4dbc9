"""Stores that cannot be opened, read-only readers, run ownership, the WAL, run status and wall time, a full
disk, and `workbench store check / drop`: a clear error, and nothing stored is ever lost."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.cli import main as cli
from workbench.store.database import Store, StoreError, open_store
from workbench.sweep.driver import SweepSpec, run_sweep

FAST = {"budget_s": 0.02, "warmup_s": 0.0, "min_samples": 3, "max_samples": 10, "rounds": 1}


def _spec(**kw) -> SweepSpec:
    return SweepSpec(kernels=["vector_add"], variants=["numpy"], backends=["numpy"], sizes=[(1000,), (2000,)],
                     **{**FAST, **kw})


@pytest.fixture
def filled(tmp_path) -> Path:
    path = tmp_path / "s.sqlite"
    run_sweep(_spec(), store=path, progress=False, name="first")
    return path


def _snapshot(path: Path) -> tuple[int, int]:
    st = Store(path, read_only=True)
    try:
        return len(st.runs()), len(st.results())
    finally:
        st.close()


# -- stores that cannot be opened ---------------------------------------------------------------------------

@pytest.mark.parametrize("make, words", [
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.write_text("hello, I am a text file\n" * 200), "not a workbench results store"),
    (lambda p: p.write_bytes(b"\0" * 8192), "not a workbench results store"),
])
def test_a_path_that_is_not_a_store_is_refused_and_left_alone(tmp_path, make, words):
    path = tmp_path / "bad.sqlite"
    make(path)
    before = path.read_bytes() if path.is_file() else None
    for read_only in (False, True):
        with pytest.raises(StoreError, match=words) as err:
            Store(path, read_only=read_only)
        assert str(path) in str(err.value)
    assert (path.read_bytes() if path.is_file() else None) == before


def test_a_truncated_store_is_refused_with_advice(filled, tmp_path):
    Store(filled).close()
    bad = tmp_path / "cut.sqlite"
    bad.write_bytes(filled.read_bytes()[:3000])
    with pytest.raises(StoreError, match="damaged|not a workbench") as err:
        Store(bad, read_only=True).results()
    assert "store check" in str(err.value) or "not a workbench" in str(err.value)


def test_an_empty_store_path_is_refused():
    with pytest.raises(StoreError, match="store path is empty"):
        Store("")
    with pytest.raises(StoreError, match="store path is empty"):
        open_store("  ")


def test_an_sqlite_file_without_our_tables_is_not_a_store(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a workbench results store"):
        Store(path, read_only=True)


# -- readers never create or change ---------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["runs"], ["export", "-o", "OUT"], ["report", "--out", "OUT.html"],
                                  ["store", "check"], ["bench", "--resume"]])
def test_readers_never_create_a_store_for_a_mistyped_path(tmp_path, capsys, argv):
    missing = tmp_path / "typo.sqlite"
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    assert cli([*argv, "--store", str(missing)]) == 2
    assert "no results store at" in capsys.readouterr().err
    assert not missing.exists()


def test_reading_writes_nothing(filled):
    Store(filled).close()  # checkpointed: the main file holds everything
    stamp = (filled.stat().st_mtime_ns, filled.read_bytes())
    st = Store(filled, read_only=True)
    assert len(st.results()) == 2 and len(st.runs()) == 1
    st.close()
    assert (filled.stat().st_mtime_ns, filled.read_bytes()) == stamp


def test_an_immutable_store_still_lists(filled, capsys):
    Store(filled).close()
    if subprocess.run(["chattr", "+i", str(filled)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported on this filesystem")
    try:
        assert cli(["runs", "--store", str(filled)]) == 0
        assert "first" in capsys.readouterr().out
        assert cli(["export", "-o", str(filled.parent / "e.json"), "--store", str(filled)]) == 0
    finally:
        subprocess.run(["chattr", "-i", str(filled)])
    assert _snapshot(filled) == (1, 2)


def test_a_store_on_a_read_only_mount_still_lists(filled, tmp_path, capsys):
    Store(filled).close()
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(filled, data / filled.name)
    ro = tmp_path / "ro"
    ro.mkdir()
    if subprocess.run(["mount", "--bind", str(data), str(ro)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here (needs privileges)")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        assert cli(["runs", "--store", str(ro / filled.name)]) == 0
        assert "first" in capsys.readouterr().out
    finally:
        subprocess.run(["umount", "-l", str(ro)])  # lazy: the command's store may still be open


# -- the WAL, run status and wall time --------------------------------------------------------------------------

def test_the_sqlite_file_alone_holds_every_row_after_a_run(filled, tmp_path):
    copy = tmp_path / "copy.sqlite"
    shutil.copy(filled, copy)  # as anyone would: without the -wal file
    assert _snapshot(copy) == (1, 2)


def test_resuming_a_finished_run_changes_nothing(filled):
    st = Store(filled)
    run_id = st.latest_run_id()
    before = st.run(run_id)
    out = run_sweep(None, store=st, resume_run_id=run_id, progress=False)
    after = st.run(run_id)
    assert not out.rows and {k: after[k] for k in ("status", "wall_s", "finished_at")} == \
        {k: before[k] for k in ("status", "wall_s", "finished_at")}


def test_the_wall_time_is_kept_with_every_row(tmp_path):
    path = tmp_path / "s.sqlite"
    out = run_sweep(_spec(), store=path, progress=False)
    st = Store(path)
    st.set_run_status(out.run_id, "running")
    st.record({**st.rows(out.run_id)[0]}, run_wall_s=12.5)
    assert st.run(out.run_id)["wall_s"] == 12.5  # a run killed now keeps 12.5 s, not nothing


def test_a_full_disk_mid_sweep_stops_with_a_clear_error_and_a_resumable_run(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    calls = {"n": 0}
    real = Store.record

    def record(self, row, run_wall_s=None):
        calls["n"] += 1
        if calls["n"] >= 2:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, row, run_wall_s=run_wall_s)

    monkeypatch.setattr(Store, "record", record)
    with pytest.raises(StoreError, match="disk is full") as err:
        run_sweep(_spec(), store=path, progress=False)
    assert "1 of 2 cells" in str(err.value)
    monkeypatch.setattr(Store, "record", real)
    st = Store(path)
    run_id = st.latest_run_id(unfinished=True)
    assert run_id is not None and st.run(run_id)["status"] == "interrupted"  # not "finished" with cells missing
    out = run_sweep(None, store=st, resume_run_id=run_id, progress=False)
    assert len(st.rows(run_id)) == 2 and st.run(run_id)["status"] == "finished" and not out.interrupted


def test_a_real_full_disk_on_a_small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs privileges)")
    try:
        store = mnt / "s.sqlite"
        env = {**os.environ, "WORKBENCH_AUTO_PEAKS": "0"}
        first = subprocess.run([sys.executable, "-m", "workbench", "bench", "--kernels", "vector_add", "--backends",
                                "numpy", "--variants", "numpy", "--sizes", "999", "--budget", "0.02", "--rounds", "1",
                                "--store", str(store), "--quiet"], capture_output=True, text=True, timeout=600, env=env)
        assert first.returncode == 0, first.stderr[-1500:]
        # Leave ~48 KiB free whatever the rows' size: the disk fills while the next sweep records rows, not
        # while it creates its run (which would leave no run to call interrupted).
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        (mnt / "filler").write_bytes(b"\0" * max(0, free - 48 * 1024))
        done = subprocess.run([sys.executable, "-m", "workbench", "bench", "--kernels", "vector_add", "--backends",
                               "numpy", "--variants", "numpy", "--sizes", ",".join(str(1000 + i) for i in range(60)),
                               "--budget", "0.02", "--rounds", "1", "--store", str(store), "--quiet"],
                              capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 2, (done.returncode, done.stderr[-1500:])
        assert "disk is full" in done.stderr and "Traceback" not in done.stderr
        runs = subprocess.run([sys.executable, "-m", "workbench", "runs", "--store", str(store)],
                              capture_output=True, text=True, timeout=120, env=env)
        assert runs.returncode == 0 and "interrupted" in runs.stdout, runs.stdout + runs.stderr
    finally:
        subprocess.run(["umount", "-l", str(mnt)])


# -- ownership ------------------------------------------------------------------------------------------------

def test_a_run_written_by_a_live_process_is_never_resumed_by_another(filled):
    st = Store(filled)
    run_id = st.latest_run_id()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)
        with st._write() as c:  # as if `sleeper` were writing the run
            c.execute("UPDATE runs SET status = 'running', owner_host = ?, owner_pid = ?, heartbeat_at = ? "
                      "WHERE run_id = ?", (__import__("socket").gethostname(), sleeper.pid,
                                           __import__("workbench.store.database", fromlist=["now_iso"]).now_iso(),
                                           run_id))
        assert st.live_owner(run_id) and f"process {sleeper.pid}" in st.live_owner(run_id)
        assert st.latest_run_id(unfinished=True) is None  # plain --resume does not pick it
        with pytest.raises(StoreError, match=f"being written by process {sleeper.pid}"):
            run_sweep(None, store=st, resume_run_id=run_id, progress=False)
        with pytest.raises(StoreError, match="being written"):
            st.drop_run(run_id)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert st.live_owner(run_id) is None and st.latest_run_id(unfinished=True) == run_id
    run_sweep(None, store=st, resume_run_id=run_id, progress=False)
    assert st.run(run_id)["status"] == "finished"


# -- store check / drop -----------------------------------------------------------------------------------------

def test_store_check_explains_what_it_finds_and_drop_removes_a_run(filled, capsys):
    st = Store(filled)
    run_id = st.latest_run_id()
    assert cli(["store", "check", "--store", str(filled)]) == 0
    assert "no problems found" in capsys.readouterr().out
    with st._write() as c:
        c.execute("UPDATE runs SET status = 'running', owner_pid = NULL WHERE run_id = ?", (run_id,))
        c.execute("UPDATE results SET run_id = 'ghost' WHERE rowid = (SELECT MIN(rowid) FROM results)")
    assert cli(["store", "check", "--store", str(filled)]) == 1
    out = capsys.readouterr().out
    assert "marked running but no live process writes it" in out and f"--resume {run_id}" in out
    assert "1 rows belong to run 'ghost'" in out
    assert cli(["store", "drop", "nope", "--store", str(filled)]) == 2
    assert "unknown run id 'nope'" in capsys.readouterr().err
    assert cli(["store", "drop", run_id, "--store", str(filled)]) == 0
    assert "dropped run" in capsys.readouterr().out
    assert run_id not in set(Store(filled).runs()["run_id"])
