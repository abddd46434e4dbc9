"""Thread-pool settings that keep several parallel runtimes from stalling each other, and what each used.

torch (its own libgomp), numba (the system libgomp) and OpenBLAS each keep a pool of threads that spin after a
parallel region. On a machine with few cores, a kernel of one runtime measured right after another runtime's
kernel then waits for a scheduler time slice: a numba ``prange`` add of 65k floats right after a numpy matmul
took 3.9 ms (libgomp's default spin) or 7.8 ms (``OMP_WAIT_POLICY=ACTIVE``) where it takes 6 µs alone (2-core
VM, 2026-11-26). Sleeping at once (``PASSIVE``) stops that, but makes every parallel region pay a wake-up,
which on a VM whose idle vCPU is halted costs 70-100 µs: the same add read 97 µs, and a 4096-element one 75 µs
for 2 µs of work — a 16-35x distortion of every small parallel kernel, and bimodal (6 µs when a neighbour kept
the other core awake). So the default is a bounded spin: :data:`SPIN_COUNT` iterations (a fraction of a
millisecond) bridge the calls of a timing loop, then the threads sleep; after the matmul the add read 180 µs,
alone 6 µs. An explicit ``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT`` or ``KMP_BLOCKTIME`` is always honoured, and the
values in force are part of the environment record.

A time means little without the threads behind it (torch on 2 threads against torch on 1 is a 2x "speed-up" of
nothing): :func:`thread_counts` says what each loaded runtime would use now, and :func:`describe` puts it in the
words a row's ``threads`` column and ``workbench.timeit`` show.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

from workbench.core import allocator

_OPENMP_USERS = ("torch", "numba")
#: libgomp spin iterations before an idle thread sleeps (its default is 300,000; PASSIVE is 0).
SPIN_COUNT = 10_000
#: Intel OpenMP's equivalent, in milliseconds (its default is 200).
BLOCKTIME_MS = 1
#: Where OpenMP threads run: one thread per core, each bound to its own. Unbound, the scheduler may stack a
#: parallel region's two threads on one core of a 2-core VM, where the spinning master holds the core the
#: woken worker needs: a numba ``prange`` rmsnorm of 8x896 floats then read ~500 us a call instead of 1.8 us,
#: for whole rounds at a time, in 8 of 20 five-millisecond windows (2026-12-06; bound as here: none of 40
#: near 500 us, one window held a single 5 ms call, and one process sat at 3.4 us from its sixth window on).
#: That was the largest cause of cells that did not repeat between runs (issue 36).
BIND = {"OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"}
#: The variables that choose how idle OpenMP threads wait and where they run; a user's value for any of them
#: is kept.
WAIT_VARS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", *BIND)
#: Pool sizes set beside the binding, each to the cores this process may use, where the user set none. Binding
#: pins the process's first thread to the first core as soon as an OpenMP runtime loads (libgomp binds the
#: initial thread), and a runtime that sizes its pool from that thread's CPU mask afterwards saw one core: with
#: torch imported first, numba ran every ``prange`` on one thread and every row of a quick suite recorded
#: "numba 1" and "torch 1" on a 2-core machine (2026-12-07), a silent change of what was measured.
COUNT_VARS = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")

#: Set beside the variables by workbench (their values as set), so a worker process that inherits them says so.
ENV_SET_BY_WORKBENCH = "WORKBENCH_OPENMP_WAIT"
#: The cores a worker process is to run on, set by its parent (:func:`worker_env`). Binding pins the first thread
#: of a process that loads an OpenMP runtime to one core, and a child inherits its parent's mask: once the parent
#: had imported torch, every worker it started ran on core 0 alone, so a numba worker ran its two-thread pool on
#: one core (a ``prange`` rope of 4k elements read 13-16 us where it reads 2.5 us) and numpy's OpenBLAS sized its
#: pool to one thread ("blas:openblas 1" on a 2-core machine), but only in sweeps that held torch-cpu (2026-12-07).
ENV_WORKER_CPUS = "WORKBENCH_WORKER_CPUS"
#: The cores of the process that set :data:`BIND`, as it was given them, passed to every process it starts: any
#: program started from it inherits the one core libgomp's binding left its first thread (a notebook that imported
#: torch ran ``!workbench bench`` on one core of two, workers and all). A workbench process that finds itself on
#: exactly the first of those cores takes them all back (:func:`_take_bound_parent_cpus`); one pinned elsewhere, or
#: to more cores, was pinned by someone on purpose and is left as it is.
ENV_BOUND_CPUS = "WORKBENCH_BOUND_CPUS"


def _mask() -> frozenset[int]:
    return frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


#: The cores this process was given when workbench was imported, before any runtime's binding narrowed them.
START_CPUS: frozenset[int] = _mask()

_SET_BY_WORKBENCH = f"spin {SPIN_COUNT} then sleep, one thread per core (set by workbench)"

#: What :func:`default_omp_wait_policy` found when ``workbench`` was imported (None: not called yet).
_policy_outcome: str | None = None


def _chosen() -> str:
    return ", ".join(f"{k}={os.environ[k]}" for k in WAIT_VARS if k in os.environ)


def usable_cores() -> int:
    """Cores this process was given (its CPU mask when workbench was imported, not the one core an OpenMP
    runtime's binding later pinned its first thread to; the CPU count where the platform has none)."""
    return len(START_CPUS) or (os.cpu_count() or 1)


def worker_env() -> dict[str, str]:
    """What a worker process's environment needs so that it runs on the cores this process was given."""
    return {ENV_WORKER_CPUS: ",".join(map(str, sorted(START_CPUS)))} if START_CPUS else {}


def _cpus(text: str) -> frozenset[int]:
    return frozenset(int(c) for c in text.split(",") if c.strip().isdigit())


def _take_bound_parent_cpus() -> frozenset[int]:
    """The cores to take back in a process started (directly or not) from one that set :data:`BIND`: all of that
    process's where this one sits on exactly the first of them, the one core libgomp pins a first thread to; none
    otherwise (a mask someone chose)."""
    cpus = _cpus(os.environ.get(ENV_BOUND_CPUS, ""))
    return cpus if len(cpus) > 1 and START_CPUS == frozenset({min(cpus)}) else frozenset()


def _take_worker_cpus() -> None:
    """In a worker: run on the cores its parent was given, not the one core the parent's binding left it; in any
    other process started from a bound one, the same where its mask is that binding's (:data:`ENV_BOUND_CPUS`)."""
    global START_CPUS
    cpus = _cpus(os.environ.pop(ENV_WORKER_CPUS, "")) or _take_bound_parent_cpus()
    if not cpus or cpus == START_CPUS:
        return
    try:
        os.sched_setaffinity(0, cpus)
    except OSError:  # a core the parent had is gone from this cgroup: keep what the system gave
        return
    START_CPUS = _mask()


def default_omp_wait_policy() -> str | None:
    """Bound OpenMP's idle spin (``GOMP_SPINCOUNT``, ``KMP_BLOCKTIME``) unless the user chose how threads wait or
    an OpenMP runtime is already loaded; returns the setting in force in words, None when none could be set."""
    global _policy_outcome
    _take_worker_cpus()  # first: a runtime's pool sizes itself from the mask when it loads
    chosen = _chosen()
    if chosen:  # the user's, or workbench's inherited by a worker of a process that set them
        ours = os.environ.get(ENV_SET_BY_WORKBENCH) == chosen
        _policy_outcome = _SET_BY_WORKBENCH if ours else f"{chosen} (from the environment)"
        return chosen
    first = [m for m in _OPENMP_USERS if m in sys.modules]
    if first:
        # libgomp read its settings at load time: changing the variables now would be a lie
        _policy_outcome = (f"not applied: {' and '.join(first)} imported before workbench (its OpenMP threads "
                           "keep the default, spinning after each parallel region)")
        return None
    for var in COUNT_VARS:  # before binding narrows what the first thread's CPU mask says
        os.environ.setdefault(var, str(usable_cores()))
    os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    os.environ["KMP_BLOCKTIME"] = str(BLOCKTIME_MS)
    os.environ.update(BIND)
    if len(START_CPUS) > 1:
        os.environ[ENV_BOUND_CPUS] = ",".join(map(str, sorted(START_CPUS)))
    chosen = os.environ[ENV_SET_BY_WORKBENCH] = _chosen()
    _policy_outcome = _SET_BY_WORKBENCH
    return chosen


def policy_note() -> str:
    """How idle OpenMP threads wait, and whether workbench could apply its default."""
    if _policy_outcome is not None:
        return _policy_outcome
    chosen = _chosen()
    return f"{chosen} (set before workbench)" if chosen else "runtime default (workbench not imported first)"


def carried_to_another_thread() -> Callable[[], None]:
    """The calling thread's thread-local runtime settings, as a function that applies them on the thread that
    calls it. numba's thread count is per Python thread (``numba.set_num_threads`` acts on the calling thread
    only), and an in-process cell runs on the workbench's cell thread: a notebook that set one numba thread got two
    in its rows (tutorial 07's run B). Nothing is loaded or started here: without a started numba threading layer
    there is nothing to carry."""
    numba = sys.modules.get("numba")
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    if numba is None or not getattr(parallel, "_is_initialized", False):
        return lambda: None
    count = int(numba.get_num_threads())

    def apply() -> None:
        if int(numba.get_num_threads()) != count:
            numba.set_num_threads(count)

    return apply


def thread_counts() -> dict[str, int]:
    """Threads each runtime loaded in this process would use now, without loading any.

    ``torch``: intra-op threads; ``numba``: its parallel threads (the configured count until its threading
    layer starts); BLAS and OpenMP pools by library (threadpoolctl), e.g. ``{"blas:openblas": 2}``.
    """
    out: dict[str, int] = {}
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


def describe(counts: Mapping[str, int] | None = None) -> str:
    """Threads in words, for a row's ``threads`` column and ``timeit``:
    ``"torch 2, blas:openblas 2, openmp:libgomp 2; OpenMP wait: spin 10000 then sleep (set by workbench); malloc:
    default"``: the allocator's settings ride along (:mod:`workbench.core.allocator`), as they move a time too."""
    counts = thread_counts() if counts is None else counts
    pools = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no threaded runtime loaded"
    return f"{pools}; OpenMP wait: {policy_note()}; malloc: {allocator.note()}"
