"""Issue 38 (hostile round four), the file and terminal groups: outputs that are not regular files (1), bounded
reads (2), stored text capped and cleaned (4), locale (5), terminal control from kernels and users (6), stores
that are not ours to write (8), closed or odd stdout (12), read-only stores (14), outputs resolved before any
kernel runs (17)."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import config
from workbench.cli import main
from workbench.core.output_guard import check_output_path, write_output
from workbench.core.regular_files import read_regular_bytes
from workbench.core.terminal_text import SafeTextStream, terminal_safe
from workbench.store import errors as store_errors
from workbench.store.database import Store, StoreError
from workbench.store.import_schema import load_export
from workbench.store.stored_text import MAX_STORED_LONG_TEXT_CHARS

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, **kw: object) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_AUTO_PEAKS="0")
    env.update(kw.pop("env", {}))  # type: ignore[arg-type]
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True,
                          env=env, timeout=120, **kw)  # type: ignore[call-overload]


def _store_with_run(path: Path, name: str | None = None, message: str = "fine", variant: str = "numpy") -> str:
    st = Store(path)
    run_id = st.new_run(name=name)
    st.record({"run_id": run_id, "cell_key": "c1", "kernel": "saxpy", "variant": variant, "backend": "numpy",
               "dtype": "float32", "status": "error", "message": message})
    st.set_run_status(run_id, "finished")
    st.close()
    return run_id


# -- 1: outputs that are not regular files ----------------------------------------------------------------

def test_a_fifo_or_a_device_is_never_replaced(tmp_path):
    fifo = tmp_path / "f.md"
    os.mkfifo(fifo)
    link = tmp_path / "null.json"
    link.symlink_to(os.devnull)
    for target in (fifo, link, Path("/dev/full")):
        with pytest.raises(ValueError, match="not a regular file"):
            write_output(target, "x", flag="--out")
    with pytest.raises(ValueError, match="FIFO"):
        config.write({}, fifo)
    assert fifo.is_fifo() and Path("/dev/full").is_char_device() and link.resolve() == Path(os.devnull)



def test_caches_named_by_the_environment_never_replace_a_fifo(tmp_path, monkeypatch, caplog):
    """``WORKBENCH_CEILINGS_CACHE=/dev/zero`` turned /dev/zero into a regular file (root, 2026-12-07): the peaks
    cache and the info-probes cache renamed their temporary file over whatever the path named."""
    from workbench.backends import described
    from workbench.roofs import peaks

    fifo = tmp_path / "ceilings.json"
    os.mkfifo(fifo)
    monkeypatch.setenv(peaks.ENV_CEILINGS_CACHE, str(fifo))
    peak = peaks.Peak("numpy", "bandwidth", "float32", 10.0, "GB/s", "test", {})
    with caplog.at_level("WARNING"):
        peaks._remember_probe("env", "cpu", [peak])
    assert fifo.is_fifo() and "not a regular file" in caplog.text and peaks.ENV_CEILINGS_CACHE in caplog.text
    home = tmp_path / "xdg"
    (home / "workbench").mkdir(parents=True)
    probes = home / "workbench" / "info-probes.json"
    os.mkfifo(probes)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    described.write_cache("key", {"backends": {}}, {})
    assert probes.is_fifo()


def test_every_rename_over_a_path_goes_through_the_output_guard():
    """The class behind the case above: a write-to-temp-then-rename anywhere but ``core/output_guard.py`` can
    replace a device, a FIFO or a store; renames of our own fresh folders (shared arrays) are the exception."""
    import re

    allowed = {"workbench/core/output_guard.py", "workbench/measure/shared_arrays.py"}
    found = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        if rel not in allowed and re.search(r"os\.replace\(|os\.rename\(|\btmp\w*\.(replace|rename)\(", text):
            found.append(rel)
    assert not found, f"renames outside the output guard: {found}"


def test_run_fields_from_git_or_an_import_are_stored_clean(tmp_path):
    """A run's commits (``code_commits``), name and tag reach ``history``, the Markdown report and the HTML
    hover text: an imported commit field holding an escape sequence was stored and printed raw."""
    st = Store(tmp_path / "a.sqlite")
    run_id = st.new_run(code_commits=[{"catalog": "/c\x1b]0;t\x07", "commit": "\x1b[31mabc", "dirty": False}])
    st.set_run_status(run_id, "finished")
    stored = json.dumps(st.run(run_id)["code_commits"])
    st.close()
    assert "\x1b" not in json.loads(stored)[0]["commit"] and "\\x1b[31mabc" in stored
    with sqlite3.connect(tmp_path / "a.sqlite") as c:  # as a store written before commits were cleaned holds them
        c.execute("UPDATE runs SET code_commits = ?", (json.dumps([{"catalog": "/c", "commit": "\x1b[31mdef"}]),))
    from workbench.history.series import _commits

    assert "\x1b" not in _commits(json.dumps([{"commit": "\x1b[31mdef"}]), None)[0]["commit"]  # the report's text
    out = tmp_path / "e.json"
    assert _cli("export", "--store", str(tmp_path / "a.sqlite"), "-o", str(out)).returncode == 0
    r = _cli("import", str(out), "--store", str(tmp_path / "b.sqlite"))  # was refused: a control character
    assert r.returncode == 0, r.stderr


def test_report_to_dev_stdout_streams_the_report(tmp_path):
    store = tmp_path / "s.sqlite"
    _store_with_run(store)
    r = _cli("report", "--store", str(store), "--out", "/dev/stdout", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("run_id,") and "wrote /dev/stdout" in r.stderr
    assert check_output_path("/dev/stdout") == Path("/dev/stdout")


# -- 2: bounded reads ---------------------------------------------------------------------------------------

def test_reads_refuse_devices_fifos_and_oversized_files(tmp_path, monkeypatch):
    fifo = tmp_path / "cfg.json"
    os.mkfifo(fifo)  # no writer: an open that blocked would hang this test
    with pytest.raises(ValueError, match="FIFO"):
        read_regular_bytes(fifo)
    with pytest.raises(ValueError, match="character device"):
        read_regular_bytes("/dev/zero")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(ValueError, match="larger"):
        read_regular_bytes(big, limit=100)
    assert read_regular_bytes(big, limit=101) == b"x" * 101
    monkeypatch.setenv("WORKBENCH_CONFIG", "/dev/zero")
    with pytest.raises(ValueError, match="config file /dev/zero is a character device"):
        config.read()
    with pytest.raises(ValueError, match="character device"):
        load_export("/dev/zero")


# -- 4: stored text capped and cleaned ------------------------------------------------------------------------

def test_a_huge_message_and_an_escape_in_a_name_are_stored_importable(tmp_path):
    src = tmp_path / "s.sqlite"
    _store_with_run(src, message="boom\x1b[2J" + "x" * (20 << 20), variant="v\x1b]0;T\x07")
    st = Store(src, read_only=True)
    row = st.rows()[0]
    assert len(row["message"]) <= MAX_STORED_LONG_TEXT_CHARS and "characters cut" in row["message"]
    assert "\x1b" not in row["message"] and row["message"].startswith("boom\\x1b[2J")
    assert row["variant"] == "v\\x1b]0;T\\x07"
    out = tmp_path / "e.json"
    st.export(None, out)
    assert out.stat().st_size < 1 << 20
    counts = Store(tmp_path / "t.sqlite").import_file(out)
    assert counts["results"] == 1


def test_a_message_with_a_lone_surrogate_is_stored_importable(tmp_path):
    """Round five of group 4: a variant's exception holding '\\udcff' (bytes decoded with surrogateescape)
    could not be stored: 'surrogates not allowed' ended bench, its run interrupted with no rows."""
    src = tmp_path / "s.sqlite"
    _store_with_run(src, message="bad byte \udcff here", variant="v\ud800")
    st = Store(src, read_only=True)
    row = st.rows()[0]
    assert row["message"] == "bad byte \\udcff here" and row["variant"] == "v\\ud800"
    out = tmp_path / "e.json"
    st.export(None, out)
    assert Store(tmp_path / "t.sqlite").import_file(out)["results"] == 1


# -- 5: locale ------------------------------------------------------------------------------------------------

def test_printing_never_fails_on_the_locale():
    raw = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    out = SafeTextStream(raw)
    out.write("1.3 µs ± 2%\n")
    out.flush()
    assert raw.buffer.getvalue() == b"1.3 \\xb5s \\xb1 2%\n"


# -- 6: terminal control from kernels and users ----------------------------------------------------------------

def test_control_sequences_and_bidi_overrides_are_shown_as_escapes(tmp_path, capsys):
    assert terminal_safe("a\x1b[2Jb\u202ec\x9bd\te\n") == "a\\x1b[2Jb\\u202ec\\x9bd\te\n"
    assert terminal_safe("a\nb\r", one_line=True) == "a\\x0ab\\x0d"
    store = tmp_path / "s.sqlite"
    _store_with_run(store, name="n\u202eame")
    assert main(["runs", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "n\\u202eame" in out and "\u202e" not in out


# -- 8: stores that are not ours to write ------------------------------------------------------------------------

def test_a_newer_schema_version_is_never_written(tmp_path):
    path = tmp_path / "s.sqlite"
    _store_with_run(path)
    with sqlite3.connect(path) as c:
        c.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema version is 99"):
        Store(path)
    assert path.read_bytes() == before
    assert any("schema version is 99" in p for p in Store(path, read_only=True).check())


def test_another_programs_database_is_never_written(tmp_path):
    """Round five of group 8: bench --store on another program's SQLite database added the workbench's tables
    and rows to it; a 0-byte file and a store from before the meta table still open."""
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE customers (name TEXT)")
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"database of another program \(tables: customers\)"):
        Store(path)
    assert path.read_bytes() == before and not Path(f"{path}-wal").exists()
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    Store(empty).close()
    old = tmp_path / "old.sqlite"
    _store_with_run(old)
    with sqlite3.connect(old) as c:
        c.execute("DROP TABLE meta")
    Store(old).close()


def test_a_fifo_or_a_link_to_dev_null_is_no_store(tmp_path):
    fifo = tmp_path / "f.sqlite"
    os.mkfifo(fifo)
    link = tmp_path / "n.sqlite"
    link.symlink_to(os.devnull)
    for path in (fifo, link):
        for read_only in (True, False):
            with pytest.raises(StoreError, match="not a regular file"):
                Store(path, read_only=read_only)


# -- 12: closed stdout --------------------------------------------------------------------------------

def test_closed_stdout_is_a_clear_error(tmp_path):
    store = tmp_path / "s.sqlite"
    _store_with_run(store)
    r = _cli("runs", "--store", str(store), stdout=None, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert r.returncode == 2 and "stdout is closed" in r.stderr and "internal error" not in r.stderr


def test_a_full_stdout_is_named_and_never_exit_0(tmp_path):
    """Round five of group 12: `runs > /dev/full` said "[Errno 28] No space left on device", naming nothing, and
    `export -o /dev/stdout > /dev/full` the same; with stderr full too, an error's exit 2 became 1."""
    store = tmp_path / "s.sqlite"
    _store_with_run(store)
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_AUTO_PEAKS="0")

    def run(*args: str, **streams: object) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench", *args, "--store", str(store)], text=True,
                              env=env, timeout=120, **streams)  # type: ignore[call-overload]

    with open("/dev/full", "w") as full:
        r = run("runs", stdout=full, stderr=subprocess.PIPE)
        assert r.returncode == 2 and "could not write to stdout (No space left on device)" in r.stderr
        r = run("export", "-o", "/dev/stdout", stdout=full, stderr=subprocess.PIPE)
        assert r.returncode == 2 and "/dev/stdout: No space left on device" in r.stderr
        assert run("report", "nope", stdout=subprocess.PIPE, stderr=full).returncode == 2
    stream = SafeTextStream(open("/dev/full", "w"))  # noqa: SIM115 - closed below
    stream.write("x" * 10_000)
    stream.flush()
    assert stream.failed is not None and stream.failed.strerror == "No space left on device"
    stream.raw.close()


def test_an_output_whose_folder_takes_no_file_is_named(tmp_path):
    """Round five of group 1: `report --out /proc/self/status` named our temporary file under /proc."""
    with pytest.raises(ValueError, match=r"--out '/proc/self/status': the folder /proc/[0-9]+ takes no new file"):
        write_output("/proc/self/status", "x", flag="--out")
    with pytest.raises(ValueError, match=r"the folder /sys takes no new file"):
        check_output_path("/sys/wb_round5/new/x.json", flag="--json")  # folders still to make: their ancestor
    check_output_path(tmp_path / "new" / "deeper" / "x.json")
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing behind


# -- 14: read-only stores -----------------------------------------------------------------------------

def test_a_store_on_a_read_only_mount_says_so(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    _store_with_run(path)
    real = os.statvfs

    class _RO:
        def __init__(self, st: os.statvfs_result):
            self.f_flag = st.f_flag | os.ST_RDONLY

    monkeypatch.setattr(store_errors.os, "statvfs", lambda p: _RO(real(p)))
    with pytest.raises(StoreError, match="read-only file system"):
        Store(path)
    assert "read-only file system" in store_errors.describe_sqlite_error(
        path, sqlite3.OperationalError("unable to open database file"))
    assert Store(path, read_only=True).rows()  # reading it still works


# -- 17: outputs resolved before any kernel runs ---------------------------------------------------------

def test_bench_outputs_are_resolved_before_the_sweep(tmp_path, monkeypatch):
    from workbench.cli.cmd_bench import check_outputs

    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernel_dir").mkdir()
    outputs = check_outputs("rel.json", "rel.md")
    os.chdir(tmp_path / "kernel_dir")  # what an --in-process variant calling os.chdir does
    assert [p for p, _ in outputs] == [str(tmp_path / "rel.json"), str(tmp_path / "rel.md")]
    assert json.dumps(outputs)  # plain strings
