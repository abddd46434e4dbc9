"""``workbench info``: which backends run here, why the others don't, and what the host is."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .output import stdout_to_stderr

#: Versions worth a column, per runtime (the full set is in ``--json``).
KEY_VERSIONS = {"numpy": ("numpy",), "numba": ("numba", "llvmlite", "threading_layer"),
                "torch": ("torch", "cuda", "hip", "macos"), "cupy": ("cupy", "runtime", "driver"),
                "opencl": ("pyopencl", "driver", "opencl_c")}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("info", help="list backends (available or why not) and describe this machine",
                              description="List every backend with its device, or the reason it is "
                                          "unavailable; the compilers compile-check can use; then the host: "
                                          "CPU, memory, BLAS and thread settings.")
    p.add_argument("--json", action="store_true", help="print the full environment record as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..backends.registry import ENV_OVERRIDE, override_name
    from ..environment import collect_environment

    with stdout_to_stderr():  # runtimes that print while probing must not corrupt the table or the JSON
        override = override_name()  # $WORKBENCH_BACKEND naming no backend is an error, not ignored
        env = collect_environment(probe_all=True)  # listing every backend is this command's job
    print(json.dumps(env, indent=2) if args.json else format_environment(env))
    if override:
        found = [b for b in env.get("backends") or [] if isinstance(b, dict) and b.get("name") == override]
        if found and not found[0].get("available"):
            print(f"note: {ENV_OVERRIDE}={override} selects a backend that is not available here: "
                  f"{found[0].get('reason') or 'unavailable'}", file=sys.stderr)
        elif not args.json:
            print(f"\n{ENV_OVERRIDE}={override}: the default backend of this process")
    return 0


def format_environment(env: dict[str, Any]) -> str:
    compilers = _toolchain_lines(env["toolchains"]) + [""] if "toolchains" in env else []
    return "\n".join(_backend_lines(env.get("backends")) + [""] + compilers + _host_lines(env))


def _toolchain_lines(toolchains: Any) -> list[str]:
    title = "Compilers (workbench compile-check: rung 4, no GPU needed)"
    if not isinstance(toolchains, list):
        return [title, f"  could not be listed: {toolchains}"]
    rows = [("compiler", "available", "version", "targets", "reason / path")]
    rows += [(t.get("name", "?"), "yes" if t.get("available") else "no", t.get("version") or "-",
              t.get("targets") or "-", t.get("reason") or t.get("path") or "") for t in toolchains]
    return [title] + _table(rows)


def _backend_lines(backends: Any) -> list[str]:
    if not isinstance(backends, list):
        return ["Backends", f"  could not be listed: {backends}"]
    rows = [("backend", "available", "device", "memory", "versions", "reason / note")]
    for b in backends:
        dev = b.get("device") if isinstance(b.get("device"), dict) else {}
        device = f"{dev.get('name', '-')} ({dev.get('kind', '?')})" if dev else "-"
        versions = dev.get("versions") or {}
        keys = KEY_VERSIONS.get(b.get("runtime"), tuple(versions)[:3])
        rows.append((b.get("name", "?"), "yes" if b.get("available") else "no", device,
                     _bytes(dev.get("total_memory_bytes")),
                     ", ".join(f"{k} {versions[k]}" for k in keys if versions.get(k)) or "-",
                     b.get("reason") or ""))
    return ["Backends"] + _table(rows)


def _host_lines(env: dict[str, Any]) -> list[str]:
    host = env.get("host") if isinstance(env.get("host"), dict) else {}
    git = env.get("git") if isinstance(env.get("git"), dict) else {}
    nvcc = env.get("nvcc") if isinstance(env.get("nvcc"), dict) else {}
    lines = ["Host",
             f"  CPU           {host.get('cpu_model', '?')} ({host.get('cpu_vendor', '?')}), "
             f"{host.get('physical_cores', '?')} physical / {host.get('logical_cores', '?')} logical cores, "
             f"last-level cache {_bytes(host.get('last_level_cache_bytes'))}",
             f"  SIMD          {' '.join(host.get('simd') or []) or '-'}",
             f"  RAM           {_bytes(host.get('ram_bytes'))}",
             f"  OS            {host.get('os', '?')}",
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
    lines += ["", "Packages", "  " + ", ".join(f"{k} {v}" for k, v in packages.items())]
    return lines


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    """Left-aligned columns; the last column is not padded so long reasons stay readable."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  " + "  ".join(str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + str(r[-1])
            for r in rows]


def _bytes(n: Any) -> str:
    if not isinstance(n, (int, float)) or n <= 0:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit in ("B", "KiB") or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return "-"
