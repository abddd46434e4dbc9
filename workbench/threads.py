"""Thread-pool settings that keep several parallel runtimes from stalling each other.

torch (its own libgomp), numba (the system libgomp) and OpenBLAS each keep a
pool of threads that spin after a parallel region. On a machine with few cores,
a kernel of one runtime measured right after another runtime's kernel then
waits for a scheduler time slice: we measured 8 ms per call for a 65k-element
add that takes 20 µs alone (2-core machine, 2026-11-22). With
``OMP_WAIT_POLICY=PASSIVE`` idle OpenMP threads sleep at once: every parallel
region pays a wake-up (~25 µs there) but no run is poisoned by another
runtime's spinning threads. An explicit ``OMP_WAIT_POLICY`` is always honoured,
and the value in force is part of the environment record.
"""

from __future__ import annotations

import os
import sys

_OPENMP_USERS = ("torch", "numba")


def default_omp_wait_policy() -> str | None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user chose one or an OpenMP runtime is already loaded."""
    if "OMP_WAIT_POLICY" in os.environ:
        return os.environ["OMP_WAIT_POLICY"]
    if any(m in sys.modules for m in _OPENMP_USERS):
        return None  # libgomp read its settings at load time: changing the variable now would be a lie
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return "PASSIVE"
