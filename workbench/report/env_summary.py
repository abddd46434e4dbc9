"""The environment in one line a colleague reads (machine, OS, Python, runtimes, backends); the full
record stays in the report, folded. Run names for legends and tables come from here too, since a
run is best told apart by its name, machine and time, never by its id."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd

from workbench.backends import registry


def key_packages() -> list[str]:
    """The packages whose versions the line names: each runtime's own (its
    :attr:`~workbench.backends.runtime.Runtime.headline_package`), by rank."""
    return [rt.headline_package for rt in registry.runtimes() if rt.headline_package]


def _gib(b: Any) -> str:
    try:
        return f"{float(b) / 2**30:.0f} GiB"
    except (TypeError, ValueError):
        return ""


def environment_line(rec: Mapping[str, Any], measured: Collection[str] | None = None) -> str:
    """"vm: AMD EPYC, 2 cores, 24 GiB RAM · Linux 6.18 · Python 3.11.7 · numpy 2.4.6, torch 2.13.0 · …".

    ``measured``: the backends the report has rows of; only those are listed (a header that named opencl-1 and
    triton-interp, available but never run, promised results the report did not have)."""
    host = rec.get("host") or {}
    parts = []
    machine = ", ".join(x for x in (
        str(host.get("cpu_model") or host.get("cpu") or ""),
        f"{host['logical_cores'] if 'logical_cores' in host else host.get('cores')} cores"
        if host.get("logical_cores") or host.get("cores") else "",
        f"{_gib(host.get('ram_bytes'))} RAM" if host.get("ram_bytes") else "") if x)
    parts.append(f"{host.get('hostname') or 'host'}: {machine}" if machine else str(host.get("hostname") or ""))
    if host.get("system") or host.get("os"):
        parts.append(" ".join(str(x) for x in (host.get("system") or host.get("os"), host.get("release")) if x)
                     .split("-fc")[0])
    if host.get("python"):
        parts.append(f"Python {host['python']}")
    versions = {**(rec.get("versions") or {}), **(rec.get("packages") or {})}
    pk = [f"{p} {versions[p]}" for p in key_packages() if versions.get(p)]
    if pk:
        parts.append(", ".join(pk))
    backends = rec.get("backends")
    if isinstance(backends, list):
        avail = []
        for b in backends:
            if isinstance(b, dict) and b.get("available") and (measured is None or b.get("name") in measured):
                dev = b.get("device") or {}
                words = " ".join(str(x) for x in ((dev.get("extra") or {}).get("platform"), dev.get("name"))
                                 if x).lower()
                tag = " (PoCL, CPU)" if "portable computing language" in words or "pocl" in words else ""
                avail.append(f"{b.get('name')}{tag}")
        if avail:
            parts.append("backends: " + ", ".join(avail))
    git = rec.get("git") or {}
    if git.get("commit"):
        parts.append(f"git {str(git['commit'])[:7]}" + (" (uncommitted changes)" if git.get("dirty") else ""))
    return " · ".join(p for p in parts if p)


def run_names(runs: pd.DataFrame | None, run_ids: list[str],
              environments: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """run id -> a readable, unique name: the run's name (or suite), its machine where runs come from
    several, and its start time where names would otherwise repeat."""
    recs = {}
    if runs is not None and len(runs) and "run_id" in runs:
        recs = {str(r["run_id"]): r.to_dict() for _, r in runs.iterrows()}
    hosts = {}
    for rid in run_ids:
        env = (environments or {}).get(str((recs.get(rid) or {}).get("env_id") or "")) or {}
        hosts[rid] = str((env.get("host") or {}).get("hostname") or "")
    several_hosts = len({h for h in hosts.values() if h}) > 1
    names = {}
    for rid in run_ids:
        rec = recs.get(rid) or {}
        base = str(rec.get("name") or "") or (f"{rec['suite']} suite" if rec.get("suite") else "") or rid
        if several_hosts and hosts[rid]:
            base += f" on {hosts[rid]}"
        names[rid] = base
    counts = pd.Series(list(names.values())).value_counts() if names else pd.Series(dtype=int)
    for rid, name in list(names.items()):
        if counts.get(name, 0) > 1:
            started = str((recs.get(rid) or {}).get("created_at") or "")[:16].replace("T", " ")
            names[rid] = f"{name}, {started}" if started else f"{name} ({rid})"
    return names


def machines_table(df: pd.DataFrame, environments: Mapping[str, Mapping[str, Any]] | None = None) -> pd.DataFrame:
    """Rows grouped by the machine that measured them: one line per machine, with its environment, the
    Dask workers it had (a sweep on a cluster) and its backends and cells. Empty when every row comes from
    one machine: the environment line already says which."""
    if df.empty or "env_id" not in df:
        return pd.DataFrame()
    envs = environments or {}

    def host(env_id: Any) -> str:
        return str(((envs.get(str(env_id)) or {}).get("host") or {}).get("hostname") or "")

    machine = df["machine"] if "machine" in df else pd.Series([None] * len(df), index=df.index)
    frame = pd.DataFrame({"machine": [m if isinstance(m, str) and m else host(e) or "unknown"
                                      for m, e in zip(machine, df["env_id"], strict=True)],
                          "environment": df["env_id"].astype(str),
                          "worker": df["worker"] if "worker" in df else None,
                          "backend": df["backend"].astype(str)})
    if frame["machine"].nunique() < 2 and frame["worker"].isna().all():
        return pd.DataFrame()
    rows = [{"machine": m, "environment": ", ".join(dict.fromkeys(g["environment"])),
             "workers": int(g["worker"].dropna().nunique()), "backends": ", ".join(sorted(set(g["backend"]))),
             "cells": len(g)} for m, g in frame.groupby("machine", sort=True)]
    return pd.DataFrame(rows)
