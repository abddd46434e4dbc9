"""The host CPU as a device, shared by the CPU backends and the environment record."""

from __future__ import annotations

import platform
import re
from functools import lru_cache
from pathlib import Path

from workbench.backends.base import DeviceInfo
from workbench.core.record import JsonObject


@lru_cache(maxsize=1)
def cpuinfo_dict() -> JsonObject:
    """Brand, vendor, clock and flags of the host CPU in py-cpuinfo's keys, once per process.

    On Linux from ``/proc/cpuinfo``: py-cpuinfo starts a Python subprocess,
    about a second of every command's start-up. py-cpuinfo answers elsewhere,
    and where ``/proc/cpuinfo`` names no model (some ARM kernels).
    """
    try:
        return _proc_cpuinfo() or _py_cpuinfo()
    except Exception:  # noqa: BLE001 - py-cpuinfo or /proc may fail in any way; the device is described without them
        return {}


def _proc_cpuinfo() -> JsonObject:
    try:
        first_cpu = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in first_cpu.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    brand = fields.get("model name")
    if not brand:
        return {}
    advertised = re.search(r"@\s*([\d.]+)\s*GHz", brand)  # as py-cpuinfo: the brand's clock, else the current one
    mhz = float(advertised.group(1)) * 1e3 if advertised else float(fields.get("cpu MHz") or 0)
    return {"brand_raw": brand, "vendor_id_raw": fields.get("vendor_id"),
            "hz_advertised": [int(mhz * 1e6), 0] if mhz else None, "flags": fields.get("flags", "").split()}


def _py_cpuinfo() -> JsonObject:
    import cpuinfo

    return dict(cpuinfo.get_cpu_info())


@lru_cache(maxsize=1)
def cpu_device_info() -> DeviceInfo:
    """The host CPU as a device (``cpuinfo_dict``, psutil and sysfs)."""
    import psutil

    name, vendor, clock, l3 = platform.processor() or platform.machine(), "unknown", None, None
    try:
        info = cpuinfo_dict()
        name = info.get("brand_raw") or name
        vendor = info.get("vendor_id_raw") or vendor
        hz = info.get("hz_advertised") or info.get("hz_actual")
        clock = hz[0] / 1e6 if hz else None
        l3 = _as_bytes(info.get("l3_cache_size")) or _as_bytes(info.get("l2_cache_size"))
    except Exception:  # noqa: BLE001 - optional facts: whatever fails, the defaults above stand
        pass
    # py-cpuinfo 9 misreads caches on recent CPUs (1 MiB "L3" on a 32 MiB-L3 EPYC): sysfs is authoritative.
    l3 = _sysfs_last_level_cache() or l3
    freq = psutil.cpu_freq()
    if clock is None and freq:
        clock = freq.max or freq.current
    return DeviceInfo(
        name=name,
        vendor=vendor,
        kind="cpu",
        total_memory_bytes=psutil.virtual_memory().total,
        compute_units=psutil.cpu_count(logical=True),
        clock_mhz=clock,
        last_level_cache_bytes=l3,
        extra={"physical_cores": psutil.cpu_count(logical=False), "machine": platform.machine()},
    )


def _sysfs_last_level_cache() -> int | None:
    """Size of the highest-level data/unified cache of cpu0 from Linux sysfs, or None elsewhere."""
    caches = sysfs_caches()
    return max(caches, key=lambda c: c[0])[1] if caches else None


def sysfs_caches() -> list[tuple[int, int, str]]:
    """cpu0's data and unified caches from Linux sysfs, as (level, bytes, shared_cpu_list); empty elsewhere.
    One reader for this module's device info and the quick suite's working sets
    (:func:`workbench.sweep.suites.cache_sizes`)."""
    caches = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            size = _as_bytes((index / "size").read_text().strip())
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if size:
            caches.append((level, size, shared))
    return caches


def _as_bytes(v: object) -> int | None:
    if isinstance(v, int) and v > 0:
        return v
    if isinstance(v, str) and v:
        if v[-1] in "KMG" and v[:-1].isdigit():  # sysfs style: "32768K"
            return int(v[:-1]) * {"K": 2**10, "M": 2**20, "G": 2**30}[v[-1]]
        num, _, unit = v.partition(" ")
        scale = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 10**3, "MB": 10**6}.get(unit, 1)
        try:
            return int(float(num) * scale)
        except ValueError:
            return None
    return None
