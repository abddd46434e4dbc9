"""What a row's "% of peak" means in words: which roof it was scored against, and why a value above a roof
is or is not explained.

Shared by the harness (which writes ``ceiling_source`` and ``peak_note`` into rows) and the readers
(reports, plots, the dashboard), which explain rows stored before those columns existed. A rate above the
DRAM roof is explained only by a *measured* cache-level roof of a level that holds the working set; a rate
above the device's top roof (:func:`workbench.roofs.model.above_top_roof`) is implausible and is never explained
away.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from workbench.core.record import RowDict, number_or_none
from workbench.core.units import fmt_bytes, parse_bytes
from workbench.judge import verdicts
from workbench.judge.verdicts import is_noisy  # one noise flag, of a row or a spread; report/ reads it from here
from workbench.roofs.model import (
    AUTO_METHOD_PREFIX,
    AUTO_PROBE,
    MEASURED,
    PUBLISHED,
    RoofKind,
    RoofSet,
    above_top_roof,
    is_probe_workload,
    named_flops_roof,
    split_source,
)

__all__ = ["AUTO_METHOD_PREFIX", "AUTO_PROBE", "MEASURED", "PUBLISHED", "ceiling_suspect", "headline_pct",
           "is_compute_bound", "is_noisy", "llc_in_note", "llc_of", "noise_text", "peak_note", "probe_read_low",
           "refresh_peak_note", "row_peak_note"]


def _above_bandwidth(pct_bw: float, nbytes: float | None, llc_bytes: float | None, bw_src: str | None,
                     roofs: RoofSet | None, row: Mapping[str, Any] | None) -> str:
    """Why a rate is above its bandwidth ceiling: within the measured ceiling of the cache level holding the
    working set (rows scored against DRAM), above it (a suspect ceiling or timing), or, with no cache ceiling
    measured, nothing that explains it."""
    level = roofs.cache_level_for(nbytes) if roofs is not None else None
    row = row if row is not None else {}
    ceiling = number_or_none(row.get("ceiling_gbps")) or (roofs.value(RoofKind.DRAM) if roofs is not None else None)
    gbps = number_or_none(row.get("gbps")) or (pct_bw / 100.0 * ceiling if ceiling else None)
    if gbps and level is not None:
        where = f"its {fmt_bytes(nbytes)} working set fits in the {level.kind.cache}"
        if gbps <= level.value:  # type: ignore[operator]
            return f"{where}, and stays under that level's measured ceiling ({level.value:.3g} GB/s)"
        return (f"{where}, but runs above that level's measured ceiling ({level.value:.3g} GB/s) too: "
                f"{ceiling_suspect(level.source, 'bandwidth')}")
    if nbytes and llc_bytes:
        fits = "fits in" if nbytes <= llc_bytes else "exceeds"
        return (f"working set {fmt_bytes(nbytes)} {fits} the {fmt_bytes(llc_bytes)} last-level cache, but no "
                "cache bandwidth ceiling was measured, so that explains nothing; "
                f"{ceiling_suspect(bw_src, 'bandwidth')}")
    return ceiling_suspect(bw_src, "bandwidth")


def peak_note(pct_bw: float | None, pct_flops: float | None, nbytes: float | None, llc_bytes: float | None,
              bw_src: str | None = None, fl_src: str | None = None, *, roofs: RoofSet | None = None,
              row: Mapping[str, Any] | None = None) -> str | None:
    """Why a percentage of peak is above 100, in words; None when none is and nothing is implausible.

    A result above the device's top roof (``roofs`` and the row's rates: :func:`above_top_roof`) comes
    first, marked implausible; then each roof the row exceeds, with the measured cache-level roof that
    explains it, or the roof itself as the suspect (a short probe, a busy machine, a datasheet figure)."""
    parts = []
    implausible = above_top_roof(row, roofs) if row is not None else None
    if implausible:
        parts.append(implausible)
    if pct_bw is not None and pct_bw > 100.0:
        scored = (roofs.level_of(number_or_none(row.get("ceiling_gbps")))
                  if roofs is not None and row is not None else None)
        which = f" {scored.kind.short}" if scored is not None and scored.kind is not RoofKind.DRAM else ""
        parts.append(f"{pct_bw:.0f}% of the {bw_src or 'measured'}{which} bandwidth ceiling: "
                     f"{_above_bandwidth(pct_bw, nbytes, llc_bytes, bw_src, roofs, row)}")
    if pct_flops is not None and pct_flops > 100.0:
        own = row is not None and is_probe_workload(row, named_flops_roof(row, roofs))
        parts.append(f"{pct_flops:.0f}% of the {fl_src or 'measured'} GFLOP/s ceiling: "
                     + (probe_read_low(pct_flops / 100.0) if own else ceiling_suspect(fl_src, 'GEMM')))
    return "; ".join(parts) or None


def probe_read_low(ratio: float) -> str:
    """Why the probe's own workload (:func:`workbench.roofs.model.is_probe_workload`) reads above the roof it set,
    hedged, with the cell's own ``ratio`` to that roof: the same call timed at another size and moment, so either
    reading may be the odd one. 04 stated "the ceiling was measured low" as fact, quoting a 1.3-1.5x drift measured
    elsewhere beside a 1.17x reading, while the same call read 100.0% of the roof one size down; the report's
    sentences and the roofline's footnote give this one text."""
    times = f"{ratio:.2f}x" if round(ratio, 2) > 1 else f"{ratio:.3f}x"
    return (f"this cell runs the probe's own GEMM (numpy.matmul) and read {times} the rate the probe measured: the "
            "probe, at its own size and moment, may have read low, or this call ran faster here than the probe's "
            "did (a shared host's speed moves between the two); not a call beyond the device either way; "
            "`workbench peaks` on an idle machine measures a steadier ceiling")


def ceiling_suspect(src: str | None, what: str) -> str:
    """Why a roof may be too low, by where it came from."""
    if src == PUBLISHED:
        return "the published figure is for another clock or configuration than this device ran at"
    if src == AUTO_PROBE:
        return (f"the automatic {what} probe is short (a small size, a few samples) and may have run while the "
                "machine was busy; `workbench peaks` measures a better ceiling")
    return (f"the ceiling was measured with a slower {what} kernel or while the machine was busy; re-run "
            "`workbench peaks` on an idle machine")



def noise_text(row: Mapping[str, Any]) -> str:
    """Why a noisy row is flagged, in words ("" for a row that is not)."""
    if not is_noisy(dict(row)):
        return ""
    note = row.get("noise_note")
    if isinstance(note, str) and note.strip():
        return note.strip()
    spread = number_or_none(row.get("noise")) or number_or_none(row.get("rel_spread"))
    return (f"spread {spread:.0%} (IQR / median) above {verdicts.NOISY_SPREAD:.0%}" if spread is not None
            else "noisy")


#: Bounds with no bandwidth or FLOP roof: a row of such a kernel has no % of peak (a scan's serial chain per row
#: is bound by the latency of one dependent step, which neither roof measures).
UNROOFED = ("latency-bound", "none")
_STEPS_IN_NOTE = re.compile(r"latency-bound: ([\d.e+]+) dependent steps a call")


def bound_note(bound: str, steps: float | None, seconds: float | None) -> str:
    """What a row of an unroofed kernel is scored against: for a latency-bound one the time of one step of its
    serial chain (``latency-bound: 1000 dependent steps a call, 2.1 ns a step``); for "none", that it has no
    roof. ``""`` for roofed bounds."""
    if bound == "none":
        return "no roof: the spec declares none, so no % of peak"
    if bound != "latency-bound":
        return ""
    per = f", {seconds / steps * 1e9:.3g} ns a step" if steps and seconds and seconds > 0 else ""
    return (f"latency-bound: {steps:g} dependent steps a call{per} (scored per step of its serial chain; no "
            "bandwidth or FLOP roof applies)")


def is_compute_bound(row: Mapping[str, Any]) -> bool:
    bound = row.get("bound")
    if isinstance(bound, str) and bound:
        return bound == "compute-bound"
    intensity = number_or_none(row.get("intensity"))
    return intensity is not None and intensity > 4.0


def headline_pct(row: Mapping[str, Any]) -> float | None:
    """The % of peak that matters for the row: of the peak FLOP/s roof for compute-bound kernels, of the
    bandwidth roof for memory-bound ones; None when that roof is missing (never the other roof instead)."""
    return number_or_none(row.get("pct_peak_flops" if is_compute_bound(row) else "pct_peak_bw"))


_LLC_IN_NOTE = re.compile(r"(?:fits in|exceeds) the ([\d.]+ [KMGT]?i?B) last-level cache")


def llc_in_note(note: Any) -> float | None:
    """The last-level cache size a peak note names, if it names one."""
    m = _LLC_IN_NOTE.search(note) if isinstance(note, str) else None
    return parse_bytes(m.group(1)) if m else None


def row_peak_note(row: Mapping[str, Any], llc_bytes: float | None = None, roofs: RoofSet | None = None) -> str:
    """The explanation of the row's % of peak above 100, and its implausibility ("" when neither applies),
    worked out from the row's current rates, so it agrees with them even after rounds rescaled them; the
    cache size comes from ``llc_bytes`` or the note stored with the row, the roofs from ``roofs``. Rows
    without percentages keep their stored note."""
    note = row.get("peak_note")
    stored = note.strip() if isinstance(note, str) else ""
    if row.get("bound") in UNROOFED:  # the ns a step follows the row's (possibly rescaled) median
        found = _STEPS_IN_NOTE.search(stored)
        return bound_note(str(row["bound"]), float(found.group(1)) if found else None,
                          number_or_none(row.get("median_s")))
    pct_bw, pct_fl = number_or_none(row.get("pct_peak_bw")), number_or_none(row.get("pct_peak_flops"))
    if pct_bw is None and pct_fl is None:
        implausible = above_top_roof(row, roofs)
        return "; ".join(x for x in (implausible, stored) if x)
    bw_src, fl_src = (x or None for x in split_source(row.get("ceiling_source")))
    llc = llc_bytes if llc_bytes is not None else llc_in_note(stored)
    return peak_note(pct_bw, pct_fl, number_or_none(row.get("bytes")), llc, bw_src, fl_src, roofs=roofs, row=row) or ""


def refresh_peak_note(row: RowDict) -> RowDict:
    """Rewrite ``row["peak_note"]`` to match its percentages (e.g. after merging rounds rescaled them)."""
    row["peak_note"] = row_peak_note(row) or None
    return row


def llc_of(environments: Mapping[str, Any] | None, row: Mapping[str, Any]) -> float | None:
    """The last-level cache of the device a row ran on, from its environment record: the backend's device
    record where it has one, else the host's (CPU backends)."""
    env = (environments or {}).get(str(row.get("env_id"))) or {}
    for b in env.get("backends") or []:
        if isinstance(b, dict) and b.get("name") == row.get("backend"):
            dev = b.get("device") if isinstance(b.get("device"), dict) else b
            if dev.get("last_level_cache_bytes"):
                return float(dev["last_level_cache_bytes"])
    host = env.get("host") if isinstance(env.get("host"), dict) else {}
    device = str(row.get("device") or "").lower()
    cpu_like = row.get("backend") in ("numpy", "numba", "torch-cpu") or "cpu" in device or (
        host.get("cpu_model") and str(host["cpu_model"]).lower() in device)
    return number_or_none(host.get("last_level_cache_bytes")) if cpu_like else None
