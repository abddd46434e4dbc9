"""The workbench's environment variables read strictly: a value we do not understand is named and refused,
never taken for a default (``WORKBENCH_AUTO_PEAKS=maybe`` ran the probe as if it said yes; a bad
``WORKBENCH_LOG_LEVEL`` ended every command, at import, in logging's traceback)."""

from __future__ import annotations

import logging
import math
import os

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
#: The levels ``WORKBENCH_LOG_LEVEL`` may name.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
ENV_LOG_LEVEL = "WORKBENCH_LOG_LEVEL"
ENV_WORKER_PROFILE = "WORKBENCH_WORKER_PROFILE"


def env_flag(name: str, default: bool) -> bool:
    """``$name`` as a yes/no switch (unset or empty: ``default``); ValueError naming the value otherwise."""
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{name}={os.environ[name]!r} is not understood: use 1 or 0 (also true/false, yes/no, "
                     "on/off), or unset it")


#: The most seconds a duration read from the environment may say (a week, as ``--timeout``'s bound):
#: ``WORKBENCH_CATALOG_IMPORT_TIMEOUT=1e308`` was taken, and every kernel then failed to load with
#: "OverflowError: timestamp out of range for platform time_t" (443 lines of it for one ``verify``).
MAX_ENV_SECONDS = 604_800.0


def env_seconds(name: str) -> float | None:
    """``$name`` as a number of seconds (unset or empty: None); ValueError naming the value unless it is a
    finite number above 0 and at most :data:`MAX_ENV_SECONDS`."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_ENV_SECONDS):
        raise ValueError(f"{name}={os.environ[name]!r} is not a usable number of seconds: give a finite number "
                         f"above 0 and at most {MAX_ENV_SECONDS:.0f} (a week), or unset it")
    return value


def log_level() -> tuple[str, str | None]:
    """The level ``$WORKBENCH_LOG_LEVEL`` names (default WARNING), and why it was not taken where it was not."""
    text = os.environ.get(ENV_LOG_LEVEL, "").strip()
    if not text:
        return "WARNING", None
    if text.upper() in LOG_LEVELS:
        return text.upper(), None
    return "WARNING", (f"{ENV_LOG_LEVEL}={text!r} is not a log level; use one of {', '.join(LOG_LEVELS)} "
                       "(WARNING is used)")


def configure_logging() -> None:
    """The package's logging set up from ``$WORKBENCH_LOG_LEVEL``; a bad level is said once, not raised."""
    from workbench.core.terminal_text import SafeLogHandler

    level, problem = log_level()
    handler = SafeLogHandler()  # to the stderr of the moment, never a control sequence from a kernel's message
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if problem:
        logging.getLogger("workbench").warning(problem)


def worker_profile_dir() -> str | None:
    """``$WORKBENCH_WORKER_PROFILE``: the folder each worker writes its cProfile into, or None (unset). A value
    that is not an existing folder raises ValueError naming it (``=1`` ended each worker in a traceback)."""
    text = os.environ.get(ENV_WORKER_PROFILE, "")
    if not text:
        return None
    if not os.path.isdir(text):
        raise ValueError(f"{ENV_WORKER_PROFILE}={text!r} is not a folder: give an existing folder for the "
                         "workers' cProfile files (worker-<pid>.prof), or unset it")
    return text


#: Thread counts the runtimes read from the environment: a positive integer each (OpenMP: a comma list of them).
THREAD_COUNT_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def check_thread_counts() -> None:
    """Each of :data:`THREAD_COUNT_VARS` that is set is a thread count; ValueError naming it otherwise.
    ``NUMBA_NUM_THREADS=abc`` printed numba's traceback in every worker and ran with its default."""
    for name in THREAD_COUNT_VARS:
        text = os.environ.get(name)
        if text is None or not text.strip():
            continue
        parts = text.split(",") if name == "OMP_NUM_THREADS" else [text]
        if not all(p.strip().isdigit() and 0 < int(p) <= 1 << 16 for p in parts):
            raise ValueError(f"{name}={text!r} is not a thread count: give a whole number of threads such as 2, "
                             "or unset it")
