"""The C allocator's state in worker processes: fixed at start, not left to what the worker ran before.

glibc's malloc serves a large request (a numpy or torch temporary of a few MiB) from a fresh ``mmap`` until a
chunk that large has once been freed, and then from its heap, which it hands back to the kernel whenever more
than twice that much lies free at its top. Which of the two a cell's temporaries get depends on what the worker
freed before it: the same numpy ``gelu_tanh`` over 4M floats took 10.8 ms a call in a cell's first round (its
eight 16 MiB temporaries page-faulted in at every call, 1,525 faults) and 5.8-7.3 ms in its later rounds (after a
larger cell's free had raised the threshold: no faults), in both of two idle runs of the quick suite; numpy's
``saxpy`` past the cache and ``bias_gelu`` read 1.5-2x in their first rounds likewise (2026-12-07, issue 36).

A worker therefore starts with the threshold fixed at glibc's largest (:data:`MMAP_THRESHOLD`: requests below it
come from the heap) and the heap never trimmed (:data:`TRIM_THRESHOLD`): from its first call on, a kernel's
temporaries reuse memory already faulted in, as in the steady state the later rounds measured, and a request
above the threshold is mapped afresh at every call, every round alike. A user's own ``MALLOC_*`` or
``GLIBC_TUNABLES`` settings are kept. Memory meters that read the resident set trim the heap first
(:func:`release_free_memory`), so a call's temporaries still show in its peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Mapping

#: glibc's largest mmap threshold on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX``, 32 MiB): a larger value is ignored.
MMAP_THRESHOLD = 32 << 20
#: Free memory at the heap's top kept this large before glibc returns it: never, in practice (1 TiB).
TRIM_THRESHOLD = 1 << 40
#: The environment a worker starts with (glibc reads it as the process starts).
STEADY_ENV = {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD), "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}
#: Set beside them, so a worker's rows can say who chose the allocator's settings.
ENV_SET_BY_WORKBENCH = "WORKBENCH_MALLOC_STEADY"


#: The variables (and their ``GLIBC_TUNABLES`` names) that decide when freed memory goes back to the kernel.
USER_VARS = {"MALLOC_MMAP_THRESHOLD_": "mmap_threshold", "MALLOC_TRIM_THRESHOLD_": "trim_threshold",
             "MALLOC_TOP_PAD_": "top_pad", "MALLOC_MMAP_MAX_": "mmap_max"}


def _chosen(env: Mapping[str, str]) -> list[str]:
    tunables = env.get("GLIBC_TUNABLES", "")
    chosen = [f"{k}={env[k]}" for k in USER_VARS if k in env]
    if any(f"glibc.malloc.{name}" in tunables for name in USER_VARS.values()):
        chosen.append(f"GLIBC_TUNABLES={tunables}")
    return chosen


def user_chose(env: Mapping[str, str]) -> bool:
    """True when the environment already says when malloc maps and returns memory (:data:`USER_VARS` or their
    tunables): the workbench then leaves the allocator as the user set it."""
    return bool(_chosen(env))


def worker_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What to add to a worker's environment: :data:`STEADY_ENV` and its marker, or nothing where the user chose."""
    env = os.environ if env is None else env
    if user_chose(env) and env.get(ENV_SET_BY_WORKBENCH) != "1":
        return {}
    return {**STEADY_ENV, ENV_SET_BY_WORKBENCH: "1"}


def note(env: Mapping[str, str] | None = None) -> str:
    """The allocator's settings in words, for a row's ``threads`` text."""
    env = os.environ if env is None else env
    if env.get(ENV_SET_BY_WORKBENCH) == "1":
        return "heap kept, temporaries below 32 MiB reused (set by workbench)"
    if chosen := _chosen(env):
        return ", ".join(chosen) + " (set by the user)"
    return "default"


def release_free_memory() -> None:
    """Hand the heap's free memory back to the kernel (glibc's ``malloc_trim(0)``), so that the resident set
    before a call is what is in use and a call's temporaries raise its high-water mark again. Nothing elsewhere."""
    name = ctypes.util.find_library("c")
    if not name:
        return
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing kept to release
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
