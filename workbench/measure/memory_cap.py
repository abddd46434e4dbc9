"""A memory cap per cell, so that a kernel growing memory ends as ``oom`` instead of taking the machine.

Two guards, both relative to what the worker process held when the cell started:

- In the worker, an address-space limit (``RLIMIT_AS``): an allocation past it fails at once (numpy's
  MemoryError, torch's "can't allocate memory"), the cell ends ``oom`` and the worker lives on. Not for GPU
  backends: CUDA and ROCm reserve address space far beyond memory and fail to start under such a limit.
- In the parent, a watchdog on the worker's resident memory, for every backend: past the cap it kills the
  worker and records ``oom`` (native code that allocates without checking never sees the first guard).

The default cap is half the host's memory: a runaway kernel stops well before the kernel's OOM killer
would take the whole run, and a real cell rarely needs more (``--memory-cap`` / ``memory_cap`` change it).
"""

from __future__ import annotations

import logging
import math
import re

log = logging.getLogger(__name__)

#: Share of the host's total memory a cell may add to its worker when no cap is given.
DEFAULT_SHARE = 0.5
_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20, "mib": 2**20,
          "g": 2**30, "gb": 2**30, "gib": 2**30, "t": 2**40, "tb": 2**40, "tib": 2**40}


def host_total_bytes() -> int:
    import psutil

    return int(psutil.virtual_memory().total)


def parse_memory_cap(value: str | int | float | None) -> int | None:
    """Bytes a cell may add: ``None`` / "default" for :data:`DEFAULT_SHARE` of host memory, "none" / "off"
    for no cap, a byte count, a size with a unit ("8G", "512MiB") or a share of host memory ("40%").
    Raises ValueError naming the value and the accepted forms."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "default")):
        return int(DEFAULT_SHARE * host_total_bytes())
    if isinstance(value, bool):
        raise ValueError(f"memory cap {value!r} is not a size")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"memory cap {value!r} must be a positive number of bytes")
        return int(value)
    text = value.strip().lower()
    if text in ("none", "off", "unlimited"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(%|[kmgt]?i?b?)", text)
    if m is None or (m.group(2) != "%" and m.group(2) not in _UNITS):
        raise ValueError(f"memory cap {value!r} is not understood; give a size like 8G or 512M, a share of host "
                         "memory like 40%, or none")
    number = float(m.group(1))
    cap = number / 100 * host_total_bytes() if m.group(2) == "%" else number * _UNITS[m.group(2)]
    if cap <= 0:
        raise ValueError(f"memory cap {value!r} must be more than zero")
    return int(cap)


def describe(cap: int | None) -> str:
    return "no memory cap" if cap is None else f"memory cap {cap / 2**30:.3g} GiB"


def address_space_bytes() -> int | None:
    """This process's virtual size (Linux ``/proc/self/statm``), or None where it cannot be read."""
    import os

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def limit_address_space(extra: int | None) -> bool:
    """Let this process grow its address space by at most ``extra`` bytes from now (None lifts the limit).
    Returns whether a limit is in force; a platform without ``RLIMIT_AS`` returns False."""
    try:
        import resource
    except ImportError:
        return False
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if extra is None:
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
            return False
        now = address_space_bytes()
        if now is None:
            return False
        soft = now + extra if hard == resource.RLIM_INFINITY else min(hard, now + extra)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        return True
    except (ValueError, OSError) as exc:
        log.warning("cannot set the address-space limit: %s", exc)
        return False
