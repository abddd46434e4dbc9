"""The machine/environment record: complete, JSON-clean, never raising, with a stable id."""

from __future__ import annotations

import copy
import importlib.metadata
import json

import pytest

from workbench.store import environment


@pytest.fixture(scope="module")
def env() -> dict:
    return environment.collect_environment(probe_all=True)


def test_host_section(env):
    host = env["host"]
    for key in ("hostname", "os", "cpu_model", "physical_cores", "logical_cores", "ram_bytes", "python"):
        assert host[key], key
    assert host["logical_cores"] >= host["physical_cores"] >= 1
    assert host["ram_bytes"] > 2**28
    assert host["last_level_cache_bytes"] is None or host["last_level_cache_bytes"] >= 2**18


def test_record_is_plain_json(env):
    assert json.loads(json.dumps(env, allow_nan=False)) == env


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def test_packages_threads_and_pools(env):
    runtimes = {"numpy", "torch", "numba", "pyopencl", "cupy-cuda13x"}
    assert {d for d in runtimes if _installed(d)} <= set(env["packages"])
    assert env["packages"]["numpy"] == __import__("numpy").__version__
    threads = env["threads"]
    assert {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"} <= set(threads)
    if _installed("torch"):  # the record probed every backend, torch-cpu included
        assert threads["torch_num_threads"] >= 1
    assert any(p.get("user_api") == "blas" for p in env["threadpools"]), env["threadpools"]
    assert env["git"] is None or len(env["git"]["commit"]) == 40


def test_backends_section(env):
    by_name = {b["name"]: b for b in env["backends"]}
    numpy = by_name["numpy"]
    assert numpy["available"] and numpy["device"]["name"] and "float32" in numpy["capabilities"]["dtypes"]
    assert numpy["timer_kind"] == "sync+perf_counter" and numpy["memory_method"]
    cupy = by_name["cupy"]
    if not cupy["available"]:
        assert cupy["reason"] and "device" not in cupy


def test_package_versions_import_nothing(run_python):
    code = ("import sys, workbench.store.environment as e; v = e.package_versions(); "
            "print('torch' in v, [m for m in ('torch', 'cupy', 'numba', 'pyopencl') if m in sys.modules])")
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [str(_installed("torch")), "[]"]


def test_environment_id(env):
    same = copy.deepcopy(env)
    same["host"]["hostname"] = "another-box"  # identical machines under other names share an id
    same["collected_at"] = "2000-01-01T00:00:00+00:00"
    assert environment.environment_id(same) == env["environment_id"] == environment.environment_id(env)
    assert len(env["environment_id"]) == 16
    newer = copy.deepcopy(env)
    newer["packages"]["numpy"] = "99.0.0"
    assert environment.environment_id(newer) != env["environment_id"]
    other_cpu = copy.deepcopy(env)
    other_cpu["host"]["cpu_model"] = "Some Other CPU"
    assert environment.environment_id(other_cpu) != env["environment_id"]
    assert environment.environment_id({}) == environment.environment_id({"host": "garbage"})


def test_never_raises(monkeypatch: pytest.MonkeyPatch):
    def boom():
        raise OSError("no /proc here")

    monkeypatch.setattr(environment, "host_info", boom)
    monkeypatch.setattr(environment, "nvcc_info", boom)
    env = environment.collect_environment(include_backends=False)
    assert env["host"] == {"error": "OSError: no /proc here"}
    assert "error" in env["nvcc"] and env["packages"]["numpy"]
    json.dumps(env)


def test_a_commands_record_names_every_runtime_without_importing_it(run_python, env):
    """By default only the backends probed so far are recorded; the others are named from package metadata."""
    code = """
import json, sys
from workbench import environment
from workbench.backends import registry
registry.get("numpy").probe()
rec = environment.collect_environment()
print(json.dumps({"backends": [b["name"] for b in rec["backends"]], "runtimes": rec["runtimes"],
                  "id": rec["environment_id"], "torch_threads": rec["threads"]["torch_num_threads"],
                  "loaded": [m for m in ("torch", "cupy", "numba", "pyopencl") if m in sys.modules]}))
"""
    res = run_python(code=code)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["backends"] == ["numpy"] and out["loaded"] == [] and out["torch_threads"] is None
    assert set(out["runtimes"]) == set(environment.runtime_distributions())
    assert out["runtimes"] == env["runtimes"]
    if _installed("torch"):
        assert out["runtimes"]["torch"] == env["packages"]["torch"]
    if _installed("cupy-cuda13x"):
        assert out["runtimes"]["cupy"] == f"{env['packages']['cupy-cuda13x']} (cupy-cuda13x)"
    assert out["id"] == env["environment_id"], "the id must not depend on what a command probed"


def test_runtime_versions_say_not_installed():
    assert environment.runtime_versions({"numpy": "2.0"}) == {
        "numpy": "2.0", "numba": "not installed", "torch": "not installed", "cupy": "not installed",
        "opencl": "not installed"}
