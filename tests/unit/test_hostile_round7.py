"""Hostile round seven (issue 38): cases of the 23 groups' kinds that no earlier round listed, each found bad on
``main`` and fixed as a class (the output guard, the environment checks, the process-state guard, the command's
stop and exit handling, the store's damaged-value diagnosis, the terminal-safe printer). Every test here failed on
the code before its fix; /tmp/hostile7/cases.md of the session holds the cases tried."""

from __future__ import annotations

import builtins
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.store.database import Store

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_AUTO_PEAKS="0", **env))


def _store_with_a_run(path: Path, **row: object) -> str:
    st = Store(path)
    run_id = st.new_run(name="r", suite=None, argv=["workbench", "bench"], env_id="env0", spec={})
    st.add_environment("env0", {"host": {"cpu": "test"}})
    base = {"run_id": run_id, "cell_key": "a", "kernel": "saxpy", "variant": "numpy", "backend": "numpy",
            "dtype": "float32", "params": json.dumps({"n": 8}), "status": "ok", "median_s": 1e-3,
            "samples_s": json.dumps([1e-3, 1.1e-3]), "env_id": "env0"}
    st.record({**base, **row})
    st.set_run_status(run_id, "finished", wall_s=1.0)
    st.close()
    return run_id


# -- 16: every stop signal exits 130, at any moment of the command ----------------------------------------------

def test_a_stop_signal_before_the_sweep_exits_130_like_ctrl_c(tmp_path, capsys, monkeypatch):
    """SIGTERM while the command read its configuration exited 143 (docs/cli.md: 130 for every stop signal)."""
    from workbench import config
    from workbench.cli.termination import Terminated

    def stopped() -> dict:
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(config, "read", stopped)
    assert main(["runs", "--store", str(tmp_path / "s.sqlite")]) == 130
    assert capsys.readouterr().err.strip() == "interrupted (SIGTERM)"


def test_a_stop_signal_while_the_command_module_loads_is_no_traceback(capsys, monkeypatch):
    """SIGTERM 0.25 s after start (importing the command's module) printed a traceback and exited 1."""
    import workbench.cli as cli
    from workbench.cli.termination import Terminated

    def stopped(argv: list[str] | None = None) -> None:
        raise Terminated(signal.SIGHUP)

    monkeypatch.setattr(cli, "build_parser", stopped)
    assert main(["runs"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted (SIGHUP)"


def test_a_stop_signal_during_the_interpreters_shutdown_keeps_the_status():
    """A second SIGTERM 50 ms after the first killed ``bench`` while Python unloaded its modules: exit 143
    after the run had been closed and its resume line printed (Python's shutdown puts SIG_DFL back)."""
    code = ("import os, signal, sys; sys.argv = ['workbench', 'runs', '--store', 'no-such-store.sqlite']; "
            "from workbench.cli import main; rc = main(); os.kill(os.getpid(), signal.SIGTERM); sys.exit(rc)")
    done = _python(code)
    assert done.returncode == 2, done.stderr


# -- 9: code a catalog file left to run at exit cannot change the status ----------------------------------------

def test_an_atexit_os_exit_cannot_turn_a_failure_into_success():
    """A spec.py registering ``atexit.register(lambda: os._exit(0))`` made ``verify`` exit 0 after its error."""
    code = ("import atexit, os, sys; atexit.register(lambda: os._exit(0)); "
            "sys.argv = ['workbench', 'runs', '--store', 'no-such-store.sqlite']; "
            "from workbench.cli import main; sys.exit(main())")
    done = _python(code)
    assert done.returncode == 2, done.stderr
    assert "called os._exit(0); ignored: the command's exit status is 2" in done.stderr


# -- 9/11: what a catalog file changes in the process is put back ----------------------------------------------

def test_builtins_replaced_by_code_we_ran_are_put_back(caplog):
    """``builtins.print = None`` in a spec.py ended ``verify`` in a traceback."""
    from workbench.core.process_state import process_state_kept

    real, real_len = builtins.print, builtins.len
    try:
        with process_state_kept("catalog file x/spec.py"):
            builtins.print = None  # type: ignore[assignment]
            del builtins.len
    finally:
        restored = builtins.print is real and getattr(builtins, "len", None) is real_len
        builtins.print, builtins.len = real, real_len
    assert restored
    assert "changed builtins.len, builtins.print" in caplog.text


def test_a_standard_descriptor_closed_by_code_we_ran_is_put_back():
    """``os.close(1)`` in a spec.py ended ``verify`` in "error: [Errno 9] Bad file descriptor", naming nothing."""
    code = ("import os, sys; from workbench.core.process_state import process_state_kept\n"
            "with process_state_kept('catalog file x/spec.py'):\n    os.close(1)\n"
            "os.write(1, b'still here')")
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "still here" and "changed file descriptor 1 (stdout)" in done.stderr


# -- 13/15: environment values out of every range are refused by name -------------------------------------------

@pytest.mark.parametrize(("name", "value", "said"), [
    ("WORKBENCH_CATALOG_IMPORT_TIMEOUT", "1e308", "at most 604800"),
    ("WORKBENCH_HOST_SETTLE", "forever", "is not understood"),
])
def test_environment_values_beyond_use_are_refused(monkeypatch, name, value, said):
    """1e308 as the import bound failed every kernel's load ("timestamp out of range", 443 lines);
    ``WORKBENCH_HOST_SETTLE=forever`` was taken for on."""
    from workbench.cli.checks import check_env_values

    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=said) as refused:
        check_env_values()
    assert f"{name}={value!r}" in str(refused.value)


def test_the_import_bound_never_takes_a_value_the_check_refuses(monkeypatch):
    from workbench.catalog.loader import IMPORT_TIMEOUT_S, import_timeout_s

    monkeypatch.setenv("WORKBENCH_CATALOG_IMPORT_TIMEOUT", "1e308")
    assert import_timeout_s() == IMPORT_TIMEOUT_S


# -- 1/12: a path that names a folder is never written as a file ------------------------------------------------

def test_an_output_path_ending_in_a_slash_is_a_folder_not_a_file(tmp_path, capsys, monkeypatch):
    """``export -o out/``, ``report --out out/`` and ``config save out/`` (no such folder) each wrote a file
    named ``out``."""
    from workbench import config
    from workbench.core.output_guard import check_output_path

    with pytest.raises(ValueError, match="names a folder"):
        check_output_path(f"{tmp_path}/out/", flag="export -o")
    store = tmp_path / "s.sqlite"
    _store_with_a_run(store)
    assert main(["report", "latest", "--store", str(store), "--out", f"{tmp_path}/out/"]) == 2
    assert "names a folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match="names a folder"):
        config.write({}, f"{tmp_path}/out/")
    monkeypatch.setenv("WORKBENCH_CONFIG", f"{tmp_path}/out/")
    with pytest.raises(ValueError, match="names a folder"):
        config.write({})
    assert not (tmp_path / "out").exists()


def test_a_configuration_link_that_loops_is_named_not_taken_for_no_file(tmp_path):
    from workbench import config

    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    with pytest.raises(ValueError, match="symbolic link that loops"):
        config.read(tmp_path / "a.json")
    (tmp_path / "later.json").symlink_to(tmp_path / "not-made-yet.json")  # a link to a file to come: absent
    assert config.read(tmp_path / "later.json") == {}


# -- 8/13: a damaged stored value is named where a command fails on it -----------------------------------------

@pytest.mark.parametrize(("column", "value", "said"), [
    ("median_s", "abc", "its median_s holds 'abc', not a number"),
    ("samples_s", "[1,", "its samples_s holds '[1,', not JSON"),
])
def test_a_damaged_stored_value_is_named_by_run_cell_and_column(tmp_path, capsys, column, value, said):
    """A report over a row whose median_s held 'abc' said "could not convert string to float: 'abc'"; one whose
    samples_s held '[1,' said "Expecting value: line 1 column 4 (char 3)": no store, run or column named."""
    store = tmp_path / "s.sqlite"
    run_id = _store_with_a_run(store)
    con = sqlite3.connect(store)
    con.execute(f"UPDATE results SET {column} = ?", (value,))
    con.commit()
    con.close()
    assert main(["report", "latest", "--store", str(store), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"results store {store} is damaged: run {run_id}'s row of saxpy/numpy on numpy: {said}" in err
    assert "Expecting value" not in err and "could not convert" not in err


def test_store_check_names_text_where_a_number_belongs(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    _store_with_a_run(store)
    con = sqlite3.connect(store)
    con.execute("UPDATE results SET median_s = 'abc'")
    con.commit()
    con.close()
    assert main(["store", "check", "--store", str(store)]) != 0
    assert "result fields hold text where a number belongs" in capsys.readouterr().out


# -- 23: a message that contradicts itself ----------------------------------------------------------------------

def test_a_schema_version_below_one_is_not_said_to_come_from_a_newer_workbench():
    from workbench.store.connection import schema_version_problem

    said = schema_version_problem(-1)
    assert said is not None and "newer workbench" not in said and "no workbench writes a version below 1" in said


# -- 6: a path given by the user is data: a line break in it is shown, never printed -----------------------------

def test_a_line_break_in_an_output_path_is_shown_as_an_escape(tmp_path, capsys):
    """``report --out $'a\\nb.md'`` printed "wrote .../a" and "b.md (md, ...)" as two lines."""
    store = tmp_path / "s.sqlite"
    _store_with_a_run(store)
    out = tmp_path / "a\nb.md"
    assert main(["report", "latest", "--store", str(store), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.exists() and f"wrote {tmp_path}/a\\x0ab.md (md" in printed and len(printed.splitlines()) == 1
