"""Checks a command makes on its arguments and environment before it does any work.

Why here: a value that is only used late (a report path written after an hour's sweep, a catalog folder a
worker process loads, a scheduler the client waits 60 s for) must fail at once, with one line naming the
value and the valid choices. The commands call these first; each raises ValueError (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import socket
import tempfile
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from workbench.backends.registry import override_name
from workbench.catalog.loader import ENV_CATALOG
from workbench.core.output_guard import check_output_path, writes_to_stdout

#: The smallest memory cap that makes sense for a cell (a bare "0.5" is half a byte, not half the memory).
MIN_MEMORY_CAP = 16 << 20
#: How long `--cluster ADDRESS` may take to accept a TCP connection before the run is refused.
CONNECT_PROBE_S = 5.0


def check_catalog_env() -> None:
    """Every folder in ``$WORKBENCH_CATALOG`` exists and is a folder (a worker would otherwise fail to load
    it in every cell, and the run would store them all as crashed)."""
    for entry in os.environ.get(ENV_CATALOG, "").split(os.pathsep):
        if not entry.strip():
            continue
        p = Path(entry)  # as the loader reads it (no ~ expansion)
        if not p.exists():
            raise ValueError(f"{ENV_CATALOG}={entry!r}: no such folder; give folders of kernel folders "
                             f"(each with a spec.py), separated by {os.pathsep!r}, or unset it")
        if not p.is_dir():
            raise ValueError(f"{ENV_CATALOG}={entry!r} is a file, not a folder; give folders of kernel "
                             f"folders (each with a spec.py), separated by {os.pathsep!r}")


def check_env_values() -> None:
    """The workbench's switches in the environment are values it understands (``WORKBENCH_AUTO_PEAKS=maybe``
    was taken for yes; ``WORKBENCH_WORKER_PROFILE=1`` ended every worker in a traceback)."""
    from workbench.backends.registry import override_name
    from workbench.catalog.loader import ENV_IMPORT_TIMEOUT
    from workbench.core.env_values import check_thread_counts, env_flag, env_seconds, worker_profile_dir
    from workbench.measure.host_settle import SETTLE_ENV
    from workbench.roofs.peaks import ENV_AUTO_PEAKS
    from workbench.tuning.resolve import ENV_TUNED

    env_flag(ENV_AUTO_PEAKS, True)
    env_flag(ENV_TUNED, True)  # `maybe` was taken for yes
    env_seconds(ENV_IMPORT_TIMEOUT)  # `nan` or `-1` fell back to 120 s unsaid; 1e308 failed every kernel's load
    env_flag(SETTLE_ENV, True)  # `forever` was taken for on
    override_name()  # a misspelt backend was refused by bench and ignored by verify
    worker_profile_dir()
    check_thread_counts()  # NUMBA_NUM_THREADS=abc printed numba's traceback in every worker


def check_backend_env() -> None:
    """``$WORKBENCH_BACKEND`` names a backend (or auto): a misspelt one is refused, never ignored."""
    override_name()


def check_memory_cap(value: str | None) -> None:
    """A cap the cell can live with: at least 16 MiB, at most 100% of host memory ("0.5" is refused: a
    bare number is bytes)."""
    if value is None:
        return
    from workbench.measure.memory_cap import host_total_bytes, parse_memory_cap

    cap = parse_memory_cap(value)
    text = str(value).strip()
    if text.endswith("%") and float(text[:-1]) > 100:
        raise ValueError(f"--memory-cap {value!r}: a share of host memory is at most 100%; give e.g. 40%, a "
                         "size like 8G, or none")
    if cap is not None and cap < MIN_MEMORY_CAP:
        raise ValueError(f"--memory-cap {value!r} is {cap} bytes (a number without a unit is bytes); give a size "
                         f"of at least 16M such as 512M or 8G, a share like 40%, or none (host memory: "
                         f"{host_total_bytes() / 2**30:.1f} GiB)")


def check_cluster_address(value: str | None, timeout_s: float = CONNECT_PROBE_S) -> None:
    """A scheduler address with a valid port that accepts a TCP connection now (Dask's client would wait
    60 s and then fail). ``local:N`` needs no probe."""
    if value is None:
        return
    from workbench.cluster import parse_cluster

    kind, address = parse_cluster(value)
    if kind != "address":
        return
    parts = urlsplit(str(address))
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"--cluster {value!r}: the port must be 1 to 65535 (a Dask scheduler listens on 8786 "
                         "by default)") from None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname:
        return  # ucx/ws transports: left to Dask
    port = port or 8786
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"--cluster {value!r}: no Dask scheduler answers at {parts.hostname}:{port} ({reason}); "
                         "start one with `dask scheduler`, or use local:N") from None


def check_writable_file(flag: str, path: str) -> None:
    """``path`` can be created: a file is made and removed in its folder (or the nearest existing ancestor),
    so /proc, a read-only mount or a missing permission fails now, naming the real folder. The command's own
    stdout (``/dev/stdout``) is written as a stream: nothing to create."""
    if writes_to_stdout(path):
        return
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {path!r}: {str(parent)!r} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".workbench-probe-", dir=parent)
    except OSError as exc:
        raise ValueError(f"{flag} {path!r}: cannot create a file in {str(parent.resolve())!r} "
                         f"({exc.strerror or exc}); choose another place") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)


def check_outputs(paths: Iterable[tuple[str, str | None]], store: str | None) -> None:
    """Output files of a run: none may be a results store (:mod:`workbench.core.output_guard`), each must be
    creatable, and no two may be the same file."""
    from workbench.store.database import default_store_path

    seen: dict[str, str] = {}
    for path, fmt in paths:
        flag = "--json" if fmt == "json" else "--report"
        export = fmt == "json" or Path(path).suffix.lower() == ".json"  # a JSON report is the store's export
        check_output_path(path, flag=flag, stores=(store, default_store_path()), export=export)
        check_writable_file(flag, path)
        real = os.path.realpath(path)
        if real in seen:
            raise ValueError(f"{flag} {path!r} is the same file as {seen[real]}; give two different files")
        seen[real] = flag


def check_bench(args: argparse.Namespace, outputs: Iterable[tuple[str, str | None]]) -> None:
    """Everything ``bench`` can check before its store is opened or a run created that its request does not
    (:meth:`workbench.sweep.request.SweepRequest.checked` checks what to measure and where cells run)."""
    from workbench.store.database import check_run_name

    check_catalog_env()
    check_backend_env()
    check_outputs(outputs, getattr(args, "store", None))
    for flag in ("name", "tag"):
        value = getattr(args, flag, None)
        if value is not None and not value.strip():  # a run named '' was stored, and found by no name
            raise ValueError(f"--{flag} {value!r} is empty; give it a visible character, or leave --{flag} out")
        if value is not None:
            check_run_name(value, flag=f"--{flag}")
    check_cluster_address(getattr(args, "cluster", None))
    check_memory_cap(getattr(args, "memory_cap", None))  # "0.5" (half a byte) and "200%": parsed, but refused


_ARCH = re.compile(r"(sm_[0-9]{2,3}[af]?|compute_[0-9]{2,3}[af]?|gfx[0-9]{2,4}[a-z]?|gfx[0-9]{1,2}(-[0-9])?-generic)")


def check_arch_names(values: Iterable[str]) -> list[str]:
    """``--arch`` values: NVIDIA ``sm_NN`` / ``compute_NN`` or AMD ``gfxNNN``; a name of another form is
    refused (before any compiler runs), and so is a list with no name at all."""
    out = []
    for v in values:
        name = v.strip()
        if not _ARCH.fullmatch(name):
            if not name:
                continue  # "sm_80," — an empty list as a whole is refused below
            raise ValueError(f"--arch {v!r} is not a GPU architecture; give names like sm_80, sm_90, gfx90a, "
                             "gfx1030 (NVIDIA sm_NN, AMD gfxNNN)")
        out.append(name)
    if not out:
        raise ValueError("--arch needs at least one architecture, e.g. sm_80 or gfx90a")
    return out
