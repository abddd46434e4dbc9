"""Thread-pool settings that keep several parallel runtimes from stalling each other, and what each used.

torch (its own libgomp), numba (the system libgomp) and OpenBLAS each keep a
pool of threads that spin after a parallel region. On a machine with few cores,
a kernel of one runtime measured right after another runtime's kernel then
waits for a scheduler time slice: we measured 8 ms per call for a 65k-element
add that takes 20 µs alone (2-core machine, 2026-11-22). With
``OMP_WAIT_POLICY=PASSIVE`` idle OpenMP threads sleep at once: every parallel
region pays a wake-up (~25 µs there) but no run is poisoned by another
runtime's spinning threads. An explicit ``OMP_WAIT_POLICY`` is always honoured,
and the value in force is part of the environment record.

A time means little without the threads behind it (torch on 2 threads against
torch on 1 is a 2x "speed-up" of nothing): :func:`thread_counts` says what each
loaded runtime would use now, and :func:`describe` puts it in the words a row's
``threads`` column and ``workbench.timeit`` show.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_OPENMP_USERS = ("torch", "numba")

#: What :func:`default_omp_wait_policy` found when ``workbench`` was imported (None: not called yet).
_policy_outcome: str | None = None


def default_omp_wait_policy() -> str | None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless the user chose one or an OpenMP runtime is already loaded."""
    global _policy_outcome
    if "OMP_WAIT_POLICY" in os.environ:
        _policy_outcome = f"{os.environ['OMP_WAIT_POLICY']} (from the environment)"
        return os.environ["OMP_WAIT_POLICY"]
    first = [m for m in _OPENMP_USERS if m in sys.modules]
    if first:
        # libgomp read its settings at load time: changing the variable now would be a lie
        _policy_outcome = (f"not applied: {' and '.join(first)} imported before workbench (its OpenMP threads "
                           "keep the default, spinning after each parallel region)")
        return None
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    _policy_outcome = "PASSIVE (set by workbench)"
    return "PASSIVE"


def policy_note() -> str:
    """The OpenMP wait policy in force, and whether workbench could apply its default."""
    if _policy_outcome is not None:
        return _policy_outcome
    value = os.environ.get("OMP_WAIT_POLICY")
    return f"{value} (set before workbench)" if value else "runtime default (workbench not imported first)"


def thread_counts() -> dict[str, Any]:
    """Threads each runtime loaded in this process would use now, without loading any.

    ``torch``: intra-op threads; ``numba``: its parallel threads (the configured count until its threading
    layer starts); BLAS and OpenMP pools by library (threadpoolctl), e.g. ``{"blas:openblas": 2}``.
    """
    out: dict[str, Any] = {}
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        out["torch"] = int(torch.get_num_threads())
    numba = sys.modules.get("numba")
    if numba is not None:
        parallel = sys.modules.get("numba.np.ufunc.parallel")
        started = bool(getattr(parallel, "_is_initialized", False))
        out["numba"] = int(numba.get_num_threads()) if started else int(numba.config.NUMBA_NUM_THREADS)
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # a core install without threadpoolctl: the runtimes above still say theirs
        return out
    for pool in threadpool_info():
        key = f"{pool.get('user_api')}:{pool.get('internal_api')}"
        out[key] = max(int(pool.get("num_threads") or 0), int(out.get(key, 0)))
    return out


def describe(counts: dict[str, Any] | None = None) -> str:
    """Threads in words, for a row's ``threads`` column and ``timeit``:
    ``"torch 2, blas:openblas 2, openmp:libgomp 2; OMP_WAIT_POLICY PASSIVE (set by workbench)"``."""
    counts = thread_counts() if counts is None else counts
    pools = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no threaded runtime loaded"
    return f"{pools}; OMP_WAIT_POLICY {policy_note()}"
