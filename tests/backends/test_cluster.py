"""A sweep on a Dask LocalCluster of 2 worker processes: every cell stored once, a killed worker's cells
completed, resume. Tiny numpy kernels and budgets; nothing here asserts a time."""

from __future__ import annotations

import gc
import os
import signal
from collections import Counter
from collections.abc import Iterator

import pytest

pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")

from workbench.cluster import ClusterExecutor  # noqa: E402
from workbench.measure.cell import Cell  # noqa: E402
from workbench.store.database import Store  # noqa: E402
from workbench.sweep.driver import SweepSpec, run_sweep  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster() -> Iterator[ClusterExecutor]:
    """One LocalCluster for the module (starting one costs seconds); its workers inherit this environment."""
    saved = os.environ.get("WORKBENCH_AUTO_PEAKS")
    os.environ["WORKBENCH_AUTO_PEAKS"] = "0"  # no ceilings probe in each worker: the test is about rows
    ex = ClusterExecutor("local:2")
    try:
        yield ex
    finally:
        ex.close()
        if saved is None:
            os.environ.pop("WORKBENCH_AUTO_PEAKS", None)
        else:
            os.environ["WORKBENCH_AUTO_PEAKS"] = saved


def small_spec(rounds: int = 1) -> SweepSpec:
    return SweepSpec(kernels=["vector_add", "saxpy"], backends=["numpy"], sizes=[1000, 333, 4097],
                     budget_s=0.02, warmup_s=0.0, min_samples=3, rounds=rounds, timeout_s=120.0)


def stored_once(store: Store, run_id: str, spec: SweepSpec) -> list[dict]:
    """The run's rows, checked: one per cell of the spec, no cell twice."""
    rows = store.rows([run_id])
    keys = Counter(r["cell_key"] for r in rows)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    assert set(keys) == {c.key for c in spec.cells()}
    return rows


def test_every_cell_is_stored_once_with_its_worker_machine(cluster, tmp_path):
    spec = small_spec(rounds=2)
    store = Store(tmp_path / "s.sqlite")
    out = run_sweep(spec, store=store, cluster=cluster, progress=False)
    assert not out.interrupted and store.run(out.run_id)["status"] == "finished"
    rows = stored_once(store, out.run_id, spec)
    assert all(r["status"] == "ok" and r["rounds"] == 2 for r in rows), [(r["status"], r.get("message")) for r in rows]
    for r in rows:
        assert r["machine"] and r["worker"].startswith("tls://")  # local:N talks TLS (issue 24)
        env = store.environment(r["env_id"])  # each worker machine's record is in the store
        assert env["host"]["hostname"] == r["machine"]
        # two workers on one host: said in the row, and a CPU timing taken beside another worker is noisy
        assert r["cluster_workers_on_host"] == 2 and r["noisy"]
        assert "shared with 1 other Dask worker" in r["noise_note"]


def test_a_killed_workers_cells_are_completed(cluster, tmp_path):
    spec = small_spec()
    store = Store(tmp_path / "s.sqlite")
    pids = cluster.client.run(os.getpid)
    killed: dict[str, int] = {}

    def kill_one(row: dict, index: int, total: int) -> None:
        if not killed:  # after the first row: the other cells are queued or running on the workers
            victim = next(a for a in sorted(pids) if a != row["worker"])
            os.kill(pids[victim], signal.SIGKILL)
            killed.update(pid=pids[victim], left=total - index - 1)

    out = run_sweep(spec, store=store, cluster=cluster, progress=False, on_cell=kill_one)
    assert killed and killed["left"] > 0
    assert not out.interrupted
    rows = stored_once(store, out.run_id, spec)
    assert all(r["status"] == "ok" for r in rows), [(r["status"], r.get("message")) for r in rows]
    cluster.client.wait_for_workers(2, timeout=120)  # the nanny restarts the worker for the next test
    assert killed["pid"] not in cluster.client.run(os.getpid).values()


def test_a_run_waits_for_local_workers_their_nannies_restart(cluster, tmp_path):
    """Both Dask workers killed just before the run (as a loaded CI machine did once): the run waits for the
    nannies to bring them back instead of refusing its cells for want of a worker."""
    for pid in cluster.client.run(os.getpid).values():
        os.kill(pid, signal.SIGKILL)
    spec = small_spec()
    store = Store(tmp_path / "s.sqlite")
    out = run_sweep(spec, store=store, cluster=cluster, progress=False)
    assert not out.interrupted
    assert all(r["status"] == "ok" for r in stored_once(store, out.run_id, spec))


def test_resume_runs_the_missing_cells_on_the_cluster(cluster, tmp_path):
    spec = small_spec()
    store = Store(tmp_path / "s.sqlite")
    seen: list[str] = []
    first = run_sweep(spec, store=store, cluster=cluster, progress=False,
                      on_cell=lambda row, i, n: seen.append(row["cell_key"]), should_stop=lambda: len(seen) >= 2)
    assert first.interrupted and store.run(first.run_id)["status"] == "interrupted"
    partial = store.rows([first.run_id])
    assert 2 <= len(partial) < len(spec.cells())
    again = run_sweep(None, store=store, resume_run_id=first.run_id, cluster=cluster, progress=False)
    assert again.run_id == first.run_id and store.run(first.run_id)["status"] == "finished"
    rows = stored_once(store, first.run_id, spec)
    assert all(r["status"] == "ok" for r in rows)
    assert all(store.environment(r["env_id"])["host"]["hostname"] for r in rows)  # a new store gets the records
    assert {r["cell_key"] for r in again.rows} == {c.key for c in spec.cells()} - {r["cell_key"] for r in partial}


def test_cells_no_worker_can_take_are_refused(cluster):
    gpu_cell = Cell.make("vector_add", "torch", "torch-cuda", "float32", {"n": 8}, "eager", "hot", None)
    with pytest.raises(ValueError, match=r"offers GPU=1 \(for torch-cuda\).*local cluster offers CPU=1 only.*"
                                         r"--resources GPU=1"):
        cluster.check_resources([gpu_cell])


def test_bench_cli_runs_and_resumes_on_a_local_cluster(run_python, tmp_path):
    store = tmp_path / "cli.sqlite"
    args = ["-m", "workbench", "bench", "--kernels", "vector_add", "--backends", "numpy", "--sizes", "1000", "333",
            "--budget", "0.02", "--rounds", "1", "--store", str(store), "--quiet"]
    env = {"WORKBENCH_AUTO_PEAKS": "0"}
    res = run_python(*args, "--cluster", "local:2", timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "INFO distributed" not in res.stderr  # Dask's own chatter stays out of the sweep's output
    rows = Store(store).rows()
    assert len(rows) == 2 and all(r["status"] == "ok" and r["worker"] for r in rows)
    again = run_python(*args[:3], "--resume", rows[0]["run_id"], "--store", str(store), "--cluster", "local:1",
                       timeout=300, env=env)
    assert again.returncode == 0 and "resuming run" in again.stderr, again.stderr[-2000:]
    assert len(Store(store).rows()) == 2  # a finished run: nothing ran twice
    bad = run_python(*args, "--cluster", "local", env=env)
    assert bad.returncode == 2 and "--cluster 'local' is not understood" in bad.stderr


def test_a_local_cluster_lets_no_client_without_its_credentials_in(cluster, tmp_path):
    """Issue 24: local:N ran on plain TCP, and any local user's Client ran code on its workers. Now TLS with
    credentials made for it: plain TCP, TLS without credentials and TLS with other credentials all fail."""
    from distributed import Client
    from distributed.security import Security

    address = cluster.client.scheduler.address
    assert address.startswith("tls://127.0.0.1:")
    assert all(a.startswith("tls://") for a in cluster.workers())
    hostport = address.split("://", 1)[1]
    for target, security in ((f"tcp://{hostport}", None), (address, None), (address, Security.temporary())):
        with pytest.raises(Exception) as refused:  # noqa: B017, PT011 - refused as Dask refuses: OSError, ...
            with Client(target, timeout=3, security=security) as intruder:
                intruder.run(os.getpid)  # code run on the workers as this user: what must not happen
        # A refused Client closes in its __del__: let that run here, not inside the next Client's start, where
        # the garbage collector once ran it under distributed's loop-runner lock (a deadlock: CI hung 10 min).
        del refused
        gc.collect()
    spec = small_spec()
    out = run_sweep(spec, store=Store(tmp_path / "s.sqlite"), cluster=cluster, progress=False)
    assert all(r["status"] == "ok" for r in out.rows)  # while the run itself works


def test_each_dask_workers_store_is_in_a_private_folder(cluster, tmp_path):
    """Issue 24: not /tmp/workbench-cluster-worker-<pid>.sqlite, which another user could plant first."""
    import stat
    import tempfile

    run_sweep(small_spec(), store=Store(tmp_path / "s.sqlite"), cluster=cluster, progress=False)

    def folders() -> list[tuple[str, int, int]]:
        from workbench.cluster import task

        return [(p, stat.S_IMODE(os.lstat(p).st_mode), os.lstat(p).st_uid)
                for p in (os.path.dirname(st.store.path) for st in task._states.values())]

    found = [f for per_worker in cluster.client.run(folders).values() for f in per_worker]
    assert found
    for folder, mode, uid in found:
        assert mode == 0o700 and uid == os.getuid() and os.path.dirname(folder) == tempfile.gettempdir()
        assert os.path.basename(folder).startswith("workbench-cluster-worker-")
