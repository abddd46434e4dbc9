"""List every backend with its device, or the reason it is unavailable; the compilers compile-check can use; then
the host: CPU, memory, BLAS and thread settings. Probing every runtime imports each (seconds): the listing is
cached until a package, driver file, device node or relevant variable changes, or a day passes."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from workbench.cli.args_common import command
from workbench.cli.output import stdout_to_stderr
from workbench.core.record import JsonObject

#: Widest line of the listing (a terminal of 100 columns shows it unwrapped).
WIDTH = 100


def register(subparsers: Any) -> None:
    p = command(subparsers, "info", run, description=__doc__,
                help="list backends (available or why not) and describe this machine")
    p.add_argument("--json", action="store_true", help="print the full environment record as JSON")
    p.add_argument("--refresh", action="store_true", help="probe every backend again (ignore the cache)")


def run(args: argparse.Namespace) -> int:
    from workbench.backends.registry import ENV_OVERRIDE, override_name
    from workbench.store.environment import collect_environment

    with stdout_to_stderr():  # runtimes that print while probing must not corrupt the table or the JSON
        override = override_name()  # $WORKBENCH_BACKEND naming no backend is an error, not ignored
        env = collect_environment(include_backends=False)
        env.update(probed_backends(env.get("packages"), refresh=args.refresh))
    print(json.dumps(env, indent=2) if args.json else format_environment(env))
    if override:
        found = [b for b in env.get("backends") or [] if isinstance(b, dict) and b.get("name") == override]
        if found and not found[0].get("available"):
            print(f"note: {ENV_OVERRIDE}={override} selects a backend that is not available here: "
                  f"{found[0].get('reason') or 'unavailable'}", file=sys.stderr)
        elif not args.json:
            print(f"\n{ENV_OVERRIDE}={override}: the default backend of this process")
    return 0


def probed_backends(packages: Any, refresh: bool = False) -> JsonObject:
    """``backends`` and ``toolchains`` of the environment record, and ``probed_at``: from the cache when its
    fingerprint (:func:`~workbench.backends.described.probe_fingerprint`) matches and it is younger than a day
    (:data:`~workbench.backends.described.CACHE_TTL_S`), else probed now (every runtime imported: 4-5 s of a
    4.7 s ``info``, mostly torch, and wgpu parsing its C header). The cache also lets a sweep's parent plan
    without importing any runtime (:mod:`workbench.backends.described`)."""
    import time

    from workbench.backends.described import probe_fingerprint, read_cache, static_fields, write_cache

    key = probe_fingerprint(packages)
    if not refresh:
        doc = read_cache(key)
        if doc is not None and all(k in doc for k in ("backends", "toolchains", "probed_at")):
            return {k: doc[k] for k in ("backends", "toolchains", "probed_at")}
    from workbench.backends.registry import probed_backends as probed
    from workbench.portable.toolchains import toolchain_records
    from workbench.store.environment import backend_records

    found: JsonObject = {"backends": _guarded(lambda: backend_records(probe_all=True)),
                             "toolchains": _guarded(toolchain_records),
                             "probed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    found = json.loads(json.dumps(found, default=str))
    if isinstance(found["backends"], list):  # a listing that failed as a whole is not kept
        write_cache(key, found, _guarded(lambda: {b.name: static_fields(b) for b in probed()}))
    return found


def _guarded(fn: Any) -> Any:
    """``fn()``, or what went wrong (the listing says it, instead of failing)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - one failed part must not hide the others
        return f"{type(exc).__name__}: {exc}"


def format_environment(env: JsonObject) -> str:
    compilers = _toolchain_lines(env["toolchains"]) + [""] if "toolchains" in env else []
    when = f"probed {env['probed_at']}; `workbench info --refresh` probes again" if env.get("probed_at") else ""
    return "\n".join(_backend_lines(env.get("backends"), when) + [""] + compilers + _host_lines(env))


def _toolchain_lines(toolchains: Any) -> list[str]:
    title = "Compilers (workbench compile-check: rung 4, no GPU needed)"
    if not isinstance(toolchains, list):
        return [title, f"  could not be listed: {toolchains}"]
    rows = [("compiler", "available", "version", "targets / reason, path")]
    rows += [(t.get("name", "?"), "yes" if t.get("available") else "no", t.get("version") or "-",
              "; ".join(filter(None, [t.get("targets"), t.get("reason") or t.get("path")])) or "-")
             for t in toolchains]
    return [title] + _table(rows)


def _backend_lines(backends: Any, when: str = "") -> list[str]:
    if not isinstance(backends, list):
        return ["Backends", f"  could not be listed: {backends}"]
    rows = [("backend", "available", "device, memory; versions / reason")]
    for b in backends:
        dev = b.get("device") if isinstance(b.get("device"), dict) else {}
        if b.get("available"):
            versions = dev.get("versions") or {}
            keys = _key_versions(b.get("runtime")) or tuple(versions)[:3]
            what = (f"{dev.get('name', '-')} ({dev.get('kind', '?')}), {_bytes(dev.get('total_memory_bytes'))}; "
                    + (", ".join(f"{k} {versions[k]}" for k in keys if versions.get(k)) or "-"))
            what += f"; {b['reason']}" if b.get("reason") else ""
        else:
            what = b.get("reason") or "unavailable"
        rows.append((b.get("name", "?"), "yes" if b.get("available") else "no", what))
    return ["Backends"] + _table(rows) + ([f"  ({when})"] if when else [])


def _key_versions(runtime: Any) -> tuple[str, ...]:
    """The versions worth a column for a backend of ``runtime``, as it declares them (the full set is in
    ``--json``); none where it declares none."""
    from workbench.backends.registry import runtime as declared

    found = declared(runtime) if isinstance(runtime, str) else None
    return found.key_versions if found is not None else ()


def _host_lines(env: JsonObject) -> list[str]:
    host = env.get("host") if isinstance(env.get("host"), dict) else {}
    git = env.get("git") if isinstance(env.get("git"), dict) else {}
    nvcc = env.get("nvcc") if isinstance(env.get("nvcc"), dict) else {}
    cpu = (f"{host.get('cpu_model', '?')} ({host.get('cpu_vendor', '?')}), {host.get('physical_cores', '?')} "
           f"physical / {host.get('logical_cores', '?')} logical cores, last-level cache "
           f"{_bytes(host.get('last_level_cache_bytes'))}")
    lines = ["Host", *_wrapped("CPU", cpu),
             *_wrapped("SIMD", " ".join(host.get("simd") or []) or "-"),
             f"  RAM           {_bytes(host.get('ram_bytes'))}",
             *_wrapped("OS", str(host.get("os", "?"))),
             f"  Python        {host.get('python', '?')}",
             f"  nvcc          {nvcc.get('version', 'not on PATH')}",
             f"  git           {git.get('commit', '-')[:12]}{' (uncommitted changes)' if git.get('dirty') else ''}",
             f"  environment   {env.get('environment_id', '?')}"]
    pools = env.get("threadpools")
    lines += ["", "Thread pools (threadpoolctl: libraries loaded in this process)"]
    if isinstance(pools, list) and pools:
        lines += _table([("library", "api", "version", "threads", "threading layer")]
                        + [(p.get("internal_api", "?"), p.get("user_api", "?"), p.get("version") or "?",
                            str(p.get("num_threads", "?")), p.get("threading_layer") or "-") for p in pools])
    else:
        lines.append(f"  {pools or 'none loaded'}")
    threads = env.get("threads") if isinstance(env.get("threads"), dict) else {}
    lines += ["", "Thread settings"]
    lines += [f"  {k:<26}{'unset' if v is None else v}" for k, v in threads.items()]
    packages = env.get("packages") if isinstance(env.get("packages"), dict) else {}
    lines += ["", "Packages", *textwrap.wrap(", ".join(f"{k} {v}" for k, v in packages.items()), WIDTH,
                                             initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)]
    return lines


def _table(rows: list[tuple[str, ...]], width: int = WIDTH) -> list[str]:
    """Left-aligned columns; the last one wrapped to ``width`` (its continuation lines indented under it)."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    indent = 2 + sum(w + 2 for w in widths)
    out = []
    for r in rows:
        head = "  " + "".join(str(c).ljust(w + 2) for c, w in zip(r[:-1], widths, strict=True))
        body = textwrap.wrap(str(r[-1]), max(30, width - indent), break_on_hyphens=False,
                             break_long_words=False) or [""]  # a path stays whole
        out += [(head + body[0]).rstrip()] + [" " * indent + line for line in body[1:]]
    return out


def _wrapped(label: str, text: str, width: int = WIDTH) -> list[str]:
    """``  label  text`` wrapped to ``width``, continuation lines under the text."""
    head = f"  {label:<14}"
    lines = textwrap.wrap(text, width - len(head), break_on_hyphens=False) or [""]
    return [head + lines[0]] + [" " * len(head) + line for line in lines[1:]]


def _bytes(n: Any) -> str:
    if not isinstance(n, (int, float)) or n <= 0:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit in ("B", "KiB") or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return "-"
