"""The pieces of ``--cluster`` that need no cluster: parsing the flag, the resources a cell asks for, the
shared-host note a row gets."""

from __future__ import annotations

import pytest

from workbench.cluster import ClusterExecutor, parse_cluster, resources_for


@pytest.mark.parametrize("text, parsed", [("local:2", ("local", 2)), (" local:1 ", ("local", 1)),
                                          ("tcp://gpu-node-1:8786", ("address", "tcp://gpu-node-1:8786")),
                                          ("tls://10.0.0.5:8786", ("address", "tls://10.0.0.5:8786"))])
def test_cluster_forms(text, parsed):
    assert parse_cluster(text) == parsed


@pytest.mark.parametrize("bad", ["local", "local:0", "local:x", "gpu-node-1:8786", "http://host:8786", ""])
def test_a_bad_cluster_names_the_valid_forms(bad):
    with pytest.raises(ValueError, match=r"--cluster .*(local:N|1 to 256)"):
        parse_cluster(bad)


def test_cpu_backends_ask_for_cpu_and_devices_for_gpu(fresh_registry):
    assert resources_for("numpy") == {"CPU": 1}
    assert resources_for("torch-cpu") == {"CPU": 1}
    assert resources_for("torch-cuda") == {"GPU": 1}  # whether or not this machine has one
    assert resources_for("no-such-backend") == {"CPU": 1}  # its cell only reports that it is unknown


def finish(row: dict) -> dict:
    return ClusterExecutor.finish_row(object.__new__(ClusterExecutor), dict(row))


def test_a_shared_host_is_said_in_the_row():
    cpu = finish({"status": "ok", "backend": "numpy", "cluster_workers_on_host": 3, "noisy": False,
                  "noise_note": "spread 12% across 3 rounds"})
    assert cpu["noisy"] and cpu["noise_note"].startswith("spread 12% across 3 rounds; measured on a host shared "
                                                         "with 2 other Dask worker(s)")
    assert finish(cpu)["noise_note"] == cpu["noise_note"]  # a later round does not repeat the note
    gpu = finish({"status": "ok", "backend": "torch-cuda", "cluster_workers_on_host": 2, "noisy": False})
    assert not gpu["noisy"] and "shared with 1 other" in gpu["noise_note"]  # device time: noted, not flagged
    alone = {"status": "ok", "backend": "numpy", "cluster_workers_on_host": 1, "noisy": False}
    assert finish(alone) == alone


def test_reports_group_rows_by_machine():
    import pandas as pd

    from workbench.report.env_summary import machines_table

    envs = {"e1": {"host": {"hostname": "node-a"}}, "e2": {"host": {"hostname": "node-b"}}}
    local = pd.DataFrame({"env_id": ["e1", "e1"], "backend": ["numpy", "numba"]})
    assert machines_table(local, envs).empty  # one machine: the environment line says it all
    cluster = pd.DataFrame({"env_id": ["e1", "e1", "e1", "e2"], "backend": ["numpy", "torch-cuda", "numpy", "cupy"],
                            "machine": ["node-a", "node-a", "node-c", None],
                            "worker": ["tcp://a:1", "tcp://a:2", "tcp://c:1", None]})
    table = machines_table(cluster, envs)  # node-c shares node-a's environment id (identical machines)
    assert table.to_dict("records") == [
        {"machine": "node-a", "environment": "e1", "workers": 2, "backends": "numpy, torch-cuda", "cells": 2},
        {"machine": "node-b", "environment": "e2", "workers": 0, "backends": "cupy", "cells": 1},
        {"machine": "node-c", "environment": "e1", "workers": 1, "backends": "numpy", "cells": 1}]


def test_a_worker_without_the_named_device_says_how_to_name_it(tmp_path, monkeypatch):
    """What a Dask worker does with a cell for a device it does not have (run here, without Dask)."""
    from workbench.cluster import task
    from workbench.measure.cell import Cell
    from workbench.measure.request import CellRequest
    from workbench.measure.timer import TimingConfig

    monkeypatch.setattr(task.tempfile, "gettempdir", lambda: str(tmp_path))
    cell = Cell.make("vector_add", "torch", "torch-cuda:3", "float32", {"n": 8})
    try:
        out = task.run_request(CellRequest(cell, TimingConfig(), timeout_s=30.0, seed=7), "in-process", None,
                               worker_address="tcp://node-a:1")
    finally:
        task.close_states()
    row = out.to_row()
    assert row["status"] == "error" and row["seed"] == 7 and row["worker"] == "tcp://node-a:1"
    assert "has no backend 'torch-cuda:3'" in row["message"] and "name 'torch-cuda'" in row["message"]
    assert out.environment["environment_id"] == out.placement["env_id"]
    assert not list(tmp_path.glob("workbench-cluster-worker-*"))  # the worker's own store is removed on close


def numpy_request(seed: int = 3):
    from workbench.measure.cell import Cell
    from workbench.measure.request import CellRequest
    from workbench.measure.timer import TimingConfig

    cell = Cell.make("vector_add", "numpy", "numpy", "float32", {"n": 4096})
    return CellRequest(cell, TimingConfig(budget_s=0.02, warmup_s=0.0, min_samples=3), timeout_s=60.0, seed=seed)


@pytest.mark.parametrize("planted", ["symlink", "store"])
def test_a_planted_file_at_the_old_worker_store_path_has_no_effect(planted, tmp_path, monkeypatch):
    """Issue 24: the Dask worker's store was /tmp/workbench-cluster-worker-<pid>.sqlite: a symlink planted there
    was followed, and a planted store's fake ceiling gave rows millions of % of peak. Now a private folder."""
    import os
    import stat

    from workbench.cluster import task
    from workbench.roofs.model import MEASURED
    from workbench.store.database import Store, current_environment

    monkeypatch.setattr(task.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")  # no probe: only a stored ceiling could give a % of peak
    old = tmp_path / f"{task.STORE_PREFIX}{os.getpid()}.sqlite"
    victim = tmp_path / "victim.txt"
    victim.write_text("not a store")
    if planted == "symlink":
        old.symlink_to(victim)
    else:
        fake = Store(old)
        fake.set_peak(current_environment()[0], "numpy", "bandwidth_gbps", "float32", 0.001, "GB/s", "planted")
        fake.close()
    before = old.read_bytes()
    try:
        row = task.run_request(numpy_request(), "in-process", None, worker_address="tcp://node-a:1").to_row()
        (state,) = task._states.values()
        folder = os.path.dirname(state.store.path)
        info = os.lstat(folder)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
        assert os.path.basename(folder).startswith(f"{task.STORE_PREFIX}{os.getpid()}-")
        assert os.path.realpath(state.store.path) != os.path.realpath(old)
    finally:
        task.close_states()
    assert row["status"] == "ok", row.get("message")
    assert row.get("ceiling_source") != MEASURED and row.get("ceiling_gbps") != 0.001
    assert old.read_bytes() == before and victim.read_text() == "not a store"  # nothing written through it
    assert not os.path.exists(folder)  # the private folder goes with the worker's executors


def test_only_this_users_orphaned_worker_folders_are_removed(tmp_path, monkeypatch):
    """A killed Dask worker's folder is removed by the next one; a symlink named like one, a live worker's
    folder and other files are left alone (a planted name must not make a worker delete elsewhere)."""
    import os

    from workbench.cluster import task

    monkeypatch.setattr(task.tempfile, "gettempdir", lambda: str(tmp_path))
    dead_pid = 2**22 + 12345  # above pid_max's default: no such process
    orphan = tmp_path / f"{task.STORE_PREFIX}{dead_pid}-abc"
    orphan.mkdir(mode=0o700)
    (orphan / task.STORE_NAME).write_text("left by a killed worker")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    link = tmp_path / f"{task.STORE_PREFIX}{dead_pid + 1}-xyz"
    link.symlink_to(target, target_is_directory=True)
    alive = tmp_path / f"{task.STORE_PREFIX}{os.getppid()}-live"
    alive.mkdir(mode=0o700)
    task._remove_orphaned_stores()
    assert not orphan.exists()
    assert link.is_symlink() and (target / "keep.txt").read_text() == "keep"
    assert alive.is_dir()


class _FakeClient:
    def __init__(self, status: str, workers: dict | None = None):
        self.status, self._workers = status, workers or {}

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return {"workers": self._workers}


def bare_executor(client: _FakeClient) -> ClusterExecutor:
    """A ClusterExecutor around a stand-in client (what the executor decides, without a cluster)."""
    ex = object.__new__(ClusterExecutor)
    ex.address, ex.client, ex._local, ex.lost, ex._log_levels = "tcp://head:8786", client, None, False, {}
    ex._hosts, ex._envs_sent = {}, set()
    return ex


def test_a_client_without_its_scheduler_is_lost_not_missing_workers():
    """Issue 24: after the scheduler died, the next round was refused for want of CPU=1 workers."""
    import logging

    from workbench.cluster import SchedulerLost

    before = logging.getLogger("distributed.client").level
    ex = bare_executor(_FakeClient("connecting"))
    with pytest.raises(SchedulerLost, match=r"lost the Dask scheduler tcp://head:8786") as err:
        ex.check_resources([numpy_request().cell])
    assert "CPU=1" not in str(err.value) and err.value.address == "tcp://head:8786"
    assert ex.lost
    assert logging.getLogger("distributed.client").level >= logging.CRITICAL  # Dask's reconnect tracebacks stay quiet
    logging.getLogger("distributed.client").setLevel(before)
    up = bare_executor(_FakeClient("running", {"tcp://a:1": {"host": "a", "resources": {}}}))
    with pytest.raises(ValueError, match="offers CPU=1") as refused:
        up.check_resources([numpy_request().cell])  # a connected cluster without CPU=1 workers still says so
    assert not isinstance(refused.value, SchedulerLost)


class _Future:
    def __init__(self, exc: BaseException):
        self.exc = exc

    def result(self):
        raise self.exc


def test_a_cell_cancelled_by_a_lost_scheduler_is_not_stored_crashed():
    from concurrent.futures import CancelledError

    from workbench.cluster import SchedulerLost

    class Cancelled(CancelledError):  # distributed's FutureCancelledError carries a reason
        reason = "scheduler-connection-lost"

    request = numpy_request()
    ex = bare_executor(_FakeClient("connecting"))
    with pytest.raises(SchedulerLost, match="connection closed"):
        ex._result(_Future(Cancelled()), request, 0.0)
    worker_died = bare_executor(_FakeClient("running"))
    res = worker_died._result(_Future(RuntimeError("KilledWorker: the cell killed 3 workers")), request, 0.0)
    assert res.to_row()["status"] == "crashed"  # a cell that killed its Dask workers is still its own fault


@pytest.fixture
def pem_files(tmp_path):
    """A CA, certificate and key as PEM files (Dask's temporary credentials, written out)."""
    security = pytest.importorskip("distributed.security", reason="the cluster extra is not installed")
    pytest.importorskip("cryptography", reason="the cluster extra's cryptography is not installed")
    creds = security.Security.temporary()
    files = {}
    for name, text in (("ca", creds.tls_ca_file), ("cert", creds.tls_client_cert), ("key", creds.tls_client_key)):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(text)
    files["key"].chmod(0o600)  # as the README's recipe leaves it: a key others can read is refused
    return files


def test_tls_flags_give_the_client_its_credentials(pem_files):
    from workbench.cluster import tls_security

    assert tls_security("tls://head:8786", None, None, None) is None  # none given: Dask's configuration is read
    sec = tls_security("tls://head:8786", str(pem_files["ca"]), str(pem_files["cert"]), str(pem_files["key"]))
    assert sec.require_encryption and sec.tls_ca_file == str(pem_files["ca"])
    assert sec.tls_client_cert == str(pem_files["cert"]) and sec.tls_client_key == str(pem_files["key"])


@pytest.mark.parametrize("cluster, given, words", [
    ("tcp://head:8786", {"ca": "ca"}, r"--tls-ca-file goes with a TLS scheduler: give --cluster tls://"),
    (None, {"cert": "cert"}, r"--tls-cert goes with a TLS scheduler"),
    ("tls://head:8786", {"cert": "cert", "key": "key"}, r"--tls-ca-file is missing"),
    ("tls://head:8786", {"ca": "ca"}, r"--tls-cert is missing"),
    ("tls://head:8786", {"ca": "nowhere", "cert": "cert"}, r"--tls-ca-file '.*nowhere': no readable file"),
])
def test_bad_tls_flags_say_what_to_give(pem_files, tmp_path, cluster, given, words):
    from workbench.cluster import tls_security

    paths = {k: str(pem_files.get(v, tmp_path / v)) for k, v in given.items()}
    with pytest.raises(ValueError, match=words):
        tls_security(cluster, paths.get("ca"), paths.get("cert"), paths.get("key"))


def test_a_tls_scheduler_without_credentials_is_refused_before_connecting(monkeypatch):
    dask = pytest.importorskip("dask", reason="the cluster extra is not installed")
    pytest.importorskip("distributed")
    from workbench.cluster.security import check_security

    with dask.config.set({"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}):
        with pytest.raises(ValueError, match=r"--cluster 'tls://head:8786' needs the client's TLS credentials: "
                                             r"give --tls-ca-file CA --tls-cert CERT .*DASK_DISTRIBUTED__COMM__TLS__"):
            check_security("tls://head:8786", None)


def test_dask_config_gives_a_tls_scheduler_its_credentials(pem_files):
    """The other way to give them (documented in the README): Dask's config, e.g. DASK_DISTRIBUTED__COMM__TLS__*."""
    import dask

    from workbench.cluster.security import check_security

    with dask.config.set({"distributed.comm.tls.ca-file": str(pem_files["ca"]),
                          "distributed.comm.tls.client.cert": str(pem_files["cert"]),
                          "distributed.comm.tls.client.key": str(pem_files["key"])}):
        sec = check_security("tls://head:8786", None)
    assert sec.tls_ca_file == str(pem_files["ca"]) and sec.tls_client_cert == str(pem_files["cert"])


def test_a_plain_tcp_scheduler_gets_a_one_line_warning(caplog, pem_files):
    from workbench.cluster.security import check_security

    with caplog.at_level("WARNING", logger="workbench.cluster.security"):
        check_security("tcp://head:8786", None)
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "workbench.cluster.security"]
    assert "\n" not in warning and "tcp://head:8786 is plain TCP: anyone who can reach that scheduler can run code" \
        in warning and "tls://" in warning and "README" in warning
    from workbench.cluster import tls_security

    sec = tls_security("tls://head:8786", str(pem_files["ca"]), str(pem_files["cert"]), None)
    with pytest.raises(ValueError, match="TLS credentials go with a tls:// scheduler address"):
        check_security("tcp://head:8786", sec)  # credentials given for a plain address: a mistake, said


def test_a_server_that_is_not_a_dask_scheduler_is_a_clear_error():
    """Found behind issue 24's unreachable-address case: where another server (HTTP here) answers, the TCP probe
    passes and Dask read its reply as a frame of exabytes: `internal error: MemoryError`. Now one clear line."""
    import socket
    import threading

    pytest.importorskip("distributed", reason="the cluster extra is not installed")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer_http() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                conn.recv(1024)

    threading.Thread(target=answer_http, daemon=True).start()
    with pytest.raises(ValueError, match=rf"--cluster 'tcp://127.0.0.1:{port}': what answers there is no Dask "
                                         r"scheduler that accepts this client \(.*\); check that `dask scheduler`"):
        ClusterExecutor(f"tcp://127.0.0.1:{port}")


class _Done:
    def __init__(self, res):
        self.res = res

    def result(self):
        return self.res


def test_a_result_in_hand_when_the_scheduler_goes_is_kept():
    """The cell's result came back, then the scheduler went before its host's workers were counted: the row is
    still returned (and stored), counted with the workers last seen on its host."""
    from workbench.core.status import Status
    from workbench.measure.cell import failed_result

    request = numpy_request()
    res = failed_result(request.cell, Status.ERROR, "measured elsewhere", seed=3, started=0.0)
    res.placement.update(env_id="env-a", worker="tcp://a:1")
    ex = bare_executor(_FakeClient("connecting"))
    ex._hosts = {"tcp://a:1": "a", "tcp://a:2": "a", "tcp://b:1": "b"}
    out = ex._result(_Done(res), request, 0.0)
    assert out is res and out.placement["cluster_workers_on_host"] == 2 and ex.lost
