"""The processes a worker's kernels start end with the worker.

A variant may fork, ``setsid`` and fork again, or start a non-daemon ``multiprocessing.Process``; such a
process outlived the worker (and ``bench``, which exited 0). Every worker is started with a token in its
environment (:data:`ENV_TOKEN`), which its children inherit through ``fork`` and ``exec`` alike, and which
survives ``setsid`` and re-parenting to init, where a process-group or parent-child search loses them. When a
worker ends, every process of ours that still carries its token is killed; the children the worker had just
before it was stopped are killed too (one that cleared its environment and ``exec``'d keeps that link only).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import secrets
import sys
import threading
from collections.abc import Iterator, Sequence

import psutil

log = logging.getLogger(__name__)

#: The environment variable that carries a worker's token to everything it starts.
ENV_TOKEN = "WORKBENCH_WORKER_TOKEN"


def new_token() -> str:
    """A token no other worker has."""
    return secrets.token_hex(12)


_cell = threading.local()
_hooked = False
#: The audit events that start a process with an environment they are given (its position in their arguments).
_SPAWN_ENV = {"subprocess.Popen": 3, "os.posix_spawn": 2, "os.exec": 2}


def _carry_token(event: str, args: tuple) -> None:
    """An audit hook: a process started from a thread running an in-process cell (:func:`cell_token`) carries
    that cell's token even where the kernel passed its own environment (``Popen(..., env={})``: ``sleep 787``
    outlived ``bench --in-process``). The environment is the one the call passes on: a mapping it is given."""
    at = _SPAWN_ENV.get(event)  # first: the hook sees every audited event of the process (opens, imports ...)
    token = getattr(_cell, "token", None) if at is not None else None
    if token is None or len(args) <= at:
        return
    env = args[at]
    if isinstance(env, dict) and env.get(ENV_TOKEN) != token:
        with contextlib.suppress(TypeError):
            env[ENV_TOKEN] = token


@contextlib.contextmanager
def cell_token(token: str) -> Iterator[None]:
    """Within, processes this thread starts carry ``token`` whatever environment they are given; processes other
    threads start do not (a test process's background ``workbench verify`` and its torch workers, started while an
    in-process cell ran on another thread, were ended with that cell's executor)."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_carry_token)
        _hooked = True
    _cell.token = token
    try:
        yield
    finally:
        _cell.token = None


#: prctl's PR_SET_CHILD_SUBREAPER (Linux).
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process (a worker) the one its orphaned descendants are re-parented to, instead of init: a
    kernel that forks, ``setsid``s, forks again and ``exec``s with an empty environment leaves a process that
    carries no token and is no child of anyone we know, except the worker's when it is a subreaper (its
    children, read before it stops, are then ended). Linux only; False elsewhere or when refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children_of(proc: psutil.Process | None) -> list[psutil.Process]:
    """``proc``'s descendants now (none when it is gone or not ours to read)."""
    if proc is None:
        return []
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def carrying(token: str) -> list[psutil.Process]:
    """Our processes (same user) whose environment carries ``token``, this process excepted."""
    me, uid = os.getpid(), os.getuid()
    found = []
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info.get("uids")
        if proc.pid == me or uids is None or uids.real != uid:
            continue
        try:
            if proc.environ().get(ENV_TOKEN) == token:
                found.append(proc)
        except (psutil.Error, OSError):  # gone, a zombie, or not readable
            continue
    return found


def end_descendants(token: str, known: Sequence[psutil.Process] = (), rounds: int = 3) -> int:
    """Kill ``known`` and every process carrying ``token``; look again while more appear (a process may fork
    as it is killed). Returns how many were killed."""
    ended = 0
    extra = [p for p in known if p.is_running()]
    for _ in range(rounds):
        procs = {p.pid: p for p in [*extra, *carrying(token)]}
        extra = []
        if not procs:
            break
        for proc in procs.values():
            try:
                proc.kill()
            except psutil.Error:
                continue
        psutil.wait_procs(list(procs.values()), timeout=2)
        ended += len(procs)
    if ended:
        log.warning("ended %d process%s a kernel left running in its worker", ended, "es" * (ended != 1))
    return ended
