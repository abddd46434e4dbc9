"""A variant's non-daemon thread never keeps a command (or its worker) from exiting once its work is done
(issue 38, hostile round five): ``bench --in-process`` hung until the thread ended, and each worker waited
for it until its parent killed it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import workbench
from workbench.cli.threads_note import say_threads_left
from workbench.core.threads_left import Origin, ThreadLeft, recording_origins, threads_left

HERE = str(Path(workbench.__file__).resolve().parents[1])

VARIANTS = '''
import os, threading, time
import numpy as np
from workbench.catalog import kernel_here

op = kernel_here(__file__)
started = []


def _late():
    time.sleep(float(os.environ["WB_THREAD_SLEEP"]))
    with open(os.environ["WB_THREAD_MARK"], "a") as f:
        f.write("joined\\n")  # only when the process waited for this thread


@op.variant("starts-thread", "numpy")
def starts_thread(ctx):
    def run(i, o):
        if not started:
            started.append(1)
            threading.Thread(target=_late, name="sleeper", daemon=False).start()
        np.add(i["a"], i["b"], out=o["out"])
    return run
'''


def _catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "cat" / "wb_threads"
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(textwrap.dedent("""
        import dataclasses
        from workbench.catalog import get_kernel, kernel_here
        SPEC = kernel_here(__file__).register(lambda name: dataclasses.replace(
            get_kernel("vector_add"), name=name, llm_params=None, sizes={"verify": [{"n": 7}], "quick": [{"n": 64}]}))
    """))
    (folder / "numpy_variants.py").write_text(VARIANTS)
    return folder


def _bench(tmp_path: Path, sleep_s: float, *extra: str) -> subprocess.CompletedProcess:
    folder = _catalog(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])),
           "WORKBENCH_CATALOG": str(folder.parent), "WORKBENCH_STORE": str(tmp_path / "s.sqlite"),
           "WORKBENCH_AUTO_PEAKS": "0", "WB_THREAD_SLEEP": str(sleep_s), "WB_THREAD_MARK": str(tmp_path / "mark")}
    return subprocess.run([sys.executable, "-m", "workbench", "bench", "--kernels", "wb_threads", "--backends",
                           "numpy", "--budget", "0.1", "--rounds", "1", "--quiet", *extra], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=240)


def test_in_process_bench_exits_and_names_the_variant_whose_thread_runs(tmp_path):
    done = _bench(tmp_path, 3600, "--in-process")  # hung for the hour before
    assert done.returncode == 0, done.stderr[-2000:]
    assert "thread 'sleeper' started by variant wb_threads/starts-thread" in done.stderr
    assert "exits without waiting for that thread" in done.stderr
    assert not (tmp_path / "mark").exists()
    assert "starts-thread" in done.stdout  # its row was stored and shown first


def test_a_worker_exits_without_joining_a_kernel_thread(tmp_path):
    """The worker's thread sleeps 4.5 s, then writes its mark: a worker that joined it (or waited the parent's
    5 s before being killed) let it write; one that exits when told to stop does not."""
    done = _bench(tmp_path, 4.5)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "mark").exists(), "the worker waited for its kernel's thread"


def test_exit_now_runs_atexit_flushes_and_does_not_join(tmp_path):
    mark = tmp_path / "atexit"
    code = textwrap.dedent(f"""
        import atexit, sys, threading, time
        from workbench.core.threads_left import exit_now
        atexit.register(lambda: open({str(mark)!r}, "w").write("ran"))
        threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
        sys.stdout.write("flushed")
        exit_now(3)
    """)
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": HERE})
    assert done.returncode == 3 and done.stdout == "flushed" and mark.read_text() == "ran"
    assert time.monotonic() - t0 < 100


def test_threads_left_lists_a_started_nondaemon_thread_with_its_origin(capsys):
    import threading

    stop = threading.Event()
    with recording_origins():
        thread = threading.Thread(target=stop.wait, name="left\x1b[2J", daemon=False)
        thread.start()
    try:
        left = [t for t in threads_left() if t.name == "left\x1b[2J"]
        assert len(left) == 1 and left[0].origin is not None
        assert left[0].origin.file == __file__ and "test_threads_left_lists" in left[0].origin.function
    finally:
        stop.set()
        thread.join()
    assert threads_left() == [] or all(t.name != "left\x1b[2J" for t in threads_left())
    say_threads_left([ThreadLeft("x", Origin("/k/v.py", 3, "f")), ThreadLeft("y", None)])
    err = capsys.readouterr().err
    assert "thread 'x' started at /k/v.py:3 in f is still running" in err
    assert "thread 'y' started before workbench recorded" in err
