"""A store another process holds the write lock of (issue 38, hostile round five): the command waited 60 s in
silence, then failed with "database is locked". Now it says so at once, waits within its limit, and names the
store and what holds it when the limit passes; nothing stored is lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from workbench.store.connection import StoreConnection
from workbench.store.database import Store
from workbench.store.errors import StoreError


def _hold(path, seconds: float) -> subprocess.Popen:
    """Another process holding ``path``'s write lock for ``seconds`` (as a ``sqlite3`` shell's BEGIN would)."""
    code = textwrap.dedent(f"""
        import sqlite3, sys, time
        c = sqlite3.connect({str(path)!r}, isolation_level=None)
        c.execute("BEGIN IMMEDIATE")
        print("held", flush=True)
        time.sleep({seconds})
        c.execute("COMMIT")
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _store_with_a_run(path) -> str:
    with Store(path) as s:
        return s.new_run(name="kept")


def test_a_locked_store_is_said_at_once_and_named_with_its_holder_on_timeout(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    _store_with_a_run(path)
    holder = _hold(path, 60)
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreError) as err:
            StoreConnection(path, timeout_s=3)
        waited = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()
    said = capsys.readouterr().err
    assert f"results store {path} is locked by another process (pid {holder.pid} " in said
    assert "waiting up to 2 s for it" in said
    message = str(err.value)
    assert str(path) in message and f"pid {holder.pid}" in message and "still locked after 3 s" in message
    assert "\n" not in message
    assert 2.5 < waited < 30
    with Store(path) as s:  # nothing stored was lost
        assert list(s.runs()["name"]) == ["kept"]


def test_a_lock_released_while_waiting_is_taken_and_the_write_goes_through(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    _store_with_a_run(path)
    holder = _hold(path, 2.5)
    try:
        with Store(path, timeout_s=60) as s:
            s.new_run(name="second")
    finally:
        holder.wait()
    assert "is locked by another process" in capsys.readouterr().err
    with Store(path) as s:
        assert sorted(s.runs()["name"]) == ["kept", "second"]


def test_a_short_turn_between_writers_says_nothing(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    _store_with_a_run(path)
    holder = _hold(path, 0.2)
    try:
        with Store(path) as s:
            s.new_run(name="second")
    finally:
        holder.wait()
    assert "locked" not in capsys.readouterr().err
