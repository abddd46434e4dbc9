"""The C allocator's state in workers (workbench/core/allocator.py): fixed at start, so a kernel's temporaries
fault in once, not at every call depending on what the worker freed before."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from workbench.core import allocator

#: Three 16 MiB temporaries alive at once, freed together (as numpy's gelu_tanh over 4M floats makes): glibc's
#: default trims the 48 MiB free at its heap's top after each call, and the next call faults them in again.
_LOOP = """
import resource, numpy as np
x = np.ones(1 << 22, np.float32)
faults = []
for _ in range(8):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    y = 0.5 * x * (1.0 + np.tanh(x + 0.04 * x))
    del y
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
print(max(faults[2:]))
"""


def _faults(extra_env: dict[str, str]) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", _LOOP], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the settings are glibc's (this libc: "
                    f"{platform.libc_ver()[0] or 'unknown'})")
def test_steady_env_stops_temporaries_faulting_in_at_every_call() -> None:
    default, steady = _faults({}), _faults(allocator.worker_env({}))
    assert default > 1000  # 48 MiB faulted in again at each call: the state the fix removes
    assert steady < 50


def test_a_users_malloc_settings_are_kept() -> None:
    assert allocator.worker_env({"MALLOC_TOP_PAD_": "0"}) == {}
    assert allocator.worker_env({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"}) == {}
    assert "MALLOC_TRIM_THRESHOLD_" in allocator.worker_env({"GLIBC_TUNABLES": "glibc.rtld.nns=2"})
    assert "MALLOC_TRIM_THRESHOLD_" in allocator.worker_env({"MALLOC_ARENA_MAX": "2"})  # says nothing of trimming
    assert allocator.note({"MALLOC_TOP_PAD_": "0"}) == "MALLOC_TOP_PAD_=0 (set by the user)"
    assert allocator.note({}) == "default"
    # a worker's own children (its env carries the marker) keep the workbench's settings and say so
    marked = {**allocator.worker_env({})}
    assert allocator.worker_env(marked) == marked
    assert "set by workbench" in allocator.note(marked)


def test_release_free_memory_runs_anywhere() -> None:
    allocator.release_free_memory()  # glibc: malloc_trim(0); elsewhere: nothing, and no error


_PEAK = """
import numpy as np
from workbench.backends.memory import HighWaterMemory
x = np.ones(1 << 22, np.float32)
def call():
    y = 0.5 * x * (1.0 + np.tanh(x + 0.04 * x))
    del y
meter = HighWaterMemory()
call()  # the heap now holds the temporaries' pages, free
meter.reset()
before = meter.stats().current_bytes
call()
print(meter.stats().peak_bytes - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not os.path.exists("/proc/self/clear_refs"),
                    reason="needs glibc and /proc/self/clear_refs (the high-water meter's reset)")
def test_a_kept_heap_still_shows_a_calls_temporaries_in_its_peak() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(allocator.worker_env({}))
    out = subprocess.run([sys.executable, "-c", _PEAK], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) > 30 << 20  # at least two of the three 16 MiB temporaries, not 0
