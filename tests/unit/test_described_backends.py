"""A sweep's parent plans from `workbench info`'s cached probe (issue 25: no backend imported by the parent that
it does not need): stand-ins answer availability, dtypes and devices without importing any runtime."""

from __future__ import annotations

import json
import textwrap

import pytest

from workbench.backends.described import DescribedBackend, described_backends, static_fields

NUMPY_RECORD = {"name": "numpy", "runtime": "numpy", "available": True, "reason": "", "device_class": "cpu",
                "device": {"name": "Some CPU", "vendor": "x", "kind": "cpu", "total_memory_bytes": 1 << 30,
                           "compute_units": 2, "clock_mhz": None, "last_level_cache_bytes": 1 << 20,
                           "versions": {"numpy": "2"}, "extra": {}},
                "capabilities": {"dtypes": ["float16", "float32", "float64"], "warp_size": None,
                                 "shared_memory_per_block": None, "max_threads_per_block": None,
                                 "device_events": False, "compiles_device_code": False}}
NUMPY_STATIC = {"module": "workbench.backends.numpy_backend", "timed_only_when_named": False, "worker_env": {},
                "device_index": None}


def test_a_stand_in_answers_from_its_record_and_hands_the_rest_to_the_real_backend():
    b = DescribedBackend(NUMPY_RECORD, NUMPY_STATIC)
    assert (b.name, b.runtime, b.priority, b.probe().available) == ("numpy", "numpy", 100, True)
    assert b.capabilities().dtypes == ("float16", "float32", "float64")
    assert b.device_info().last_level_cache_bytes == 1 << 20
    assert getattr(b, "device_index", 0) == 0 and b._real is None  # answered without the real backend
    import numpy as np

    assert b.to_numpy(b.from_numpy(np.arange(3.0))).tolist() == [0.0, 1.0, 2.0]  # the real numpy backend's
    assert b._real is not None and b._real.name == "numpy"


def test_stand_ins_come_only_for_backends_with_static_fields():
    doc = {"backends": [NUMPY_RECORD, {**NUMPY_RECORD, "name": "other"}], "static": {"numpy": NUMPY_STATIC}}
    found = described_backends(doc)
    assert list(found) == ["workbench.backends.numpy_backend"]
    assert [b.name for b in found["workbench.backends.numpy_backend"]] == ["numpy"]


def test_static_fields_of_a_real_backend():
    from workbench.backends import registry

    assert static_fields(registry.get("numpy")) == NUMPY_STATIC


def test_a_sweep_parent_with_a_cached_probe_imports_no_runtime(run_python, tmp_path):
    """torch-cpu described as available: bench plans, runs the cell in a worker (which imports torch) and
    stores it, and the parent never imports torch; its environment record lists the described backend."""
    pytest.importorskip("torch", reason="the worker runs the cell on torch-cpu (the core tier has no torch)")
    code = textwrap.dedent(f"""
        import json, sys
        from workbench.backends import described
        from workbench.store.environment import package_versions
        torch_cpu = {{**{NUMPY_RECORD!r}, "name": "torch-cpu", "runtime": "torch"}}
        static = {{"module": "workbench.backends.torch_backend", "timed_only_when_named": False,
                   "worker_env": {{}}, "device_index": 0}}
        key = described.probe_fingerprint(package_versions())
        described.write_cache(key, {{"backends": [torch_cpu], "toolchains": [], "probed_at": "now"}},
                              {{"torch-cpu": static}})
        from workbench.cli import main
        rc = main(["bench", "--kernels", "vector_add", "--backends", "torch-cpu", "--sizes", "4096",
                   "--budget", "0.02", "--rounds", "1", "--store", {str(tmp_path / "s.sqlite")!r}, "--quiet"])
        from workbench.store.database import Store
        st = Store({str(tmp_path / "s.sqlite")!r})
        rows = st.rows()
        env = st.environment(rows[0]["env_id"])
        print(json.dumps({{"rc": rc, "torch": "torch" in sys.modules,
                          "status": sorted({{r["status"] for r in rows}}),
                          "backends": sorted({{r["backend"] for r in rows}}),
                          "env_backends": [b["name"] for b in env["backends"]]}}))
    """)
    done = run_python(code=code, env={"XDG_CACHE_HOME": str(tmp_path / "cache"), "WORKBENCH_AUTO_PEAKS": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rc"] == 0 and got["torch"] is False, got
    assert got["backends"] == ["torch-cpu"] and got["status"] == ["ok"], got
    assert "torch-cpu" in got["env_backends"], got


def test_info_keeps_what_stand_ins_need(tmp_path, monkeypatch):
    from workbench.backends import registry
    from workbench.backends.described import cache_path
    from workbench.cli import cmd_info
    from workbench.portable import toolchains
    from workbench.store import environment

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    numpy = registry.get("numpy")
    numpy.probe()
    monkeypatch.setattr(environment, "backend_records", lambda probe_all=False: [NUMPY_RECORD])
    monkeypatch.setattr(toolchains, "toolchain_records", lambda: [])
    cmd_info.probed_backends({"numpy": "2.4.6"})
    doc = json.loads(cache_path().read_text())
    assert doc["static"]["numpy"] == NUMPY_STATIC


def test_workbench_settings_leave_the_probe_fingerprint_alone(monkeypatch):
    """The store, automatic peaks and log level change no probe: a perf script that set WORKBENCH_AUTO_PEAKS=0
    missed `workbench info`'s cache, and every sweep's parent probed again (+11 points of isolation cost).
    A variable a runtime reads still changes it."""
    from workbench.backends import described

    monkeypatch.delenv("POCL_DEVICES", raising=False)
    before = described.probe_fingerprint({"numpy": "2"})
    for name, value in (("WORKBENCH_AUTO_PEAKS", "0"), ("WORKBENCH_STORE", "/tmp/x.sqlite"),
                        ("WORKBENCH_LOG_LEVEL", "debug")):
        monkeypatch.setenv(name, value)
    assert described.probe_fingerprint({"numpy": "2"}) == before
    monkeypatch.setenv("POCL_DEVICES", "cpu")
    assert described.probe_fingerprint({"numpy": "2"}) != before
