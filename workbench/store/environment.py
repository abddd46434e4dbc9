"""The machine and environment record every result row links to.

A benchmark number means little without the machine behind it: CPU, memory,
accelerators, BLAS and thread pools, runtime versions, the devices each backend
found (and why the others were not found). :func:`collect_environment` gathers
that into one JSON-serialisable dict and never raises: a part that fails is
recorded as ``{"error": ...}`` so the rest still arrives.

Importing a runtime costs seconds and hundreds of MB, so the record of a
command describes the backends that command probed and names every other
runtime by its installed version, read from package metadata. Only
``workbench info`` probes them all. :func:`environment_id` hashes the parts
that make two machines interchangeable for benchmarking, none of which depends
on what was probed, so results from identical machines group together whatever
each command selected.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import subprocess
from collections.abc import Callable, Mapping
from fnmatch import fnmatch
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from workbench.backends import registry
from workbench.core.record import Json, JsonObject
from workbench.core.threads import WAIT_VARS, usable_cores

#: Distributions whose versions decide results, besides those each runtime declares
#: (:attr:`~workbench.backends.runtime.Runtime.packages`); read from metadata, never imported.
RELEVANT_PACKAGES = ("kernel-workbench", "pandas", "matplotlib", "ipywidgets", "jupyterlab", "threadpoolctl", "psutil",
                     "py-cpuinfo")
NOT_INSTALLED = "not installed"
#: PCI classes of devices that compute: display controllers (0x03) and processing accelerators (0x12).
ACCELERATOR_PCI_CLASSES = ("0x03", "0x12")
#: Thread variables of the libraries every runtime shares (OpenMP, BLAS), before each runtime's own
#: (:attr:`~workbench.backends.runtime.Runtime.thread_variables`).
THREAD_ENV_VARS = ("OMP_NUM_THREADS", *WAIT_VARS, "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                   "NUMEXPR_NUM_THREADS")
#: CPU flags that change which code paths the runtimes take.
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile",
              "neon", "asimd", "sve")


def collect_environment(include_backends: bool = True, probe_all: bool = False) -> JsonObject:
    """The record of this process: the backends it has probed, unless ``probe_all``.

    ``probe_all`` probes every backend, importing every runtime: seconds, and
    what ``workbench info`` is for.
    """
    packages = _safe(package_versions)
    env: JsonObject = {
        "collected_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "workbench_version": _safe(_workbench_version),
        "host": _safe(host_info),
        "packages": packages,
        "runtimes": _safe(lambda: runtime_versions(packages)),
        "nvcc": _safe(nvcc_info),
        "git": _safe(git_info),
    }
    if include_backends:
        env["backends"] = _safe(lambda: backend_records(probe_all))
    if probe_all:  # compilers for compile-check (rung 4): a few subprocesses, so only when listing everything
        env["toolchains"] = _safe(_toolchain_records)
    # after the backends: threadpoolctl only sees the libraries loaded so far (a runtime may bring MKL or OpenMP)
    env["threadpools"] = _safe(threadpool_records)
    env["threads"] = _safe(thread_settings)
    env = _jsonable(env)
    env["environment_id"] = environment_id(env)
    return env


def environment_id(env: Mapping[str, Json]) -> str:
    """sha256 (16 hex digits) of host hardware, its accelerators, its Vulkan drivers and package versions.

    Hostname, time, git state and thread settings are left out on purpose:
    two identical machines should share an id whatever their names. So are the
    backend records: they hold what one command probed, which another command
    on the same machine may not have.
    """
    host = env.get("host") if isinstance(env.get("host"), dict) else {}
    subset = {
        "host": {k: host.get(k) for k in ("cpu_model", "machine", "system", "physical_cores", "logical_cores",
                                          "python", "accelerators")},
        "ram_gib": round((host.get("ram_bytes") or 0) / 2**30),
        "packages": env.get("packages") if isinstance(env.get("packages"), dict) else {},
    }
    if host.get("drivers"):  # only where there are any: other machines keep the ids they had
        subset["host"]["drivers"] = host["drivers"]
    blob = json.dumps(subset, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# -- parts ---------------------------------------------------------------
def host_info() -> JsonObject:
    import psutil

    from workbench.backends.cpu_common import cpu_device_info, cpuinfo_dict

    cpu = cpu_device_info()
    flags = set(cpuinfo_dict().get("flags", []))
    return {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "cpu_model": cpu.name,
        "cpu_vendor": cpu.vendor,
        "cpu_clock_mhz": cpu.clock_mhz,
        "last_level_cache_bytes": cpu.last_level_cache_bytes,
        "simd": [f for f in SIMD_FLAGS if f in flags],
        "physical_cores": psutil.cpu_count(logical=False),
        "logical_cores": psutil.cpu_count(logical=True),
        "usable_cores": usable_cores(),  # as given, not as a runtime's binding narrowed the first thread
        "ram_bytes": psutil.virtual_memory().total,
        "accelerators": pci_accelerators(),
        "drivers": runtime_drivers(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
    }


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that matter, from metadata only (nothing is imported).

    Names are read from the metadata folders' names where the distribution
    knows them: parsing every installed package's METADATA costs ~50 ms a command.
    """
    declared = registry.runtimes()
    names = {*RELEVANT_PACKAGES, *(p for rt in declared for p in rt.packages)}
    prefixes = tuple(p for rt in declared for p in rt.package_prefixes)
    found: dict[str, str] = {}
    for dist in distributions():
        name = (getattr(dist, "_normalized_name", None) or dist.metadata["Name"] or "").lower().replace("_", "-")
        if name in names or name.startswith(prefixes):
            found[name] = dist.version
    return dict(sorted(found.items()))


def pci_accelerators() -> list[str]:
    """``vendor:device`` PCI ids of the GPUs and accelerators present (Linux sysfs; empty elsewhere).

    Names the machine's devices without a runtime or driver, so the environment
    id says which GPU a machine has whatever backends a command probed.
    """
    found = []
    for dev in sorted(Path("/sys/bus/pci/devices").glob("*")):
        try:
            if (dev / "class").read_text().strip().startswith(ACCELERATOR_PCI_CLASSES):
                found.append(f"{(dev / 'vendor').read_text().strip()[2:]}:{(dev / 'device').read_text().strip()[2:]}")
        except OSError:
            continue
    return found


def runtime_drivers() -> dict[str, list[str]]:
    """Each runtime's installed driver files, where it declares a way to list them and any are installed."""
    out = {}
    for rt in registry.runtimes():
        found = rt.drivers() if rt.drivers else []
        if found:
            out[rt.name] = found
    return out


def runtime_distributions() -> dict[str, str]:
    """Each runtime that declares the distributions installing it, and those (a glob, for a family of wheels)."""
    return {rt.name: rt.distribution for rt in registry.runtimes() if rt.distribution}


def runtime_versions(packages: Any) -> dict[str, str]:
    """Each backend family's runtime: its installed version or "not installed", from package metadata."""
    packages = packages if isinstance(packages, dict) else {}
    out = {}
    for runtime, dist in runtime_distributions().items():
        found = [v if name == dist else f"{v} ({name})" for name, v in packages.items() if fnmatch(name, dist)]
        out[runtime] = ", ".join(found) or NOT_INSTALLED
    return out


def _toolchain_records() -> list[JsonObject]:
    from workbench.portable.toolchains import toolchain_records

    return toolchain_records()


def nvcc_info() -> dict[str, str] | None:
    path = shutil.which("nvcc")
    if path is None:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    m = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return {"path": path, "release": m.group(1) if m else "unknown", "version": m.group(2) if m else out.strip()}


def git_info() -> dict[str, str | bool] | None:
    """Commit of the workbench checkout this code runs from (None for an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=20, check=True).stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def backend_records(probe_all: bool = False) -> list[JsonObject]:
    """The backends probed so far (or all): the probe, and for available ones device, capabilities, timer, memory."""
    return [_backend_record(b) for b in (registry.all_backends().values() if probe_all
                                          else registry.probed_backends())]


def _backend_record(b: Any) -> JsonObject:
    cached = getattr(b, "cached_record", None)  # a stand-in from info's cached probe (backends.described)
    if isinstance(cached, dict):  # its record, no runtime imported
        return dict(cached)
    rec: JsonObject = {"name": b.name, "runtime": b.runtime}
    probe = _safe(b.probe)
    available = bool(getattr(probe, "available", False))
    rec.update(available=available, reason=getattr(probe, "reason", str(probe)),
               device_class=_safe(lambda: b.device_class))
    if available:
        rec["device"] = _safe(lambda: b.device_info().to_dict())
        rec["capabilities"] = _safe(lambda: b.capabilities().to_dict())
        rec["timer_kind"] = _safe(lambda: b.timer().kind)
        rec["memory_method"] = _safe(lambda: b.memory().method)
    return rec


def threadpool_records() -> list[JsonObject]:
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "version", "num_threads", "threading_layer", "architecture", "filepath")
    return [{k: p.get(k) for k in keep if k in p} for p in threadpool_info()]


def thread_settings() -> dict[str, str | int | None]:
    """Thread variables, the shared libraries' then each runtime's, and the runtimes' own pools where they are
    loaded (importing a runtime just to ask would cost seconds)."""
    declared = registry.runtimes()
    variables = (*THREAD_ENV_VARS, *(v for rt in declared for v in rt.thread_variables))
    settings: dict[str, str | int | None] = {var: os.environ.get(var) for var in variables}
    for rt in declared:
        if rt.thread_settings is not None:
            settings.update(rt.thread_settings())
    return settings


def _workbench_version() -> str:
    from workbench.version import __version__

    return __version__


# -- helpers -------------------------------------------------------------
def _safe(fn: Callable[[], Any]) -> Any:
    """Run one part of the record; a failure becomes ``{"error": ...}`` instead of an exception."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the record never raises: a failed part says why
        return {"error": f"{type(exc).__name__}: {exc}"}


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_jsonable(v) for v in x]
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return x if x == x and abs(x) != float("inf") else None
    if hasattr(x, "item"):  # numpy scalars
        return _jsonable(x.item())
    return str(x)
