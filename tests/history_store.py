"""Synthetic histories in a real store, for the history tests and tests/perf/history.py: runs with given
medians and noise per cell, written through the store's own API (rows, runs, environments)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from workbench.core.record import cell_key
from workbench.store.database import Store


def machine_record(cpu: str = "Test CPU", cores: int = 8, numpy: str = "2.0.0") -> dict:
    """An environment record with the parts a machine fingerprint and its versions are read from."""
    return {"host": {"cpu_model": cpu, "machine": "x86_64", "system": "Linux", "physical_cores": cores,
                     "logical_cores": cores, "ram_bytes": 32 * 2**30, "accelerators": [], "python": "3.11.7"},
            "packages": {"numpy": numpy}, "workbench_version": "0.1.0"}


def cell_row(run_id: str, env_id: str, kernel: str, variant: str, median_s: float, *, noise: float = 0.01,
             rounds: int = 3, precision: float = 0.01, size: int = 1024) -> dict:
    params = {"n": size}
    return {"run_id": run_id, "cell_key": cell_key(kernel, variant, "numpy", "float32", params, "eager", "hot"),
            "kernel": kernel, "variant": variant, "backend": "numpy", "dtype": "float32",
            "params": f'{{"n":{size}}}', "size": size, "size_label": f"n={size}", "mode": "eager", "cache": "hot",
            "timer_kind": "sync+perf_counter", "env_id": env_id, "status": "ok", "median_s": median_s,
            "noise": noise, "rounds": rounds, "median_precision": precision}


def write_history(store: Store, medians: Mapping[tuple[str, str], Sequence[float]], *, env_id: str = "env-a",
                  record: Mapping | None = None, noise: Mapping[tuple[str, str], float] | None = None,
                  commits: Sequence[str] | None = None, start_day: int = 1) -> list[str]:
    """One run per index of the sequences in ``medians`` ({(kernel, variant): medians}), a day apart, all on
    one environment; each run's commit from ``commits``. Returns the run ids in order."""
    store.add_environment(env_id, dict(record or machine_record()))
    n = max(len(v) for v in medians.values())
    ids = []
    for i in range(n):
        commit = commits[i] if commits else f"c{i:09x}{i:030x}"  # a new commit each run
        run_id = store.new_run(name=f"run {i + 1}", suite="synthetic", env_id=env_id, tag=f"t{i + 1}",
                               code_commits=[{"catalog": "/cat", "repo": "/cat", "commit": commit, "dirty": False}])
        day, minute = divmod(start_day * 1440 + i, 1440)
        with store._write() as c:
            c.execute("UPDATE runs SET created_at = ?, status = 'finished' WHERE run_id = ?",
                      (f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{minute // 60:02d}:{minute % 60:02d}:00.000Z",
                       run_id))
        for (kernel, variant), values in medians.items():
            if i < len(values) and math.isfinite(values[i]):
                s = (noise or {}).get((kernel, variant), 0.01)
                store.record(cell_row(run_id, env_id, kernel, variant, values[i], noise=s * math.sqrt(3),
                                      precision=s))
        ids.append(run_id)
    return ids
