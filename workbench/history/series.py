"""Series: one cell on one machine across runs, read from a store.

A series is one cell identity (kernel, variant, backend, dtype, parameters, mode, cache — the cell key — and
the timing mode) on one machine fingerprint. The fingerprint is the hardware (CPU and GPU models, drivers,
core count, memory), not the ``env_id``: that one also hashes package versions, so an upgrade would split a
series in two exactly where a reader wants to see it. Versions ride along on every point instead, and a
change of them is an event on the series. Runs of different machines never share a series; imported runs
join their machine's series.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from workbench.core.record import Json
from workbench.history.provenance import CodeCommit, commit_label
from workbench.store.stored_text import stored_json

#: Columns of the results table a series point is read from (the rest of a row is never loaded: a history
#: of 1,000 runs of 100 cells reads 100,000 rows).
POINT_COLUMNS = ("run_id", "cell_key", "kernel", "variant", "backend", "dtype", "size_label", "mode", "cache",
                 "timer_kind", "env_id", "median_s", "noise", "rounds", "median_precision")
#: z of the 95% interval ``median_precision`` is stated at.
_Z95 = 1.96


@dataclass(frozen=True)
class Machine:
    """A machine fingerprint: ``id`` (12 hex digits of its hardware), a label in words, and the versions of
    what ran on it (packages, Python, drivers aside) that a run may change."""

    id: str
    label: str
    versions: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class RunInfo:
    """What a history needs of one run."""

    run_id: str
    created_at: str
    name: str | None
    tag: str | None
    commits: tuple[CodeCommit, ...]
    workbench_version: str | None

    @property
    def commit(self) -> str:
        """The run's commits in short (``3f9a1c2e01+`` when dirty), or ""."""
        return commit_label(self.commits)


@dataclass
class Point:
    """One run of a series: its median time and the noise of that median (log scale, one sigma)."""

    run: RunInfo
    median_s: float
    sigma: float
    versions: dict[str, str]


@dataclass(frozen=True)
class VersionEvent:
    """Versions that changed between point ``index - 1`` and point ``index`` of a series."""

    index: int
    changes: tuple[str, ...]

    @property
    def text(self) -> str:
        return "; ".join(self.changes)


@dataclass
class Series:
    """One cell on one machine, its points in run order, and the version changes along it."""

    cell_key: str
    kernel: str
    variant: str
    backend: str
    dtype: str
    size_label: str
    mode: str
    cache: str
    timer_kind: str
    machine: Machine
    points: list[Point] = field(default_factory=list)

    @property
    def key(self) -> str:
        """Stable id of the series: machine, cell and timing mode."""
        return f"{self.machine.id}:{self.cell_key}:{self.timer_kind}"

    @property
    def label(self) -> str:
        parts = [self.kernel, self.variant, f"@ {self.backend}", self.dtype, self.size_label]
        if self.mode and self.mode != "eager":
            parts.append(self.mode)
        return " ".join(p for p in parts if p)

    def events(self) -> list[VersionEvent]:
        """Where the versions changed from one point to the next (a package upgrade, another driver)."""
        out = []
        for i in range(1, len(self.points)):
            before, after = self.points[i - 1].versions, self.points[i].versions
            changed = tuple(f"{k} {before.get(k, '-')} -> {after.get(k, '-')}"
                            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k))
            if changed:
                out.append(VersionEvent(i, changed))
        return out


# -- machines ----------------------------------------------------------------------------------------

def machine_of(env_id: str, record: Mapping[str, Json] | None) -> Machine:
    """The fingerprint of an environment record: the hardware and drivers it names, hashed; versions apart.
    An environment without a record (imported without one) is its own machine."""
    host = record.get("host") if isinstance(record, Mapping) else None
    if not isinstance(host, Mapping):
        return Machine(f"env-{env_id[:8]}", f"machine of environment {env_id} (not described)", {})
    gpus, drivers, versions = _devices(record)
    hardware = {
        "cpu": host.get("cpu_model"), "arch": host.get("machine"), "system": host.get("system"),
        "cores": [host.get("physical_cores"), host.get("logical_cores")],
        "ram_gib": round(float(host.get("ram_bytes") or 0) / 2**30),
        "accelerators": host.get("accelerators"), "gpus": gpus, "drivers": drivers,
    }
    fid = hashlib.sha256(json.dumps(hardware, sort_keys=True, default=str).encode()).hexdigest()[:12]
    label = f"{host.get('cpu_model') or 'unknown CPU'}, {host.get('logical_cores') or '?'} cores, " \
            f"{hardware['ram_gib']} GiB"
    if gpus:
        label += ", " + ", ".join(gpus)
    packages = record.get("packages")
    if isinstance(packages, Mapping):
        versions.update({str(k): str(v) for k, v in packages.items()})
    for k in ("workbench_version",):
        if record.get(k):
            versions["workbench"] = str(record[k])
    if host.get("python"):
        versions["python"] = str(host["python"])
    return Machine(fid, label, versions)


def _devices(record: Mapping[str, Json]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(GPU and other non-CPU device names, driver versions, other runtime versions) of the backends the
    record describes."""
    gpus: list[str] = []
    drivers: dict[str, str] = {}
    versions: dict[str, str] = {}
    backends = record.get("backends")
    for b in backends if isinstance(backends, list) else []:
        device = b.get("device") if isinstance(b, Mapping) else None
        if not isinstance(device, Mapping):
            continue
        if device.get("kind") not in (None, "cpu") and device.get("name") and device["name"] not in gpus:
            gpus.append(str(device["name"]))
        dv = device.get("versions")
        for k, v in (dv.items() if isinstance(dv, Mapping) else []):
            (drivers if "driver" in str(k).lower() else versions)[f"{b.get('name')}:{k}"] = str(v)
    return sorted(gpus), drivers, versions


# -- reading a store -----------------------------------------------------------------------------------

def run_infos(conn: sqlite3.Connection) -> dict[str, RunInfo]:
    """Every run of a store (``conn``), by id, oldest first; a store from before the history columns reads
    with them empty."""
    cur = conn.execute("SELECT * FROM runs ORDER BY created_at, run_id")
    cols = [d[0] for d in cur.description]
    out = {}
    for values in cur.fetchall():
        r = dict(zip(cols, values, strict=True))
        out[r["run_id"]] = RunInfo(r["run_id"], str(r.get("created_at") or ""), r.get("name"), r.get("tag"),
                                   _commits(r.get("code_commits"), r.get("git_commit")), r.get("workbench_version"))
    return out


def _commits(text: Any, workbench_commit: Any) -> tuple[CodeCommit, ...]:
    """The run's recorded commits; a run from before them has the workbench checkout's commit, if any."""
    try:
        # cleaned: a store written before commits were cleaned where stored still shows them safely
        value = stored_json(json.loads(text)) if isinstance(text, str) and text else None
    except ValueError:
        value = None
    if isinstance(value, list):
        return tuple(CodeCommit(**{k: v for k, v in c.items() if k in CodeCommit.__annotations__})
                     for c in value if isinstance(c, dict))
    return (CodeCommit(commit=str(workbench_commit)),) if workbench_commit else ()


def machines(conn: sqlite3.Connection) -> dict[str, Machine]:
    """env_id -> its machine, for every environment the store describes."""
    out = {}
    for env_id, text in conn.execute("SELECT env_id, record FROM environments"):
        try:
            record = json.loads(text)
        except (TypeError, ValueError):
            record = None
        out[env_id] = machine_of(env_id, record if isinstance(record, dict) else None)
    return out


def point_sigma(noise: Any, rounds: Any, precision: Any, aa_sigma: float | None = None) -> float:
    """The noise of one run's median on a log scale (one sigma), from its own evidence: the spread of its
    round medians over the square root of their number, the precision its samples reached, and its A/A
    twin's spread where it has one; the largest of them (0.0 when none is known)."""
    parts = [aa_sigma or 0.0]
    if _finite(noise) and _finite(rounds) and rounds >= 2:
        parts.append(float(noise) / math.sqrt(float(rounds)))
    if _finite(precision):
        parts.append(float(precision) / _Z95)
    return max(parts)


def twin_sigma(reference: Any, twin: Any) -> float | None:
    """The A/A floor of a row with a twin: the spread of log(reference / twin) over paired rounds, per side
    and per run median (None without at least 3 pairs)."""
    try:
        a, b = json.loads(reference), json.loads(twin)
        if isinstance(b, str):
            b = json.loads(b)
    except (TypeError, ValueError):
        return None
    pairs = [math.log(x / y) for x, y in zip(a or [], b or [], strict=False)
             if _finite(x) and _finite(y) and x > 0 and y > 0]
    if len(pairs) < 3:
        return None
    mean = sum(pairs) / len(pairs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in pairs) / (len(pairs) - 1))
    return sd / math.sqrt(2 * len(pairs))


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class SeriesFilter:
    """Which series to read: runs created at or after ``since`` (an ISO date or time, or a run id), machines
    whose fingerprint, label or env_id contains ``machine``, cells of ``kernels``."""

    since: str | None = None
    machine: str | None = None
    kernels: tuple[str, ...] = ()


def read_series(conn: sqlite3.Connection, which: SeriesFilter = SeriesFilter(),
                min_runs: int = 1) -> tuple[list[Series], dict[str, RunInfo]]:
    """Every series in a store with its ok points in run order, and the runs read; ``which`` filters.
    ``min_runs``: the rows of a cell with fewer ok runs in the whole store are not read (SQLite counts them),
    so a store of a million one-off cells builds no million series only to drop them; a series read may still
    have fewer points (another machine's runs, ``since``), and the caller drops it."""
    runs = run_infos(conn)
    since = _since_key(which.since, runs)
    wanted_runs = [r for r in runs.values() if since is None or (r.created_at, r.run_id) >= since]
    order = {r.run_id: i for i, r in enumerate(wanted_runs)}
    envs = machines(conn)
    has_extra = "extra" in {r[1] for r in conn.execute("PRAGMA table_info(results)")}
    aa = ("json_extract(extra, '$.aa_round_medians_s'), round_medians_s" if has_extra
          else "NULL, NULL")
    sql = f"SELECT {', '.join(POINT_COLUMNS)}, {aa} FROM results WHERE status = 'ok' AND median_s > 0"
    args: list[str | int] = []
    if which.kernels:
        sql += f" AND kernel IN ({', '.join('?' * len(which.kernels))})"
        args += list(which.kernels)
    if min_runs > 1:
        sql += (" AND cell_key IN (SELECT cell_key FROM results WHERE status = 'ok' AND median_s > 0 "
                "GROUP BY cell_key HAVING COUNT(DISTINCT run_id) >= ?)")
        args.append(int(min_runs))
    series: dict[tuple[str, str, str], Series] = {}
    for values in conn.execute(sql, args):
        row = dict(zip(POINT_COLUMNS, values[:len(POINT_COLUMNS)], strict=True))
        if row["run_id"] not in order:
            continue
        machine = envs.get(row["env_id"]) or machine_of(str(row["env_id"]), None)
        if which.machine and not machine_matches(which.machine, machine, str(row["env_id"])):
            continue
        key = (machine.id, row["cell_key"], str(row["timer_kind"] or ""))
        s = series.get(key)
        if s is None:
            s = series[key] = Series(row["cell_key"], *(str(row[c] or "") for c in (
                "kernel", "variant", "backend", "dtype", "size_label", "mode", "cache", "timer_kind")), machine)
        aa_sigma = twin_sigma(values[-1], values[-2]) if values[-2] is not None else None
        s.points.append(Point(runs[row["run_id"]], float(row["median_s"]),
                              point_sigma(row["noise"], row["rounds"], row["median_precision"], aa_sigma),
                              machine.versions))
    for s in series.values():
        s.points.sort(key=lambda p: order[p.run.run_id])
    return sorted(series.values(), key=lambda s: (s.machine.label, s.kernel, s.label)), runs


def machine_matches(text: str, machine: Machine, env_id: str) -> bool:
    t = text.lower()
    return t in machine.id.lower() or t in machine.label.lower() or t in env_id.lower()


def _since_key(since: str | None, runs: Mapping[str, RunInfo]) -> tuple[str, str] | None:
    """``--since`` as a (created_at, run_id) bound: a run id, or an ISO date or time (UTC unless it says)."""
    if since is None:
        return None
    if since in runs:
        return runs[since].created_at, since
    try:
        t = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--since {since!r} is neither a run id of the store nor a date such as 2026-12-01 "
                         "or 2026-12-01T09:30") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    stamp = t.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")  # as runs
    return stamp, ""


def kernels_in(series: Iterable[Series]) -> list[str]:
    return sorted({s.kernel for s in series})
