"""Hostile round four (issue 38), group 7: whatever a variant starts in its worker process ends with it. A
plain fork, a fork that calls ``setsid`` and forks again (re-parented to init, in its own session), and a
non-daemon ``multiprocessing.Process`` each outlived ``bench``, which exited 0. Round five: a double fork that
``exec``s with an empty environment (no token) outlived it too, until the worker became a child subreaper."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

import workbench

VARIANTS = '''
import multiprocessing, os, time
import numpy as np
from workbench.catalog import kernel_here

op = kernel_here(__file__)
PIDS = os.environ["WB_ROUND4_PIDS"]
started = []


def _note(kind):
    with open(PIDS, "a") as f:
        f.write(f"{kind} {os.getpid()}\\n")


def _sleep():
    _note("mp")
    time.sleep(600)


@op.variant("leaves-children", "numpy")
def leaves_children(ctx):
    def run(i, o):
        if not started:
            started.append(1)
            if os.fork() == 0:
                _note("fork")
                time.sleep(600)
                os._exit(0)
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    _note("setsid")
                    time.sleep(600)
                os._exit(0)
            multiprocessing.Process(target=_sleep).start()
            if os.fork() == 0:  # round five: no token (an empty environment), re-parented away at once
                os.setsid()
                if os.fork() == 0:
                    os.execve("/bin/sh", ["sh", "-c", f'echo "tokenless $$" >> {PIDS}; exec sleep 600'], {})
                os._exit(0)
        np.add(i["a"], i["b"], out=o["out"])
    return run
'''


def test_bench_ends_what_a_variant_started(tmp_path):
    folder = tmp_path / "cat" / "wb_round4_forks"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(textwrap.dedent("""
        import dataclasses
        from workbench.catalog import get_kernel, kernel_here
        SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(
            get_kernel("vector_add"), name=name, llm_params=None, sizes={"verify": [{"n": 7}], "quick": [{"n": 64}]}))
    """))
    (folder / "numpy_variants.py").write_text(VARIANTS)
    pids = tmp_path / "pids"
    here = str(Path(workbench.__file__).resolve().parents[1])  # the workbench under test, not the installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
           "WORKBENCH_CATALOG": str(folder.parent), "WB_ROUND4_PIDS": str(pids),
           "WORKBENCH_STORE": str(tmp_path / "s.sqlite"), "WORKBENCH_AUTO_PEAKS": "0"}
    done = subprocess.run([sys.executable, "-m", "workbench", "bench", "--kernels", "wb_round4_forks", "--backends",
                           "numpy", "--budget", "0.1", "--rounds", "1", "--quiet"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    started = dict(line.split() for line in pids.read_text().splitlines())
    assert set(started) == {"fork", "setsid", "mp", "tokenless"}, started
    deadline = time.monotonic() + 5
    alive = {}
    while time.monotonic() < deadline:
        alive = {k: int(p) for k, p in started.items() if _running(int(p))}
        if not alive:
            break
        time.sleep(0.1)
    for pid in alive.values():  # leave nothing of this test behind, then fail
        psutil.Process(pid).kill()
    assert not alive, f"still running after bench exited: {alive}"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


RAISERS = '''
from workbench.catalog import kernel_here

op = kernel_here(__file__)


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


@op.variant("raises-interrupt", "numpy")
def raises_interrupt(ctx):
    def run(i, o):
        raise KeyboardInterrupt
    return run


@op.variant("raises-unprintable", "numpy")
def raises_unprintable(ctx):
    def run(i, o):
        raise Unprintable()
    return run
'''


def test_a_variant_raising_keyboardinterrupt_or_an_unprintable_error_is_an_error_row(tmp_path):
    """Group 11: each ended its worker in a printed traceback (the row read "crashed")."""
    folder = tmp_path / "cat" / "wb_round4_raises"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(textwrap.dedent("""
        import dataclasses
        from workbench.catalog import get_kernel, kernel_here
        SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(
            get_kernel("vector_add"), name=name, llm_params=None, sizes={"verify": [{"n": 7}]}))
    """))
    (folder / "numpy_variants.py").write_text(RAISERS)
    here = str(Path(workbench.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
           "WORKBENCH_CATALOG": str(folder.parent), "WORKBENCH_STORE": str(tmp_path / "s.sqlite")}
    done = subprocess.run([sys.executable, "-m", "workbench", "verify", "--kernel", "wb_round4_raises",
                           "--backend", "numpy", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    rows = {r["variant"]: r for r in json.loads(done.stdout)["results"]}
    assert rows["raises-interrupt"]["status"] == "error"
    assert "raised KeyboardInterrupt" in rows["raises-interrupt"]["message"]
    assert rows["raises-unprintable"]["status"] == "error"
    assert "Unprintable: (its message could not be read" in rows["raises-unprintable"]["message"]


SLOW = '''
import time
import numpy as np
from workbench.catalog import kernel_here

op = kernel_here(__file__)


@op.variant("slow", "numpy")
def slow(ctx):
    def run(i, o):
        time.sleep(0.2)
        np.add(i["a"], i["b"], out=o["out"])
    return run
'''


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_mid_sweep_end_it_like_ctrl_c(tmp_path, signum):
    """Group 16: SIGTERM killed bench where it stood (exit 143, no message, the run left "running")."""
    folder = tmp_path / "cat" / "wb_round4_slow"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(textwrap.dedent("""
        import dataclasses
        from workbench.catalog import get_kernel, kernel_here
        SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(
            get_kernel("vector_add"), name=name, llm_params=None,
            sizes={"verify": [{"n": 7}], "quick": [{"n": 64 + i} for i in range(8)]}))
    """))
    (folder / "numpy_variants.py").write_text(SLOW)
    store = tmp_path / "s.sqlite"
    here = str(Path(workbench.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])),
           "WORKBENCH_CATALOG": str(folder.parent), "WORKBENCH_STORE": str(store), "WORKBENCH_AUTO_PEAKS": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "bench", "--kernels", "wb_round4_slow", "--backends",
                             "numpy", "--budget", "2", "--rounds", "2"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while _rows(store) < 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, "the sweep ended before it could be signalled"
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-2000:]
    assert "interrupted: resume with --resume" in out and "Traceback" not in out, out[-2000:]
    con = sqlite3.connect(store)
    try:
        assert [s for (s,) in con.execute("SELECT status FROM runs")] == ["interrupted"]
    finally:
        con.close()


def _rows(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0
