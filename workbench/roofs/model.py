"""Roofs: the typed limits a measurement is judged against, one set per physical device.

"Roof" is the one word for the idea in code and prose (the stored columns keep their schema names
``ceiling_gbps`` / ``ceiling_gflops`` / ``ceiling_source``). A device has one DRAM bandwidth, one
bandwidth per cache level and one peak FLOP/s per dtype, whatever runtime ran on it: numpy, numba,
torch-cpu, OpenCL on PoCL, Vulkan on lavapipe and the Triton interpreter all share the CPU's roofs.

:func:`resolve_roofs` is the one place that finds the roofs of rows (stored probe, then the rows' own
roofs, then a datasheet figure); plots, tables and "% of peak" all use it. :func:`above_top_roof` is the
one test for a result no roof allows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from workbench.core.datasets import published_peak
from workbench.core.dtypes import reduced_float32_flags
from workbench.core.record import JsonObject, RowDict
from workbench.core.units import fmt_rate

#: The names ``workbench.roofs`` keeps from when it was this one module.
__all__ = [
    "AUTO_METHOD_PREFIX", "AUTO_PROBE", "BANDWIDTH_MARGIN", "CACHE_LEVELS", "FLOPS_MARGIN", "KIND_OF_METRIC",
    "PROBED_FLOPS_MARGIN", "flops_margin",
    "MEASURED", "PUBLISHED", "Roof", "RoofKey", "RoofKind", "RoofSet", "SHORT_SOURCE", "above_top_roof",
    "flops_roof_of", "is_probe_workload", "named_flops_roof", "resolve_roofs", "roof_set_from_table",
    "roofs_of_row", "source_of_method", "split_source",
]

if TYPE_CHECKING:  # pandas loads in the functions that read tables: the harness and worker processes need none
    import pandas as pd

#: Where a roof came from (the values of the stored ``ceiling_source`` column).
MEASURED = "measured (workbench peaks)"
AUTO_PROBE = "measured (automatic probe)"
PUBLISHED = "published"
#: How an automatic probe's method text starts in the peaks table.
AUTO_METHOD_PREFIX = "automatic probe"

#: A bandwidth above the L1 roof by more than this factor is implausible. The L1 roof is a STREAM triad (two
#: loads, one store per element); a read-only kernel (a sum, a dot) can use both load ports with no store and
#: so move up to ~1.33x the triad's bytes per cycle: anything past 1.5x no cache can serve.
BANDWIDTH_MARGIN = 1.5
#: A FLOP rate above the peak GEMM rate by more than this is implausible (GEMM from BLAS is the compute roof;
#: 10% covers the probe's own timing spread).
FLOPS_MARGIN = 1.1
#: The same for a roof the automatic probe took: a few 20 ms BLAS calls at one size, a lower bound of what the
#: cores do rather than their peak. Measured: numba's tiled GEMM at 512^3 ran at 143-154 GFLOP/s, 1.1-1.2x a
#: 128 GFLOP/s probe on a 2-core AVX-512 EPYC (2.6 GHz: 166 GFLOP/s with one FMA unit a core), and was refused as
#: implausible; a tuner's confirmation then had nothing to compare.
PROBED_FLOPS_MARGIN = 1.5


def flops_margin(source: str | None) -> float:
    """How far above a FLOP roof of this source (``ceiling_source``) a rate is still plausible."""
    return PROBED_FLOPS_MARGIN if source == AUTO_PROBE else FLOPS_MARGIN


class RoofKind(str, Enum):
    """What a roof limits, with the peaks-table ``metric`` that stores it."""

    DRAM = "DRAM bandwidth"
    LLC = "last-level cache bandwidth"
    L2 = "L2 bandwidth"
    L1 = "L1 bandwidth"
    FLOPS = "peak FLOP/s"

    @property
    def metric(self) -> str:
        return _METRICS[self]

    @property
    def unit(self) -> str:
        return "GFLOP/s" if self is RoofKind.FLOPS else "GB/s"

    @property
    def cache(self) -> str:
        """The memory level in words ("L2 cache", "last-level cache", "DRAM")."""
        return {RoofKind.LLC: "last-level cache", RoofKind.L2: "L2 cache", RoofKind.L1: "L1 cache"}.get(self, "DRAM")

    @property
    def short(self) -> str:
        """The roof's label in a table ("L2 112 GB/s", "ceiling 105 GFLOP/s"): the FLOP/s roof is a measured
        ceiling, often the BLAS library's rate from a short probe, not the hardware's peak (04 labelled it "peak")."""
        return {RoofKind.DRAM: "DRAM", RoofKind.LLC: "LLC", RoofKind.L2: "L2", RoofKind.L1: "L1",
                RoofKind.FLOPS: "ceiling"}[self]


_METRICS = {RoofKind.DRAM: "bandwidth_gbps", RoofKind.LLC: "llc_bandwidth_gbps", RoofKind.L2: "l2_bandwidth_gbps",
            RoofKind.L1: "l1_bandwidth_gbps", RoofKind.FLOPS: "gflops"}
KIND_OF_METRIC = {m: k for k, m in _METRICS.items()}
#: Cache levels, innermost first.
CACHE_LEVELS = (RoofKind.L1, RoofKind.L2, RoofKind.LLC)


@dataclass(frozen=True)
class Roof:
    """One limit of one device: a value with its unit and how it was found, or the reason it is missing.

    ``working_set_bytes`` (cache levels) is the largest working set the level holds, from the cache size
    the probe queried; ``dtype`` is set for FLOP/s roofs only."""

    device: str
    kind: RoofKind
    value: float | None
    source: str
    method: str = ""
    dtype: str | None = None
    working_set_bytes: float | None = None
    missing: str | None = None

    @property
    def unit(self) -> str:
        return self.kind.unit

    @property
    def known(self) -> bool:
        return self.value is not None and math.isfinite(self.value) and self.value > 0

    def text(self) -> str:
        """"L2 bandwidth 210 GB/s (probe)", or "DRAM bandwidth: none (probe refused: ...)" — never "None GB/s"."""
        what = self.kind.value + (f" {self.dtype}" if self.dtype else "")
        if not self.known:
            return f"{what}: none ({self.missing or 'not measured'})"
        return f"{what} {fmt_rate(self.value, self.unit)} ({SHORT_SOURCE.get(self.source, self.source)})"


SHORT_SOURCE = {MEASURED: "peaks", AUTO_PROBE: "probe", PUBLISHED: "published"}


@dataclass
class RoofSet:
    """Every roof of one physical device, as measured (or published) in one environment."""

    device: str
    roofs: list[Roof] = field(default_factory=list)

    def get(self, kind: RoofKind, dtype: str | None = None) -> Roof | None:
        for r in self.roofs:
            if r.kind is kind and (kind is not RoofKind.FLOPS or r.dtype == dtype):
                return r
        return None

    def value(self, kind: RoofKind, dtype: str | None = None) -> float | None:
        r = self.get(kind, dtype)
        return r.value if r is not None and r.known else None

    def for_row(self, bound: str, dtype: str) -> Roof:
        """The roof a row is scored against: DRAM bandwidth for memory-bound kernels (always: a missing
        bandwidth roof leaves % of peak empty, never a FLOP/s roof instead), peak FLOP/s of the row's dtype
        for compute-bound ones."""
        kind = RoofKind.FLOPS if bound == "compute-bound" else RoofKind.DRAM
        found = self.get(kind, dtype)
        if found is not None:
            return found
        what = f"no {kind.value}{' ' + dtype if kind is RoofKind.FLOPS else ''} roof measured for this device"
        return Roof(self.device, kind, None, "", dtype=dtype if kind is RoofKind.FLOPS else None,
                    missing=what if self.roofs else f"{what}: {why_no_roofs()}")

    def cache_level_for(self, nbytes: float | None) -> Roof | None:
        """The innermost cache level with a measured bandwidth whose capacity holds ``nbytes``: the roof of a
        memory-bound call whose data stays in cache between calls (None: only DRAM holds it)."""
        if not nbytes:
            return None
        for kind in CACHE_LEVELS:
            r = self.get(kind)
            if r is not None and r.known and r.working_set_bytes and nbytes <= r.working_set_bytes:
                return r
        return None

    def level_of(self, gbps: float | None) -> Roof | None:
        """The bandwidth roof whose value is ``gbps`` (which level a row was scored against), if any."""
        for r in self.roofs:
            if r.kind is not RoofKind.FLOPS and r.known and gbps and math.isclose(r.value, gbps, rel_tol=1e-6):  # type: ignore[arg-type]
                return r
        return None

    def top_bandwidth(self) -> Roof | None:
        """The L1 roof: no data moves faster on this device."""
        r = self.get(RoofKind.L1)
        return r if r is not None and r.known else None


def flops_roof_of(row: Mapping[str, Any], roofs: RoofSet) -> Roof | None:
    """The FLOP roof a row's rate is bounded by: its dtype's, except a float32 row run with TF32 allowed (its
    ``precision`` settings), which a GEMM can run at the TF32 tensor-core rate: the datasheet's TF32 figure
    for the device, or None (no roof known, so nobody can call it impossible)."""
    dtype = str(row.get("dtype"))
    if dtype == "float32" and reduced_float32_flags(row.get("precision")):
        tf32, _ = published_peak(roofs.device, "tf32")
        if not tf32:
            return None
        return Roof(roofs.device, RoofKind.FLOPS, float(tf32), PUBLISHED, "datasheet TF32 rate (TF32 allowed)", dtype)
    return roofs.get(RoofKind.FLOPS, dtype)


#: What the automatic probe and ``workbench peaks`` time for a CPU's FLOP roof: numpy's matmul (BLAS).
PROBE_WORKLOAD = ("gemm", "numpy")


def is_probe_workload(row: Mapping[str, Any], roof: Roof | None) -> bool:
    """Whether the row runs the very call its measured FLOP roof was probed with (numpy's matmul against a GEMM
    roof timed with ``numpy.matmul``): above that roof the probe read low or the call ran faster than at the probe's
    size and moment (:func:`workbench.roofs.ceilings.probe_read_low`), never the call beyond the device."""
    if roof is None or roof.source == PUBLISHED:
        return False
    return (str(row.get("kernel")), str(row.get("backend"))) == PROBE_WORKLOAD and "datasheet" not in roof.method


def named_flops_roof(row: Mapping[str, Any], roofs: RoofSet | None) -> Roof | None:
    """The FLOP roof a row is judged against: the one the row names (``ceiling_gflops`` with its source, what its
    table prints and its % of peak used), else the roof set's (:func:`flops_roof_of`). 04 marked numpy's GEMM
    implausible against a 105 GFLOP/s roof from the roof set beside a row naming 126 GFLOP/s: two roofs, one cell.
    A float32 row run with TF32 allowed keeps the TF32 datasheet rate (its row names the float32 roof)."""
    dtype = str(row.get("dtype"))
    if dtype == "float32" and reduced_float32_flags(row.get("precision")):
        return flops_roof_of(row, roofs if roofs is not None else RoofSet(str(row.get("device") or "")))
    named = _num(row.get("ceiling_gflops"))
    if named is None:
        return flops_roof_of(row, roofs) if roofs is not None else None
    src = split_source(row.get("ceiling_source"))[1] or MEASURED
    same = roofs.get(RoofKind.FLOPS, dtype) if roofs is not None else None
    method = same.method if same is not None and same.known and math.isclose(same.value, named, rel_tol=1e-6) else ""  # type: ignore[arg-type]
    return Roof(roofs.device if roofs is not None else str(row.get("device") or ""), RoofKind.FLOPS, named, src,
                method or "the ceiling the row names", dtype)


def _times(ratio: float, margin: float) -> str:
    """A ratio to a roof with one decimal, or two where one would print it on the margin it passed ("1.5x" read as
    within a 1.5x margin)."""
    return f"{ratio:.1f}x" if round(ratio, 1) != round(margin, 1) else f"{ratio:.2f}x"


def above_top_roof(row: Mapping[str, Any], roofs: RoofSet | None) -> str | None:
    """Why a row's rate is more than any roof of its device allows, or None when it is within them (or no
    top roof is known, so nobody can tell). The one implausibility test: callers decide the row's status.

    The rates are the row's own (``gbps``/``gflops``: of its median time, the one its table prints; a merged
    row's median of round medians). Bandwidth is checked against the L1 roof of ``roofs`` (times
    :data:`BANDWIDTH_MARGIN`), FLOP/s against the roof the row names (:func:`named_flops_roof`, times
    :func:`flops_margin`: wider for a probed roof), whatever the kernel's bound: nothing explains a result above
    the fastest level of the device away. The probe's own workload above its roof is the probe reading low
    (:func:`is_probe_workload`), never implausible."""
    reasons = []
    gbps, gflops = _num(row.get("gbps")), _num(row.get("gflops"))
    top = roofs.top_bandwidth() if roofs is not None else None
    if gbps is not None and top is not None and gbps > top.value * BANDWIDTH_MARGIN:  # type: ignore[operator]
        times = _times(gbps / top.value, BANDWIDTH_MARGIN)  # type: ignore[operator]
        reasons.append(f"its median {gbps:.3g} GB/s is {times} the L1 bandwidth roof "
                       f"({top.value:.3g} GB/s, {top.method or top.source}), the fastest any data moves on "
                       f"{roofs.device}")  # type: ignore[union-attr]
    peak = named_flops_roof(row, roofs)
    limit = peak.value * flops_margin(peak.source) if peak is not None and peak.known else None  # type: ignore[operator]
    if gflops is not None and limit is not None and gflops > limit and not is_probe_workload(row, peak):
        times = _times(gflops / peak.value, flops_margin(peak.source))  # type: ignore[operator, union-attr]
        reasons.append(f"its median {gflops:.3g} GFLOP/s is {times} the peak FLOP/s roof "
                       f"({peak.value:.3g} GFLOP/s {peak.dtype}, {peak.method or peak.source})")  # type: ignore[union-attr]
    if not reasons:
        return None
    return "implausible: " + "; ".join(reasons) + (": the timing, the work counted or the result is wrong, and "
                                                   "no cache explains it")


# -- resolving the roofs of rows ------------------------------------------------------------------

def split_source(source: str | None) -> tuple[str, str]:
    """(bandwidth source, FLOP/s source) of a row's ``ceiling_source``: one text for both, or the two that
    :func:`workbench.roofs.throughput.combined_source` joined ("X for GB/s, Y for GFLOP/s")."""
    src = source if isinstance(source, str) else ""
    if " for GB/s, " not in src:
        return src, src
    bw, fl = src.replace(" for GFLOP/s", "").split(" for GB/s, ")
    return bw, fl


def source_of_method(method: str | None) -> str:
    """``ceiling_source`` for a stored roof's method text."""
    return AUTO_PROBE if str(method or "").startswith(AUTO_METHOD_PREFIX) else MEASURED


def _num(v: Any) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def _details(v: Any) -> JsonObject:
    """A peak's ``details``: as stored (JSON text) or as read back (a dict); {} for anything else."""
    if isinstance(v, dict):
        return v
    if isinstance(v, str) and v.strip():
        import json

        try:
            d = json.loads(v)
        except ValueError:
            return {}
        return d if isinstance(d, dict) else {}
    return {}


def why_no_roofs() -> str:
    """Why a device has no roofs at all, as this process's switch says: the automatic probe was off (a quick
    tutorial run turns it off to save its seconds) or it ran and kept nothing (refused on a busy machine)."""
    from workbench.core.env_values import env_flag

    try:
        on = env_flag("WORKBENCH_AUTO_PEAKS", True)
    except ValueError:
        on = True
    if not on:
        return ("the automatic probe is off here (WORKBENCH_AUTO_PEAKS=0, as a quick tutorial run sets it) and no "
                "earlier probe was kept; `workbench peaks` measures them")
    return ("the automatic probe kept none (refused on a busy machine, or it failed: the log says which); "
            "`workbench peaks` measures them and says why")


def roof_set_from_table(table: pd.DataFrame | list[RowDict], device: str) -> RoofSet:
    """The roofs in a slice of the store's peaks table (long form: metric, dtype, value, method, details), as a
    frame or as its rows. Bandwidth probed in any dtype bounds every dtype: the best one counts."""
    out = RoofSet(device)
    best: dict[tuple[RoofKind, str | None], Roof] = {}
    for r in table.to_dict("records") if hasattr(table, "to_dict") else table:
        kind = KIND_OF_METRIC.get(str(r.get("metric")))
        value = _num(r.get("value"))
        if kind is None or value is None:
            continue
        details = _details(r.get("details"))
        dtype = str(r.get("dtype")) if kind is RoofKind.FLOPS else None
        method = str(r.get("method") or "")
        roof = Roof(str(details.get("device") or device), kind, value, source_of_method(method), method, dtype,
                    _num(details.get("working_set_bytes")))
        key = (kind, dtype)
        if key not in best or value > (best[key].value or 0):
            best[key] = roof
    out.roofs = list(best.values())
    if out.roofs:
        out.device = out.roofs[0].device
    return out


def _wide_table(peaks: pd.DataFrame) -> pd.DataFrame:
    """A wide peaks table (columns gbps / gflops, as older callers pass) in the store's long form."""
    import pandas as pd

    rows = []
    for r in peaks.to_dict("records"):
        for col, metric in (("gbps", "bandwidth_gbps"), ("gflops", "gflops")):
            if _num(r.get(col)) is not None:
                rows.append({"env_id": r.get("env_id"), "backend": r.get("backend"), "metric": metric,
                             "dtype": r.get("dtype"), "value": r.get(col), "method": r.get("method", ""),
                             "details": {"device": r.get("device")} if r.get("device") else {}})
    return pd.DataFrame(rows, columns=["env_id", "backend", "metric", "dtype", "value", "method", "details"])


#: The ``method`` of a roof known only as the ceiling the rows were scored against: its level is not known.
ROWS_METHOD = "as the rows were scored"


def _rows_roof_set(rows: pd.DataFrame, device: str) -> RoofSet:
    """The roofs the rows themselves were scored against (``ceiling_gbps`` / ``ceiling_gflops``)."""
    import pandas as pd

    out = RoofSet(device)
    src = next((str(s) for s in rows.get("ceiling_source", pd.Series(dtype=object)).dropna() if s), "")
    bw_src, fl_src = split_source(src)
    bw = pd.to_numeric(rows.get("ceiling_gbps", pd.Series(dtype=float)), errors="coerce").max()
    if _num(bw) is not None:
        out.roofs.append(Roof(device, RoofKind.DRAM, float(bw), bw_src or "rows", ROWS_METHOD))
    if "ceiling_gflops" in rows:
        for dtype, g in rows.groupby("dtype"):
            fl = pd.to_numeric(g["ceiling_gflops"], errors="coerce").max()
            if _num(fl) is not None:
                out.roofs.append(Roof(device, RoofKind.FLOPS, float(fl), fl_src or "rows",
                                      ROWS_METHOD, str(dtype)))
    return out


def _published_roof_set(device: str, dtypes: Iterable[str]) -> RoofSet:
    out = RoofSet(device)
    for dtype in dtypes:
        gflops, gbps = published_peak(device, str(dtype))
        if gbps and out.get(RoofKind.DRAM) is None:
            out.roofs.append(Roof(device, RoofKind.DRAM, float(gbps), PUBLISHED, "datasheet"))
        if gflops:
            out.roofs.append(Roof(device, RoofKind.FLOPS, float(gflops), PUBLISHED, "datasheet", str(dtype)))
    return out


#: Key of a roof set in :func:`resolve_roofs`: (env_id, backend) of the rows it bounds.
RoofKey = tuple[str, str]


def resolve_roofs(rows: pd.DataFrame, peaks: pd.DataFrame | None = None, *, published: bool = True
                  ) -> dict[RoofKey, RoofSet]:
    """The roofs of every (environment, backend) in ``rows``, typed, found in this order: the store's peaks
    table (``workbench peaks`` or the automatic probe; every runtime on one device holds the same copy), the
    roofs the rows were scored against, the published figures for the rows' device. A backend with none of
    these gets an empty set (its rows then say "no roof").

    Rows of other environments' peaks are not used unless the rows carry no ``env_id``."""
    import pandas as pd

    from workbench.core.frames import take_rows

    out: dict[RoofKey, RoofSet] = {}
    if rows is None or rows.empty or "backend" not in rows:
        return out
    table = peaks if peaks is not None else pd.DataFrame()
    if len(table) and "metric" not in table:
        table = _wide_table(table)
    env_col = rows["env_id"] if "env_id" in rows else pd.Series("", index=rows.index)
    keys = pd.DataFrame({"env": env_col.fillna("").astype(str), "backend": rows["backend"].astype(str)})
    groups = sorted(keys.groupby(["env", "backend"], sort=False).indices.items(), key=lambda kv: kv[1][0])
    for (env_id, backend), positions in groups:  # in order of first appearance
        g = take_rows(rows, positions)  # empty columns stay shared (a copy of each was 8 MB per 1M rows)
        device = str(g["device"].dropna().iloc[0]) if "device" in g and g["device"].notna().any() else backend
        found = RoofSet(device)
        if len(table) and "backend" in table:
            mine = table[table["backend"].astype(str) == backend]
            if env_id and "env_id" in mine and mine["env_id"].notna().any():
                mine = mine[mine["env_id"].astype(str) == env_id]
            found = roof_set_from_table(mine, device)
        if not found.roofs:
            found = _rows_roof_set(g, device)
        if not found.roofs and published and "dtype" in g:
            found = _published_roof_set(device, dict.fromkeys(g["dtype"].dropna().astype(str)))
        out[(env_id, backend)] = found
    return out


def roofs_of_row(roofs: Mapping[RoofKey, RoofSet], row: Mapping[str, Any]) -> RoofSet | None:
    env = row.get("env_id")
    env = "" if env is None or (isinstance(env, float) and math.isnan(env)) else str(env)
    return roofs.get((env, str(row.get("backend"))))
