"""The workbench's configuration file: default backend, thread counts, store path and tuned configurations.

JSON, not TOML: the file is mostly written by the workbench (``workbench tune``, ``optimize --apply``,
``config set``), Python reads and writes JSON with the standard library (writing TOML needs a package the
project does not carry), and :mod:`jsonschema`, already used for imports, validates it so that a bad value
is one message naming the key and the valid choices. ``$WORKBENCH_CONFIG`` names the file; without it,
``$XDG_CONFIG_HOME/workbench/config.json`` (``~/.config/...``). A missing file is an empty configuration.

The settings are defaults for the environment variables the workbench already reads
(:func:`apply_to_environment`): an explicit variable always wins over the file.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any, TypedDict

from workbench.backends.registry import all_backends
from workbench.catalog.spec import TunableConfig
from workbench.core.output_guard import check_output_path, refuse_non_regular, write_output
from workbench.core.record import JsonObject
from workbench.core.regular_files import read_regular_text

#: The largest configuration file read (tuned configurations included, a real one is a few KiB).
MAX_CONFIG_BYTES = 4 << 20

ENV_CONFIG = "WORKBENCH_CONFIG"
CONFIG_FORMAT = "workbench-config"
CONFIG_VERSION = 1

#: ``threads.<key>`` -> the environment variables it sets (the thread pools each runtime sizes itself from).
THREAD_VARIABLES: dict[str, tuple[str, ...]] = {
    "numba": ("NUMBA_NUM_THREADS",),
    "torch": ("OMP_NUM_THREADS",),  # torch's intra-op pool (and any OpenMP runtime's)
    "blas": ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"),
}
#: The keys ``workbench config set`` accepts (``tuned`` is written by ``workbench tune`` / ``optimize``).
SETTABLE = ("default_backend", "store", *(f"threads.{k}" for k in THREAD_VARIABLES))


class ThreadSettings(TypedDict, total=False):
    """``threads``: the size of each runtime's thread pool (:data:`THREAD_VARIABLES`)."""

    numba: int
    torch: int
    blas: int


class _TunedKey(TypedDict):
    kernel: str
    variant: str
    device: str
    dtype: str
    shape_class: str
    config: TunableConfig


class TunedEntry(_TunedKey, total=False):
    """One tuned configuration, kept for a kernel's variant on one device, dtype and shape class (written by
    ``workbench tune``: :meth:`workbench.tuning.search.TuneResult.entry`)."""

    median_s: float | None
    verdict: str
    default_median_s: float | None
    size: str
    run_id: str
    tuned_at: str
    strategy: str
    trials: int


class WorkbenchConfig(TypedDict, total=False):
    """The configuration file, as :data:`SCHEMA` allows it (every key optional)."""

    format: str
    version: int
    default_backend: str
    store: str
    threads: ThreadSettings
    tuned: list[TunedEntry]


_SCALAR: JsonObject = {"type": ["integer", "string", "number", "boolean"]}
SCHEMA: JsonObject = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "format": {"const": CONFIG_FORMAT},
        "version": {"const": CONFIG_VERSION},
        "default_backend": {"type": "string", "minLength": 1, "maxLength": 200},
        "store": {"type": "string", "minLength": 1, "maxLength": 4096},
        "threads": {"type": "object", "additionalProperties": False,
                    "properties": {k: {"type": "integer", "minimum": 1, "maximum": 4096} for k in THREAD_VARIABLES}},
        "tuned": {"type": "array", "maxItems": 10000, "items": {
            "type": "object",
            "required": ["kernel", "variant", "device", "dtype", "shape_class", "config"],
            "properties": {
                "kernel": {"type": "string"}, "variant": {"type": "string"}, "device": {"type": "string"},
                "dtype": {"enum": ["float16", "bfloat16", "float32", "float64"]},
                "shape_class": {"type": "string"},
                "config": {"type": "object", "additionalProperties": _SCALAR, "maxProperties": 64},
                "median_s": {"type": ["number", "null"], "minimum": 0},
                "default_median_s": {"type": ["number", "null"], "minimum": 0},
                "size": {"type": "string"}, "run_id": {"type": "string"}, "tuned_at": {"type": "string"},
                "strategy": {"type": "string"}, "trials": {"type": "integer", "minimum": 0},
                "verdict": {"type": "string"},
            }}},
    },
}


def config_path() -> Path:
    """``$WORKBENCH_CONFIG``, else ``$XDG_CONFIG_HOME/workbench/config.json``."""
    if os.environ.get(ENV_CONFIG):
        return Path(os.environ[ENV_CONFIG]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "workbench" / "config.json"


def validate(config: Any, where: str = "config") -> WorkbenchConfig:
    """``config`` checked against :data:`SCHEMA` and the backend names; a ValueError naming the key."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        key = ".".join(str(p) for p in e.absolute_path) or "(top level)"
        if e.validator == "additionalProperties":
            extra = sorted(set(e.instance) - set(e.schema.get("properties", {})))
            valid = ", ".join(e.schema.get("properties", {}))
            name = f"{key}.{extra[0]}" if e.absolute_path else extra[0]
            raise ValueError(f"{where}: unknown key {name!r}; valid keys: {valid}")
        raise ValueError(f"{where}: key {key!r}: {e.message}")
    for key, n in (config.get("threads") or {}).items():  # the schema's "integer" takes 2.0 too
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"{where}: key 'threads.{key}': {n!r} is not a whole number of threads; give an "
                             "integer such as 2")
    backend = config.get("default_backend")
    if backend is not None:
        check_backend(backend, where)
    return config


def check_backend(name: str, where: str = "config") -> None:
    names = sorted(all_backends())
    if name != "auto" and name not in names:
        raise ValueError(f"{where}: key 'default_backend': {name!r} names no backend; valid choices: auto, "
                         f"{', '.join(names)}")


def read(path: str | os.PathLike | None = None) -> WorkbenchConfig:
    """The configuration at ``path`` (default :func:`config_path`), validated; {} when there is no file."""
    p = Path(path) if path is not None else config_path()
    if not p.exists():
        if p.is_symlink() and _loops(p):  # said, never read as "no file, every default" (a link to a file
            # not made yet is absent: `config save` makes it)
            raise ValueError(f"config file {p} is a symbolic link that loops (it never reaches a file); point "
                             "it at the configuration, or remove it")
        return {}
    text = read_regular_text(p, MAX_CONFIG_BYTES, what="config file")  # a FIFO or /dev/zero: refused, never read
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:  # named, like every other fault of the file (the message named nothing)
        raise ValueError(f"{p}: JSON nested too deeply to be a workbench configuration") from None
    except ValueError as exc:  # an integer of thousands of digits (sys.get_int_max_str_digits)
        raise ValueError(f"{p}: a number is out of range ({str(exc).split(';')[0]})") from None
    return validate(data, str(p))


def _loops(p: Path) -> bool:
    """Whether the symbolic link ``p`` is part of a loop."""
    try:
        p.resolve(strict=True)
    except RuntimeError:  # Python 3.11 names a loop so
        return True
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def write(config: WorkbenchConfig, path: str | os.PathLike | None = None) -> Path:
    """Validate and write ``config`` atomically (a reader never sees half a file)."""
    p = Path(path) if path is not None else config_path()
    data = {"format": CONFIG_FORMAT, "version": CONFIG_VERSION, **{k: v for k, v in config.items()
                                                                    if k not in ("format", "version")}}
    validate(data, str(p))
    from workbench.store.database import (
        default_store_path,  # here: `import workbench` loads this module, not the store
    )

    stores = (default_store_path(), config.get("store"))
    # checked as given: `config save out/` (no such folder) wrote a file named `out`, Path() having dropped the /
    given, env = os.fspath(p), os.environ.get(ENV_CONFIG)
    if env and Path(env).expanduser() == p:
        given = os.path.expanduser(env)
    elif path is not None:
        given = os.fspath(path)
    check_output_path(given, flag="config file", stores=stores)  # never over a results store
    try:
        return write_output(p, json.dumps(data, indent=2) + "\n", flag="config file", stores=stores)
    except OSError as exc:  # named by the file asked for, not by the temporary file beside it
        raise ValueError(f"cannot write the configuration to {p}: {exc.strerror or exc}") from None


def set_value(config: WorkbenchConfig, key: str, value: str) -> WorkbenchConfig:
    """``config`` with ``key`` (one of :data:`SETTABLE`) set from its text form; a ValueError naming the key
    and the valid choices otherwise."""
    if key not in SETTABLE:
        raise ValueError(f"unknown config key {key!r}; valid keys: {', '.join(SETTABLE)} (tuned configurations "
                         "are written by `workbench tune` and `workbench optimize --apply`)")
    out = json.loads(json.dumps(config))
    if key.startswith("threads."):
        try:
            n = int(value)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"config key {key!r}: {value!r} is not a thread count; give a positive integer "
                             f"(this machine has {os.cpu_count()} logical cores)")
        out.setdefault("threads", {})[key.split(".", 1)[1]] = n
    elif key == "default_backend":
        check_backend(value)
        out[key] = value
    else:  # the store: refused now if it cannot be one, not at every later command
        refuse_non_regular(value, flag="config key 'store':")
        out[key] = value
    return out


def apply_to_environment(config: WorkbenchConfig, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Set the environment variables the configuration stands for, where the user did not set them:
    ``WORKBENCH_STORE``, ``WORKBENCH_BACKEND`` and the thread counts (worker processes inherit them).
    Returns what was set."""
    env = os.environ if environ is None else environ
    wanted: dict[str, str] = {}
    if config.get("store"):
        wanted["WORKBENCH_STORE"] = str(config["store"])
    if config.get("default_backend"):
        wanted["WORKBENCH_BACKEND"] = str(config["default_backend"])
    for key, n in (config.get("threads") or {}).items():
        for var in THREAD_VARIABLES[key]:
            wanted[var] = str(n)
    applied = {k: v for k, v in wanted.items() if k not in env}
    env.update(applied)
    return applied


def tuned_entries(config: WorkbenchConfig) -> list[TunedEntry]:
    return list(config.get("tuned") or [])


def with_tuned(config: WorkbenchConfig, entry: TunedEntry) -> WorkbenchConfig:
    """``config`` with ``entry`` replacing the tuned entry of the same kernel, variant, device, dtype and
    shape class (the newest tuning of a key wins)."""
    key = ("kernel", "variant", "device", "dtype", "shape_class")
    kept = [e for e in tuned_entries(config) if tuple(e[k] for k in key) != tuple(entry[k] for k in key)]
    return {**config, "tuned": [*kept, dict(entry)]}
