"""The bench / runs / export / import commands, in real subprocesses where it matters (kill and resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.cli.cmd_bench import format_summary, parse_sizes
from workbench.store.database import Store

REPO = Path(__file__).resolve().parents[2]

SLOW_SPEC = '''
import time
import numpy as np
from workbench.catalog import KernelSpec, register_kernel, variant

SPEC = register_kernel(KernelSpec(
    name="wbtest_slow", description="out = x + 1, slowly", axes=("n",),
    make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": inp["x"] + 1.0},
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"], bytes_moved=lambda p, isz: 2 * p["n"] * isz,
    sizes={"quick": [{"n": 8}]}))


@variant("wbtest_slow", "numpy-slow", "numpy")
def slow(ctx):
    def run(inp, out):
        time.sleep(0.03)
        np.add(inp["x"], 1.0, out=out["out"])
    return run
'''


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    catalog = tmp_path / "catalog" / "wbtest_slow"
    catalog.mkdir(parents=True, exist_ok=True)
    (catalog / "spec.py").write_text(SLOW_SPEC)
    return {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_CATALOG": str(catalog.parent), **extra}


def _bench(*args: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench", "bench", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_parse_sizes():
    assert parse_sizes(["4096,1000003"]) == [(4096,), (1000003,)]
    assert parse_sizes(["4096x1024,37x1000", "5"]) == [(4096, 1024), (37, 1000), (5,)]
    assert parse_sizes(["full"]) == "full"
    with pytest.raises(ValueError, match="bad size"):
        parse_sizes(["12,abc"])


def test_summary_table_formats_units():
    text = format_summary([{"kernel": "saxpy", "variant": "numpy", "backend": "numpy", "dtype": "float32",
                            "size_label": "n=8", "status": "ok", "median_s": 2.5e-6, "gbps": 12.345,
                            "gflops": 1.0},
                           {"kernel": "saxpy", "variant": "x", "backend": "numpy", "dtype": "float32",
                            "size_label": "n=8", "status": "error", "median_s": None}])
    lines = text.splitlines()
    assert lines[0].split() == ["kernel", "variant", "backend", "dtype", "size", "status", "median", "GB/s",
                                "GFLOP/s"]
    assert "2.5 µs" in lines[2] and "12.3" in lines[2] and lines[3].split()[-3:] == ["-", "-", "-"]
    noisy = format_summary([{"kernel": "saxpy", "variant": "numpy", "status": "ok", "median_s": 1e-3,
                             "noisy": True}])
    assert noisy.splitlines()[2].split()[5] == "ok~"  # noisy cells are marked


def test_bad_names_exit_2_with_the_valid_choices(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    assert main(["bench", "--kernels", "nope", "--store", store, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown kernel 'nope'" in err and "valid kernels:" in err and "saxpy" in err
    assert main(["bench", "--kernels", "saxpy", "--backends", "warp-drive", "--store", store]) == 2
    assert "valid backends" in capsys.readouterr().err
    assert main(["bench", "--kernels", "saxpy", "--sizes", "3x3", "--store", store]) == 2
    assert "takes 1 size" in capsys.readouterr().err
    assert main(["bench", "--resume", "no-such-run", "--store", store]) == 2  # a mistyped store is not created
    assert "no results store at" in capsys.readouterr().err and not Path(store).exists()
    Store(store).close()
    assert main(["bench", "--resume", "no-such-run", "--store", store]) == 2
    assert "unknown run id" in capsys.readouterr().err
    assert Store(store).runs().empty  # nothing half-started


def _start_and_signal(cmd: list[str], env: dict[str, str], store: Path, rows_before_signal: int,
                      sig: int) -> subprocess.Popen:
    """Start ``cmd``; once the store holds ``rows_before_signal`` rows, send ``sig``; wait for the exit."""
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            try:
                if store.exists() and len(Store(store).results()) >= rows_before_signal:
                    break
            except Exception:  # noqa: BLE001 - the file may be mid-creation
                pass
            time.sleep(0.05)
        assert proc.poll() is None, f"the sweep ended before it could be signalled: {proc.stderr.read()}"
        os.kill(proc.pid, sig)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc


def test_interrupted_and_killed_sweeps_resume_with_every_cell_exactly_once(tmp_path):
    store = tmp_path / "s.sqlite"
    env = _env(tmp_path)
    sizes = ",".join(str(n) for n in range(1, 13))
    cmd = [sys.executable, "-m", "workbench", "bench", "--kernels", "wbtest_slow", "--backends", "numpy",
           "--sizes", sizes, "--budget", "0.05", "--rounds", "3", "--store", str(store), "--quiet"]

    # Ctrl-C: finished cells are kept, the run is marked interrupted, exit status 130
    proc = _start_and_signal(cmd, env, store, 3, signal.SIGINT)
    assert proc.returncode == 130
    st = Store(store)
    run_id = st.runs()["run_id"].iloc[0]
    assert st.run(run_id)["status"] == "interrupted"
    n_interrupted = len(st.results())
    assert 3 <= n_interrupted < 12

    # SIGKILL while resuming: nothing is marked, nothing committed is lost
    resume = cmd[:4] + ["--resume", "--store", str(store), "--quiet"]
    _start_and_signal(resume, env, store, n_interrupted + 2, signal.SIGKILL)
    before = Store(store).results()
    assert n_interrupted + 2 <= len(before) < 12
    assert Store(store).run(run_id)["status"] == "running"  # killed: never marked finished

    res = _bench("--resume", "--store", str(store), "--quiet", env=env)
    assert res.returncode == 0, res.stderr
    assert f"resuming run {run_id}" in res.stderr
    after = Store(store).results()
    assert len(after) == 12 and after["cell_key"].is_unique and set(after["run_id"]) == {run_id}
    assert sorted(json.loads(p)["n"] for p in after["params"]) == list(range(1, 13))
    assert set(after["status"]) == {"ok"}
    # every cell has all its rounds, once each
    assert set(after["rounds"]) == {3} and all(len(json.loads(m)) == 3 for m in after["round_medians_s"])
    # rows stored before the kill keep their first round: the resume added rounds, it did not start over
    kept = after.set_index("cell_key").loc[before["cell_key"], "started_at"]
    assert list(kept) == list(before["started_at"])
    assert Store(store).run(run_id)["status"] == "finished"


@pytest.fixture(scope="module")
def quick_numpy(tmp_path_factory):
    """``workbench bench --suite quick --backends numpy`` in a subprocess, timed."""
    tmp = tmp_path_factory.mktemp("quick")
    store = tmp / "quick.sqlite"
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "workbench", "bench", "--suite", "quick", "--backends", "numpy",
                          "--store", str(store), "--json", str(tmp / "quick.json"), "--name", "cli-test"],
                         cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                         timeout=1200)  # a hang guard: 300 s ran out with other work on the machine
    wall = time.perf_counter() - t0
    print(f"\nquick suite on numpy: {wall:.1f} s wall (process)")
    return res, store, tmp, wall


def test_quick_suite_on_numpy_produces_rows(quick_numpy):
    res, store, tmp, wall = quick_numpy
    assert res.returncode == 0, res.stderr[-3000:]
    st = Store(store)
    df = st.results()
    from workbench.sweep.suites import suite_spec

    expected = suite_spec("quick", backends=["numpy"]).cells()
    assert df["cell_key"].is_unique
    assert {c.key for c in expected} <= set(df["cell_key"])  # (the catalog may have grown since the run)
    assert (df["status"] == "ok").sum() >= len(df) // 2
    ok = df[df["status"] == "ok"]
    assert (ok["median_s"] > 0).all() and ok["gbps"].notna().all() and ok["env_id"].notna().all()
    assert "GB/s" in res.stdout and "wall" in res.stdout
    assert st.environment(df["env_id"].iloc[0])  # the real environment record is stored
    run = st.runs().iloc[0]
    assert run["status"] == "finished" and run["suite"] == "quick" and run["name"] == "cli-test"
    assert (tmp / "quick.json").exists()  # its time (target 120 s idle) is printed by tests/perf/demo.py


def test_quick_suite_rows_name_their_roof_and_none_is_above_it_unmarked(quick_numpy):
    """Issue 22's roof targets over the quick suite's rows, read as the report reads them (all backends:
    tests/perf/roofs_quick.py prints the same counts)."""
    from workbench.report.data import gather
    from workbench.report.roof_check import check_roofs

    _, store, _, _ = quick_numpy
    data = gather(Store(store))
    check = check_roofs(data.df, data.peaks, data.environments)
    assert check.timed_rows > 0
    assert check.passed, "\n".join(check.lines())


def test_runs_export_and_import_commands(quick_numpy, tmp_path, capsys):
    _, store, _, _ = quick_numpy
    assert main(["runs", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    run_id = Store(store).runs()["run_id"].iloc[0]
    assert run_id in out and "finished" in out
    export = tmp_path / "e.json"
    assert main(["export", "latest", "-o", str(export), "--store", str(store)]) == 0
    other = str(tmp_path / "other.sqlite")
    assert main(["import", str(export), "--store", other]) == 0
    assert "1 new runs" in capsys.readouterr().out
    assert main(["import", str(export), "--store", other]) == 0
    assert "0 new runs, 0 new environments, 0 new results, 0 new peaks" in capsys.readouterr().out
    assert len(Store(other).results()) == len(Store(store).results())
