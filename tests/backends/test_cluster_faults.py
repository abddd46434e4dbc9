"""A sweep on a real Dask scheduler and worker started here in subprocesses (as a fleet would run them): the
scheduler killed mid-run is an interrupted run that ``--resume`` finishes (issue 24), and a TLS scheduler takes
the client's credentials from ``--tls-*`` or Dask's configuration. Tiny numpy cells; nothing asserts a time."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")

from workbench.store.database import Store  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"], [sys.executable, "-m", "distributed.cli.dask_worker"]
#: The cells' processes and Dask's: no ceilings probe (the tests are about rows), Dask's INFO lines off.
ENV = {**os.environ, "PYTHONPATH": str(REPO), "WORKBENCH_AUTO_PEAKS": "0", "DASK_LOGGING__DISTRIBUTED": "error"}
SWEEP = ["-m", "workbench", "bench", "--kernels", "vector_add", "saxpy", "--backends", "numpy",
         "--sizes", "1000", "333", "4097", "--rounds", "2", "--quiet"]
CELLS = 6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kill(proc: subprocess.Popen) -> None:
    """The process and what it started (a Dask worker's nanny starts the worker process)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@contextlib.contextmanager
def fleet(tls: list[str] | None = None, security=None) -> Iterator[tuple[str, subprocess.Popen]]:
    """A scheduler and one ``CPU=1`` Dask worker on this machine (TLS with ``tls`` flags), ready: its address
    and the scheduler's process."""
    from distributed import Client

    scheme = "tls" if tls else "tcp"
    address = f"{scheme}://127.0.0.1:{free_port()}"
    procs = [subprocess.Popen([*DASK[0], "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                               "--no-dashboard", "--protocol", scheme, *(tls or [])], env=ENV,
                              start_new_session=True, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([*DASK[1], address, "--nthreads", "1", "--resources", "CPU=1",
                                       "--no-dashboard", *(tls or [])], env=ENV, start_new_session=True,
                                      stderr=subprocess.DEVNULL))
        with Client(address, timeout=60, security=security) as client:
            client.wait_for_workers(1, timeout=120)
        yield address, procs[0]
    finally:
        for p in procs:
            kill(p)


def stored_rows(store: Path) -> list[sqlite3.Row]:
    """The store's rows, read without writing to it (the sweep is writing)."""
    if not store.exists():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
            return db.execute("SELECT cell_key, status FROM results").fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return []


def test_a_lost_scheduler_interrupts_the_run_and_resume_finishes_it(tmp_path):
    """Issue 24: the scheduler killed mid-run stored every cell not back `crashed`, marked the run finished, and
    blamed missing CPU=1 workers. Now: measured cells stored, the rest unstored, one line saying how to resume."""
    store = tmp_path / "s.sqlite"
    with fleet() as (address, scheduler):
        run = subprocess.Popen([sys.executable, *SWEEP, "--budget", "0.3", "--store", str(store), "--cluster",
                                address], cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        deadline = time.monotonic() + 240
        while not stored_rows(store) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        kill(scheduler)  # after the first row: the other cells are queued or running on the Dask worker
        out, err = run.communicate(timeout=240)
    assert run.returncode == 2, (out, err)
    lines = [x for x in err.splitlines() if x.strip()]
    (error,) = [x for x in lines if "error:" in x]
    assert f"lost the Dask scheduler {address} mid-run" in error and "CPU=1" not in err and "Traceback" not in err
    assert "--resume" in error and f"--cluster {address}" in error
    db = Store(store)
    (run_id,) = db.runs()["run_id"]
    assert db.run(run_id)["status"] == "interrupted" and f"run {run_id} is interrupted" in error
    rows = db.rows([run_id])
    assert rows and all(r["status"] == "ok" for r in rows), [(r["status"], r.get("message")) for r in rows]
    assert sum(r["rounds"] for r in rows) < 2 * CELLS  # the cells not back are not stored: something is left
    db.close()

    with fleet() as (again, _):  # a new scheduler elsewhere finishes it: plain --resume picks the interrupted run
        res = subprocess.run([sys.executable, "-m", "workbench", "bench", "--resume", "--store", str(store),
                              "--cluster", again, "--quiet"], cwd=REPO, env=ENV, capture_output=True, text=True,
                             timeout=300)
    assert res.returncode == 0 and f"resuming run {run_id}" in res.stderr, res.stderr[-3000:]
    db = Store(store)
    assert db.run(run_id)["status"] == "finished"
    rows = db.rows([run_id])
    assert len(rows) == CELLS and max(Counter(r["cell_key"] for r in rows).values()) == 1
    assert all(r["status"] == "ok" and r["rounds"] == 2 for r in rows), [(r["status"], r["rounds"]) for r in rows]


def test_a_tls_fleet_takes_the_client_credentials_from_flags_or_dask_config(tmp_path):
    """The README's TLS recipe: scheduler and worker with --tls-ca-file/--tls-cert/--tls-key; the client the
    same flags (or DASK_DISTRIBUTED__COMM__TLS__*); without credentials a one-line refusal, exit 2."""
    from distributed.security import Security

    pytest.importorskip("cryptography", reason="the cluster extra's cryptography is not installed")
    creds = Security.temporary()  # one self-signed certificate, standing in for the fleet's CA-signed ones
    pem = {}
    for name, text in (("ca", creds.tls_ca_file), ("cert", creds.tls_client_cert), ("key", creds.tls_client_key)):
        pem[name] = str(tmp_path / f"{name}.pem")
        Path(pem[name]).write_text(text)
    Path(pem["key"]).chmod(0o600)  # the recipe's chmod 600: a key others can read is refused
    flags = ["--tls-ca-file", pem["ca"], "--tls-cert", pem["cert"], "--tls-key", pem["key"]]
    security = Security(tls_ca_file=pem["ca"], tls_client_cert=pem["cert"], tls_client_key=pem["key"],
                        require_encryption=True)
    store = tmp_path / "tls.sqlite"
    sweep = ["-m", "workbench", "bench", "--kernels", "vector_add", "--backends", "numpy", "--sizes", "1000",
             "--rounds", "1", "--budget", "0.02", "--store", str(store), "--quiet"]
    with fleet(flags, security) as (address, _):
        bare = subprocess.run([sys.executable, *sweep, "--cluster", address], cwd=REPO, env=ENV,
                              capture_output=True, text=True, timeout=300)
        with_flags = subprocess.run([sys.executable, *sweep, "--cluster", address, *flags], cwd=REPO, env=ENV,
                                    capture_output=True, text=True, timeout=300)
        from_config = subprocess.run(
            [sys.executable, *sweep, "--cluster", address], cwd=REPO, capture_output=True, text=True, timeout=300,
            env={**ENV, "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": pem["ca"],
                 "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": pem["cert"],
                 "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": pem["key"]})
    assert bare.returncode == 2 and "needs the client's TLS credentials: give --tls-ca-file" in bare.stderr
    assert len(bare.stderr.strip().splitlines()) == 1, bare.stderr
    for res in (with_flags, from_config):
        assert res.returncode == 0, res.stderr[-3000:]
        assert "plain TCP" not in res.stderr
    rows = Store(store).rows()
    assert len(rows) == 2 and all(r["status"] == "ok" and r["worker"].startswith("tls://") for r in rows)
