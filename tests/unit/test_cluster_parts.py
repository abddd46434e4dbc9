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
    from workbench.harness.cell import Cell
    from workbench.harness.request import CellRequest
    from workbench.harness.timer import TimingConfig

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
