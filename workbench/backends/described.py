"""Backends as the last probe of this machine described them: a sweep's parent plans without importing runtimes.

Probing every backend imports every runtime (torch, pyopencl, wgpu, numba ...: 5-18 s and ~500 MB on our
2-core machines), and a sweep's parent only plans: which backends run here, their dtypes, their device for
the ceilings, the environment record. Its cells run in worker processes, which import and probe their own
runtime for real. So ``workbench info`` keeps its probe of every backend in a per-user cache (valid while
nothing it depends on changes: :func:`probe_fingerprint`, and for a day), and a parent that runs no cell
itself (:func:`workbench.cli.probe_cache.describe_from_cache`) answers those questions from it with
:class:`DescribedBackend` stand-ins.
Anything else asked of a stand-in (arrays, timers, memory) goes to the real backend, probed then.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.backends.base import Backend, BackendUnavailable, Capabilities, DeviceInfo, Probe
from workbench.core.output_guard import atomic_write_text
from workbench.core.record import JsonObject
from workbench.core.regular_files import read_regular_text

#: How long a cached probe of the backends is trusted when nothing it depends on changed.
CACHE_TTL_S = 24 * 3600.0
#: What a stand-in needs beyond the environment record of its backend (kept beside the records in the cache).
STATIC_FIELDS = ("module", "timed_only_when_named", "worker_env", "device_index")


def cache_path() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "workbench" / "info-probes.json"


def probe_fingerprint(packages: Any) -> str:
    """What a probe's answer depends on, hashed: package versions, the variables runtimes read, device nodes,
    OpenCL/Vulkan driver files, compilers on the PATH, and the workbench's backend code."""
    # not WORKBENCH_*: the store, the automatic peaks or the log level change no probe, and a perf script that set
    # WORKBENCH_AUTO_PEAKS=0 had every sweep's parent probe again (the quick suite in worker processes +20%, not +9%)
    prefixes = ("CUDA", "HIP", "ROC", "HSA", "OCL", "POCL", "PYOPENCL", "WGPU", "VK_", "TRITON", "TORCH",
                "PYTORCH", "NUMBA", "MESA", "LD_LIBRARY_PATH", "PATH", "XDG_RUNTIME_DIR")
    files: list[str] = []
    for pattern in ("/dev/nvidia*", "/dev/kfd", "/dev/dri/*", "/etc/OpenCL/vendors/*", "/usr/share/vulkan/icd.d/*",
                    "/etc/vulkan/icd.d/*", str(Path(__file__).resolve().parent / "*.py")):
        for f in sorted(Path("/").glob(pattern.lstrip("/"))):
            try:
                files.append(f"{f}:{f.stat().st_mtime_ns}")
            except OSError:
                files.append(str(f))
    doc = {"packages": packages, "python": sys.executable, "host": platform.node(), "files": files,
           "env": sorted((k, v) for k, v in os.environ.items() if k.startswith(prefixes)),
           "tools": [shutil.which(t) for t in ("nvcc", "hipcc", "ptxas")]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def read_cache(key: str) -> JsonObject | None:
    """The cached probe when it was kept under ``key`` (:func:`probe_fingerprint`) less than
    :data:`CACHE_TTL_S` ago, else None."""
    try:
        doc = json.loads(read_regular_text(cache_path(), what="probe cache"))
        if doc.get("key") == key and time.time() - float(doc.get("time", 0)) < CACHE_TTL_S:
            return doc
    except (OSError, ValueError, TypeError, AttributeError):
        pass  # no cache, or an unreadable one
    return None


def write_cache(key: str, found: Mapping[str, Any], static: Mapping[str, Mapping[str, Any]]) -> None:
    """Keep ``found`` (``backends``, ``toolchains``, ``probed_at``) and each backend's :data:`STATIC_FIELDS`
    under ``key``, the :func:`probe_fingerprint` taken before probing (a probe may set variables: Vulkan's
    ``XDG_RUNTIME_DIR``)."""
    path = cache_path()
    try:
        atomic_write_text(path, json.dumps({"key": key, "time": time.time(), **found, "static": static},
                                           default=str))  # never renamed over a device or a FIFO
    except (OSError, ValueError):
        pass  # a read-only home, or a cache path that is not a regular file: no cache, the listing is still right


def static_fields(b: Backend) -> JsonObject:
    """What a stand-in for ``b`` needs besides its environment record."""
    return {"module": type(b).__module__, "timed_only_when_named": bool(getattr(b, "timed_only_when_named", False)),
            "worker_env": {str(k): str(v) for k, v in dict(getattr(b, "worker_env", {}) or {}).items()},
            "device_index": getattr(b, "device_index", None)}


class DescribedBackend(Backend):
    """A backend as the cached probe described it: its name, runtime, availability, device and capabilities,
    without its runtime imported. Whatever else is asked of it goes to the real backend (probed then)."""

    def __init__(self, record: Mapping[str, Any], static: Mapping[str, Any]) -> None:
        self.cached_record = dict(record)
        self.name = str(record["name"])
        self.runtime = str(record["runtime"])
        self.device_class = str(record.get("device_class") or "cpu")
        self.module = str(static["module"])
        self.timed_only_when_named = bool(static.get("timed_only_when_named"))
        self.worker_env = dict(static.get("worker_env") or {})
        if static.get("device_index") is not None:
            self.device_index = int(static["device_index"])
        self._described = Probe(bool(record.get("available")), str(record.get("reason") or ""))
        self._real: Backend | None = None

    def _probe_uncached(self) -> Probe:
        return self._described

    def device_info(self) -> DeviceInfo:
        found = self.cached_record.get("device")
        if not isinstance(found, dict):
            return self.real().device_info()
        return DeviceInfo(**found)

    def capabilities(self) -> Capabilities:
        found = self.cached_record.get("capabilities")
        if not isinstance(found, dict):
            return self.real().capabilities()
        return Capabilities(**{**found, "dtypes": tuple(found.get("dtypes") or ())})

    def _found(self) -> Backend:
        """The real backend object, its runtime imported (available or not)."""
        if self._real is None:
            from workbench.backends.registry import real_backend

            found = real_backend(self.module, self.name)
            if found is None:
                raise BackendUnavailable(f"backend {self.name!r} was described by the cached probe but is not "
                                         "found now; run `workbench info --refresh`")
            self._real = found
        return self._real

    def real(self) -> Backend:
        """The backend itself, its runtime imported and probed: to run anything on it."""
        found = self._found()
        found.require()
        return found

    def __getattr__(self, attr: str) -> Any:  # an adapter's own attributes (a queue, a context, its device)
        if attr.startswith("_") or attr in STATIC_FIELDS:  # a device index the real backend has not either
            raise AttributeError(attr)
        # plain attributes read as the real backend's, available or not (an unavailable torch-cuda's device is
        # still "cuda:0"); its methods still need it available (real() above, through _delegate)
        return getattr(self._found(), attr)

    def __repr__(self) -> str:
        return f"<DescribedBackend {self.name}>"


def _delegate(name: str) -> Any:
    def method(self: DescribedBackend, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.real(), name)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"The real backend's ``{name}``."
    return method


for _name in ("adopt", "from_numpy", "to_numpy", "empty", "full", "window", "cast", "to_device", "synchronize", "timer",
              "memory", "reset_peak_memory", "free_memory", "flush_cache", "in_process_problem"):
    setattr(DescribedBackend, _name, _delegate(_name))
DescribedBackend.__abstractmethods__ = frozenset()


def described_backends(doc: Mapping[str, Any]) -> dict[str, list[DescribedBackend]]:
    """The cached probe's backends as stand-ins, by the built-in module that provides each; a backend the cache
    holds no static fields for is left out (its module is then discovered for real)."""
    static = doc.get("static") if isinstance(doc.get("static"), dict) else {}
    out: dict[str, list[DescribedBackend]] = {}
    for rec in doc.get("backends") or []:
        if isinstance(rec, dict) and rec.get("name") in static:
            try:
                b = DescribedBackend(rec, static[rec["name"]])
            except (KeyError, TypeError, ValueError):
                continue
            out.setdefault(b.module, []).append(b)
    return out

