"""Process isolation: a kernel that crashes, aborts, exits, hangs or grows memory ends in its own row, and
the run, the notebook and the honest variants beside it go on.

The bad variants live in a catalog folder (tests/bad_catalog/wb_bad), loaded the way a user's catalog is;
this file uses its numpy variants (core dependencies only); tests/backends/test_isolation_backends.py its
numba and OpenCL ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import BAD_CATALOG

from workbench.catalog import register_variant
from workbench.catalog.spec import Variant
from workbench.measure.isolation import check_isolation, make_executor
from workbench.measure.memory_cap import parse_memory_cap
from workbench.measure.process_worker import signal_text, summarize_output
from workbench.store.database import Store
from workbench.sweep.driver import SweepSpec, run_sweep
from workbench.sweep.verification import verify

K = "wb_bad"
FAST = {"budget_s": 0.05, "warmup_s": 0.01, "min_samples": 3, "max_samples": 20, "rounds": 1}
#: The cap for the runaway kernel (256 MiB a step, every page touched): below one step, so its first allocation
#: is refused at once whatever the load. At 1G it touched 768 MiB first, and a busy machine did not finish
#: that within the 3 s that end the hung kernels (``timeout``, expected ``oom``); at 512M one step still did not.
RUNAWAY_CAP = "200M"

#: numpy variant -> (status, words its message must contain)
EXPECTED = {
    "good": ("ok", ""),
    "segfault": ("crashed", "signal SIGSEGV"),
    "abort": ("crashed", "signal SIGABRT"),
    "exit": ("crashed", "exit code 3"),
    "hang": ("timeout", "worker process was killed"),
    "sleep-hang": ("timeout", "worker process was killed"),
    "runaway": ("oom", ""),  # MemoryError at the address-space limit, or the watchdog: both name the cap
    "replay": ("incorrect", "max error"),
    "mutates-input": ("incorrect", "modified its input `a`"),
}



def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, WORKBENCH_CATALOG=str(BAD_CATALOG), WORKBENCH_AUTO_PEAKS="0", **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                     env.get("PYTHONPATH")]))
    return env


def test_verify_ends_every_bad_numpy_kernel_in_its_own_row(bad_catalog):
    results = verify(backends="numpy", kernels=K, variants=list(EXPECTED), seeds=(0, 1), timeout_s=3,
                     build_timeout_s=60, memory_cap=RUNAWAY_CAP)
    got = {r.variant: r for r in results}
    assert set(got) == set(EXPECTED)
    for name, (status, words) in EXPECTED.items():
        assert got[name].status == status, (name, got[name].message)
        assert words in got[name].message, (name, got[name].message)
    assert "--memory-cap" in got["runaway"].message, got["runaway"].message
    # the fault handler's report names the kernel's own frame
    assert "numpy_variants.py" in got["abort"].message


def test_bench_survives_bad_kernels_and_keeps_honest_ones_ok(bad_catalog, tmp_path):
    variants = ["good", "segfault", "abort", "hang", "runaway", "replay"]
    spec = SweepSpec(kernels=[K], variants=variants, backends=["numpy"], timeout_s=3, build_timeout_s=60,
                     memory_cap=RUNAWAY_CAP, **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    rows = {r["variant"]: r for r in out.rows}
    assert not out.interrupted
    for name in variants:
        status, words = EXPECTED[name]
        assert rows[name]["status"] == status and words in (rows[name]["message"] or ""), rows[name]
    assert rows["good"]["median_s"] > 0
    assert "rotated input set" in rows["replay"]["message"]  # caught after timing, not only by verify
    run = Store(tmp_path / "s.sqlite").run(out.run_id)
    assert run["status"] == "finished" and run["in_flight"] is None


def test_in_process_is_available_and_runs_here(bad_catalog, tmp_path):
    pids: dict[str, int] = {}

    def build(ctx):
        def run(i, o):
            np.add(i["a"], i["b"], out=o["out"])
            pids.setdefault("pid", os.getpid())
        return run

    register_variant(Variant(K, "pid-probe", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["pid-probe"], backends=["numpy"], isolation="in-process", **FAST)
        row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
        assert row["status"] == "ok" and pids["pid"] == os.getpid()
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "pid-probe")


def test_an_in_process_kernel_calling_os_exit_is_an_error_row_not_the_end(bad_catalog, tmp_path):
    """``bench --in-process`` with a variant calling ``os._exit(0)`` ended at once with exit status 0, no
    output and its run "interrupted": a gate passed on nothing. The call is refused while a cell runs here."""
    def build(ctx):
        def run(i, o):
            os._exit(0)
        return run

    register_variant(Variant(K, "exits", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["exits"], backends=["numpy"], isolation="in-process", **FAST)
        row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
        assert row["status"] == "error" and "os._exit(0)" in row["message"]
        from workbench.measure import exit_guard

        assert os._exit is exit_guard._real_exit  # given back when the cell is done
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "exits")

@pytest.mark.parametrize("env", [None, {}])
def test_processes_an_in_process_kernel_started_end_with_the_sweep(bad_catalog, tmp_path, env):
    """A variant starting ``sleep`` in a new session left it running after ``bench --in-process`` exited 0
    (group 7 of issue 38 held for workers only); with an empty environment (no token to carry) it still did
    (hostile round six)."""
    import psutil

    started: list[int] = []

    def build(ctx):
        def run(i, o):
            if not started:
                started.append(subprocess.Popen(["sleep", "300"], start_new_session=True, env=env).pid)
            np.add(i["a"], i["b"], out=o["out"])
        return run

    register_variant(Variant(K, "spawns", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["spawns"], backends=["numpy"], isolation="in-process", **FAST)
        assert run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]["status"] == "ok"
        assert started and not (psutil.pid_exists(started[0])
                                and psutil.Process(started[0]).status() != psutil.STATUS_ZOMBIE)
        assert "WORKBENCH_WORKER_TOKEN" not in os.environ  # carried only while a cell ran
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "spawns")

def test_an_inline_variant_travels_by_value_and_runs_in_a_worker(bad_catalog, tmp_path):
    marker = tmp_path / "pid.txt"

    def build(ctx):
        def run(i, o):
            np.add(i["a"], i["b"], out=o["out"])
            marker.write_text(f"{os.getpid()} {os.environ.get('WORKBENCH_IN_WORKER')}")
        return run

    register_variant(Variant(K, "inline", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["inline"], backends=["numpy"], **FAST)
        row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
        pid, flag = marker.read_text().split()
        assert row["status"] == "ok" and int(pid) != os.getpid() and flag == "1"
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "inline")


def test_an_inline_variant_that_cannot_travel_runs_in_process_and_says_so(bad_catalog, tmp_path):
    lock = threading.Lock()  # locks cannot be pickled

    def build(ctx):
        def run(i, o):
            with lock:
                np.add(i["a"], i["b"], out=o["out"])
        return run

    register_variant(Variant(K, "locked", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["locked"], backends=["numpy"], **FAST)
        row = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]
        assert row["status"] == "ok" and "ran in-process, without crash isolation" in row["message"]
        assert "cannot be sent to a worker process" in row["message"]
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "locked")


def test_a_notebook_script_survives_its_own_segfaulting_kernel(tmp_path):
    """A kernel defined in ``__main__`` (as in a notebook) travels by value; its crash is a row."""
    script = tmp_path / "nb.py"
    script.write_text(textwrap.dedent(f"""
        import ctypes, dataclasses
        import numpy as np
        import workbench
        from workbench.catalog import get_kernel, register_kernel, variant
        register_kernel(dataclasses.replace(get_kernel("vector_add"), name="nb_add"))

        @variant("nb_add", "good", "numpy")
        def good(ctx):
            return lambda i, o: np.add(i["a"], i["b"], out=o["out"])

        @variant("nb_add", "segv", "numpy")
        def segv(ctx):
            def run(i, o):
                ctypes.string_at(0)
            return run

        res = workbench.benchmark("nb_add", sizes=[1000], budget_s=0.05, rounds=1, progress=False,
                                  store={str(tmp_path / 'nb.sqlite')!r})
        print("ROWS", dict(zip(res.df["variant"], res.df["status"])))
        print("ALIVE")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=_env(),
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ALIVE" in done.stdout and "'segv': 'crashed'" in done.stdout and "'good': 'ok'" in done.stdout
    assert "[worker numpy]" in done.stderr  # the worker's fault report reaches the user, marked


def _bench(store: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", "bench", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=300, env=_env(**env))


def test_resume_after_a_crash_that_killed_the_run_blames_the_cell_in_flight(tmp_path):
    store = tmp_path / "s.sqlite"
    first = _bench(store, "--kernels", K, "--variants", "good", "segfault", "replay", "--backends", "numpy",
                   "--budget", "0.05", "--rounds", "1", "--in-process")
    assert first.returncode == -11 or first.returncode == 139, (first.returncode, first.stderr[-1500:])
    st = Store(store)
    run_id = st.latest_run_id(unfinished=True)
    assert run_id is not None and st.run(run_id)["status"] == "running"
    assert "wb_bad/segfault on numpy" in st.in_flight(run_id)["label"]
    assert "Fatal Python error: Segmentation fault" in first.stderr  # the CLI's fault handler names the frame

    resumed = _bench(store, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-1500:]
    rows = {r["variant"]: r for r in st.rows([run_id])}
    assert rows["segfault"]["status"] == "crashed" and "the run stopped while this cell was running" in \
        rows["segfault"]["message"]
    assert rows["good"]["status"] == "ok" and rows["replay"]["status"] == "incorrect"
    assert st.run(run_id)["status"] == "finished"

    # the stored spec says in-process; this retry runs the crashed cell in a worker instead
    again = _bench(store, "--resume", run_id, "--retry-crashed", "--isolation", "process")
    assert again.returncode == 0, again.stderr[-1500:]
    seg = {r["variant"]: r for r in st.rows([run_id])}["segfault"]
    assert seg["status"] == "crashed" and "signal SIGSEGV" in seg["message"]  # re-run, in a worker this time


def test_should_stop_ends_a_hung_cell_at_once(bad_catalog, tmp_path):
    t0 = time.perf_counter()
    stop_at = t0 + 2.0
    spec = SweepSpec(kernels=[K], variants=["hang", "good"], backends=["numpy"], timeout_s=120, **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False,
                    should_stop=lambda: time.perf_counter() > stop_at)
    assert out.interrupted and time.perf_counter() - t0 < 30
    st = Store(tmp_path / "s.sqlite")
    assert st.run(out.run_id)["status"] == "interrupted" and st.in_flight(out.run_id) is None


def test_a_crashed_worker_is_replaced_for_the_next_cell(bad_catalog):
    from workbench.measure.cell import Cell, CheckOnly

    ex = make_executor("process", memory_cap="1G")
    try:
        rows = [ex.execute(Cell.make(K, v, "numpy", "float32", {"n": 999}), CheckOnly((0,)), timeout_s=5,
                           build_timeout_s=60) for v in ("segfault", "good", "abort", "good")]
    finally:
        ex.close()
    assert [r["status"] for r in rows] == ["crashed", "ok", "crashed", "ok"]
    assert len(ex.starts) == 3  # the first worker, and one after each crash


def test_a_released_backend_stops_its_worker_and_a_later_cell_starts_another(bad_catalog):
    """A backend with no cells left frees its worker (runtime, inputs) instead of holding it to the sweep's end."""
    import psutil

    from workbench.measure.cell import Cell, CheckOnly

    def workers() -> list[psutil.Process]:
        return [p for p in psutil.Process().children() if "workbench.measure.worker_main" in " ".join(p.cmdline())]

    cell = Cell.make(K, "good", "numpy", "float32", {"n": 999})
    ex = make_executor("process")
    try:
        assert ex.execute(cell, CheckOnly((0,)), timeout_s=30, build_timeout_s=60)["status"] == "ok"
        (first,) = workers()
        ex.release(["numpy", "numba"])  # numba never started: nothing to stop
        assert not first.is_running() or first.status() == psutil.STATUS_ZOMBIE
        assert workers() == []
        assert ex.execute(cell, CheckOnly((0,)), timeout_s=30, build_timeout_s=60)["status"] == "ok"
        assert len(workers()) == 1
    finally:
        ex.close()
    assert [b for b, _ in ex.starts] == ["numpy", "numpy"]


def test_the_heap_trimmer_gives_freed_arrays_back(run_python):
    """What a worker calls between cells: arrays freed below a live object stay in glibc's heap (its mmap
    threshold rose when the first large one was freed) until trimmed. In a fresh process, the churn before the
    import: a test runner's heap, or the workbench's imports, would leave holes that hide it."""
    code = textwrap.dedent("""
        import os
        import numpy as np

        def resident():
            return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        before, keep = resident(), []
        for _ in range(6):
            big = np.ones(40 * 2**20 // 8)
            del big
            parts = [np.ones(n // 8) for n in (20 * 2**20, 12 * 2**20, 30 * 2**20, 5 * 2**20)]
            keep.append(np.ones(1000))
            del parts
        held = resident()
        from workbench.measure.worker_main import heap_trimmer

        heap_trimmer()()
        print(before, held, resident())
    """)
    proc = run_python(code=code)
    assert proc.returncode == 0, proc.stderr
    before, held, after = map(int, proc.stdout.split())
    if held - before < 20 * 2**20:
        pytest.skip(f"this C library returned the freed arrays by itself ({(held - before) >> 20} MiB held)")
    assert after - before < (held - before) / 2, (before, held, after)


@pytest.mark.parametrize("text, expected", [("1G", 2**30), ("512M", 512 * 2**20), ("2.5GiB", int(2.5 * 2**30)),
                                            ("none", None), ("off", None), (1000, 1000)])
def test_memory_caps_parse(text, expected):
    assert parse_memory_cap(text) == expected


def test_memory_cap_default_and_share_follow_host_memory():
    from workbench.measure.memory_cap import host_total_bytes

    assert parse_memory_cap(None) == int(0.5 * host_total_bytes())
    assert parse_memory_cap("25%") == int(0.25 * host_total_bytes())


@pytest.mark.parametrize("bad", ["abc", "-1G", "0", "1X", True, float("nan"), 0])
def test_bad_memory_caps_are_refused_with_the_forms_accepted(bad):
    with pytest.raises(ValueError, match="memory cap"):
        parse_memory_cap(bad)


def test_bad_isolation_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="valid: process, in-process"):
        check_isolation("thread")


def test_cli_refuses_a_bad_memory_cap_before_creating_a_run(tmp_path):
    done = _bench(tmp_path / "s.sqlite", "--kernels", "vector_add", "--memory-cap", "lots")
    assert done.returncode == 2 and "memory cap 'lots' is not understood" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.sqlite").exists() or not Store(tmp_path / "s.sqlite").latest_run_id()


def test_signal_and_fault_reports_read_as_words():
    assert signal_text(-11) == "signal SIGSEGV (Segmentation fault)" and signal_text(3) == "exit code 3"
    report = ("double free or corruption (out)\nFatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call "
              'first):\n  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at\n'
              '  File "/home/u/k/numba_variants.py", line 12 in run\n')
    text = summarize_output(report)
    assert text.startswith("double free or corruption (out) | Fatal Python error: Aborted at /usr/lib/python3.11")
    assert "called from /home/u/k/numba_variants.py:12 in run" in text
    assert json.dumps(text)  # one line, storable


def test_shared_input_folders_of_dead_sweeps_are_removed(tmp_path):
    from workbench.measure.process_worker import SHARED_PREFIX, remove_orphaned_input_dirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = tmp_path / f"{SHARED_PREFIX}{dead.pid}-abc"
    mine = tmp_path / f"{SHARED_PREFIX}{os.getpid()}-def"
    old_style = tmp_path / f"{SHARED_PREFIX}xyz"
    for d in (orphan, mine, old_style):
        d.mkdir()
    assert remove_orphaned_input_dirs(str(tmp_path)) == [str(orphan)]
    assert not orphan.exists() and mine.exists() and old_style.exists()


def test_a_sweep_leaves_no_shared_input_folder_behind(bad_catalog, tmp_path):
    from workbench.measure.process_worker import SHARED_PREFIX

    ex = make_executor("process")
    folder = Path(ex.shared_dir)
    assert folder.name.startswith(f"{SHARED_PREFIX}{os.getpid()}-")
    ex.close()
    assert not folder.exists()


def test_workers_started_early_are_taken_by_the_next_executor_with_the_same_settings():
    """The CLI launches the named backends' workers before it builds the sweep; the sweep's executor takes
    them (one numpy cell waited 0.24 s for its worker otherwise), and one with other settings does not."""
    from workbench.measure import isolation

    isolation.start_early(["numpy"], "process", memory_cap="4G")
    try:
        other = isolation.make_executor("process", memory_cap="8G")  # other settings: a fresh executor
        assert other is not isolation._early[1]
        other.close()
        early = isolation._early[1]
        ex = isolation.make_executor("process", memory_cap="4G")
        assert ex is early and isolation._early is None
        assert ex.prepare("numpy") is None  # the worker launched early answers its prepare
        ex.close()
    finally:
        isolation._close_early()
    isolation.start_early(["numpy"], "in-process")  # nothing to start in-process
    assert isolation._early is None


def test_a_process_another_thread_starts_while_an_in_process_cell_runs_is_not_ended(bad_catalog, tmp_path):
    """The fresh-clone CI of 20:56: a test process's background ``workbench verify`` (another thread) started its
    torch workers while an in-process cell ran, and the executor ended them with the cell's ("died at start"):
    only what the cell's own thread starts is the cell's."""
    import threading

    import psutil

    other: list[int] = []
    cell_running, spawned = threading.Event(), threading.Event()

    def elsewhere() -> None:
        cell_running.wait(60)
        other.append(subprocess.Popen(["sleep", "300"], env={"PATH": os.environ.get("PATH", "")}).pid)
        spawned.set()

    def build(ctx):
        def run(i, o):
            cell_running.set()
            spawned.wait(30)
            np.add(i["a"], i["b"], out=o["out"])
        return run

    thread = threading.Thread(target=elsewhere, daemon=True)
    thread.start()
    register_variant(Variant(K, "beside", ("numpy",), build))
    try:
        spec = SweepSpec(kernels=[K], variants=["beside"], backends=["numpy"], isolation="in-process", **FAST)
        assert run_sweep(spec, store=tmp_path / "s.sqlite", progress=False).rows[0]["status"] == "ok"
        assert other and psutil.pid_exists(other[0]) and psutil.Process(other[0]).status() != psutil.STATUS_ZOMBIE
    finally:
        from workbench.catalog import unregister_variant

        unregister_variant(K, "beside")
        for pid in other:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()
