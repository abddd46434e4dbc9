"""Load catalog folders by path (like asv's benchmark directory), never as a top-level package.

Each kernel folder's ``*.py`` files are executed as private modules
(``workbench_catalog.<folder>.<file>``; a second folder of the same name elsewhere gets
``workbench_catalog.<folder>__<hash of its path>``, so it never replaces the first one's modules) with
``spec.py`` first; they register
themselves through :mod:`workbench.catalog.registry`. Device sources (``*.cu``)
sit beside them and are found relative to ``__file__``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.util
import logging
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, ModuleType

from workbench.catalog.import_guard import CatalogExit, CatalogWatchdogTimeout, guarded_import, stop_signal

log = logging.getLogger(__name__)

ENV_CATALOG = "WORKBENCH_CATALOG"
_loaded: dict[Path, None] = {}  # an ordered set: worker processes load the same folders in the same order
_default_done = False
_current: Path | None = None
_packages: dict[Path, str] = {}  # folder -> the private package its files load under


def _package_of(folder: Path) -> str:
    """``workbench_catalog.<name>``, unless another folder of that name has it or a built-in kernel folder is
    named so (then a path-hashed name): a built-in folder's modules keep their plain name whatever was loaded
    first, so a worker process, which loads only the folders its cells need in the order they come, names
    them as its parent does."""
    if folder not in _packages:
        name = f"workbench_catalog.{folder.name}"
        builtin = _builtin_root()
        if name in _packages.values() or (folder.parent != builtin and (builtin / folder.name).is_dir()):
            name += "__" + hashlib.sha1(str(folder).encode()).hexdigest()[:8]
        _packages[folder] = name
    return _packages[folder]


def _builtin_root() -> Path:
    try:
        return builtin_catalog_path().resolve()
    except FileNotFoundError:
        return Path("/nonexistent")


def current_folder() -> Path | None:
    """The kernel folder whose files the loader is executing now (None outside a load)."""
    return _current


def builtin_catalog_path() -> Path:
    """``kernels/`` beside the package in a checkout, or ``workbench/_kernels`` in a wheel."""
    pkg = Path(__file__).resolve().parent.parent
    for cand in (pkg.parent / "kernels", pkg / "_kernels"):
        if cand.is_dir():
            return cand
    raise FileNotFoundError(f"kernel catalog not found next to {pkg}")


def load_catalog(path: str | os.PathLike) -> list[str]:
    """Load every kernel folder under ``path`` (or ``path`` itself if it is one). Returns folder names."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"catalog folder {root} does not exist")
    folders = [root] if (root / "spec.py").exists() else sorted(
        p for p in root.iterdir() if p.is_dir() and (p / "spec.py").exists())
    loaded = []
    for folder in folders:
        if folder in _loaded:
            continue
        _load_folder(folder)
        _loaded[folder] = None
        loaded.append(folder.name)
    return loaded


#: Files that failed to load ("folder/file.py" -> error line); the rest of the catalog still loads.
load_errors: dict[str, str] = {}


def _load_folder(folder: Path) -> None:
    global _current
    previous, _current = _current, folder
    try:
        _load_files(folder)
    finally:
        _current = previous


def _load_files(folder: Path) -> None:
    files = sorted(folder.glob("*.py"), key=lambda p: (p.name != "spec.py", p.name))
    for f in files:
        modname = f"{_package_of(folder)}.{f.stem}"
        spec = importlib.util.spec_from_file_location(modname, f)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        # a stop signal met inside is raised again as it leaves
        with guarded_import(import_timeout_s(), f"catalog file {f}"):
            failed = _exec_file(folder, f, spec.loader, mod)
        if failed and f.name == "spec.py":
            return  # variants of a kernel without a spec cannot register
        if not failed and f.name == "spec.py" and getattr(mod, "SPEC", None) is not None:
            mod.SPEC.path = str(folder)


def _exec_file(folder: Path, f: Path, loader: importlib.abc.Loader, mod: ModuleType) -> bool:
    """Import one catalog file; True when it failed (its error kept in :data:`load_errors`)."""
    try:
        with _import_bound(f):
            loader.exec_module(mod)
    except BaseException as exc:  # noqa: BLE001  (sys.exit or a hang in one file must not end or stall the run)
        sys.modules.pop(mod.__name__, None)
        if stop_signal(exc):
            raise  # Ctrl-C / SIGTERM while importing: the command stops
        key = f"{folder.name}/{f.name}"
        load_errors[key] = _load_error(exc)
        log.warning("catalog file %s failed to load: %s", f, load_errors[key])
        return True
    return False


#: Seconds one catalog file may take to import (``WORKBENCH_CATALOG_IMPORT_TIMEOUT`` overrides): a file that
#: loops at import time then fails to load, named, instead of hanging every command silently.
IMPORT_TIMEOUT_S = 120.0
ENV_IMPORT_TIMEOUT = "WORKBENCH_CATALOG_IMPORT_TIMEOUT"


class CatalogImportTimeout(BaseException):
    """Raised inside a catalog file's import when it outlives :data:`IMPORT_TIMEOUT_S` (a BaseException, so
    that the file's own ``except Exception`` cannot swallow it)."""


def import_timeout_s() -> float:
    """:data:`IMPORT_TIMEOUT_S`, or ``WORKBENCH_CATALOG_IMPORT_TIMEOUT`` where it is a positive number of seconds
    of at most a week (:func:`~workbench.core.env_values.env_seconds`)."""
    from workbench.core.env_values import env_seconds

    try:  # read as the command checked it (workbench.cli.checks); a value it would refuse is not used here
        value = env_seconds(ENV_IMPORT_TIMEOUT)
    except ValueError:
        value = None
    return IMPORT_TIMEOUT_S if value is None else value


def _timeout_text(limit: float) -> str:
    return (f"importing it took longer than {limit:g} s (does it loop or wait at import time?); "
            f"{ENV_IMPORT_TIMEOUT} sets the limit")


@contextlib.contextmanager
def _import_bound(path: Path) -> Iterator[None]:
    """A wall-time limit on importing ``path``: a SIGALRM timer on the main thread (where Python can run a
    handler: a pure-Python loop or a sleep is interrupted; code stuck inside C is not). Elsewhere, no bound. A
    timer someone else armed (pytest-timeout, a notebook's own alarm) keeps its handler and its deadline."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    limit = import_timeout_s()
    start = time.monotonic()
    previous = signal.getsignal(signal.SIGALRM)
    their_delay, their_interval = signal.getitimer(signal.ITIMER_REAL)
    theirs = [start + their_delay if their_delay > 0 else math.inf]  # their deadline, until it has fired

    def expired(signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if now >= theirs[0] - 1e-3:
            theirs[0] = math.inf
            signal.setitimer(signal.ITIMER_REAL, max(start + limit - now, 1e-3))
            if callable(previous):
                previous(signum, frame)
            return
        raise CatalogImportTimeout(_timeout_text(limit))

    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, min(limit, their_delay) if their_delay > 0 else limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if theirs[0] < math.inf:
            signal.setitimer(signal.ITIMER_REAL, max(theirs[0] - time.monotonic(), 1e-3), their_interval)


def _load_error(exc: BaseException) -> str:
    """One line for a file that failed to load; an exit or an interrupt named as what it is."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: the file called sys.exit({exc.code!r}) while loading"
    if isinstance(exc, KeyboardInterrupt):
        return "KeyboardInterrupt: raised while loading"
    if isinstance(exc, CatalogExit):
        return f"exit: the file called os._exit({exc.code!r}) while loading"
    if isinstance(exc, CatalogImportTimeout | CatalogWatchdogTimeout):
        return f"timed out: {str(exc) or _timeout_text(import_timeout_s())}"
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001  (an exception whose __str__ raises)
        text = "(its message could not be read)"
    return f"{type(exc).__name__}: {text}"


def folders_under(path: str | os.PathLike) -> list[Path]:
    """The loaded kernel folders that are ``path`` or lie under it."""
    root = Path(path).resolve()
    return [f for f in _loaded if f == root or root in f.parents]


def forget_folder(folder: Path) -> None:
    """Forget that ``folder`` was loaded (and its modules), so that :func:`load_catalog` loads it afresh."""
    _loaded.pop(folder, None)
    for key in [k for k in load_errors if k.split("/", 1)[0] == folder.name]:  # a fresh load says them again
        del load_errors[key]
    package = _package_of(folder)
    for name in [m for m in sys.modules if m.startswith(f"{package}.")]:
        del sys.modules[name]


def loaded_folders() -> list[str]:
    """Every catalog folder loaded in this process, in load order."""
    return [str(p) for p in _loaded]


def ensure_default_catalog() -> None:
    """Load the built-in catalog and any folders named in ``WORKBENCH_CATALOG`` once."""
    global _default_done
    if _default_done:
        return
    _default_done = True
    load_catalog(builtin_catalog_path())
    for extra in filter(None, os.environ.get(ENV_CATALOG, "").split(os.pathsep)):
        load_catalog(extra)
