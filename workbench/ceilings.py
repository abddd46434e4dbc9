"""Where a "% of peak" came from, and why a value above 100% is not silently wrong.

Shared by the harness (which writes ``ceiling_source`` and ``peak_note`` into
rows) and the readers (reports, plots, the dashboard), which explain rows stored
before those columns existed; it imports nothing from the package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from . import verdicts
from .verdicts import is_noisy  # one noise flag, of a row or a spread; report/ reads it from here

#: ``ceiling_source`` values.
MEASURED = "measured (workbench peaks)"
AUTO_PROBE = "measured (automatic probe)"
PUBLISHED = "published"
#: How an automatic probe's method text starts in the peaks table.
AUTO_METHOD_PREFIX = "automatic probe"


def source_of_method(method: str | None) -> str:
    """``ceiling_source`` for a stored peak's method text."""
    return AUTO_PROBE if str(method or "").startswith(AUTO_METHOD_PREFIX) else MEASURED


def fmt_bytes(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.3g} {unit}"
        b /= 1024
    return f"{b:.3g} GiB"


def peak_note(pct_bw: float | None, pct_flops: float | None, nbytes: float | None, llc_bytes: float | None,
              bw_src: str | None = None, fl_src: str | None = None) -> str | None:
    """Why a percentage of peak is above 100, in words; None when none is.

    A working set (the call's inputs and outputs) that fits in the last-level
    cache is served from the cache, so the DRAM bandwidth ceiling does not bound
    it; otherwise the ceiling itself is the suspect: a short automatic probe, one
    measured while the machine was busy, or a published figure for another clock.
    """
    parts = []
    if pct_bw is not None and pct_bw > 100.0:
        head = f"{pct_bw:.0f}% of the {bw_src or 'measured'} bandwidth ceiling"
        if nbytes and llc_bytes and nbytes <= llc_bytes:
            parts.append(f"{head}: working set {fmt_bytes(nbytes)} fits in the {fmt_bytes(llc_bytes)} last-level "
                         "cache, so it runs above the DRAM ceiling")
        else:
            where = (f"working set {fmt_bytes(nbytes)} exceeds the {fmt_bytes(llc_bytes)} last-level cache; "
                     if nbytes and llc_bytes else "")
            parts.append(f"{head}: {where}{ceiling_suspect(bw_src, 'bandwidth')}")
    if pct_flops is not None and pct_flops > 100.0:
        parts.append(f"{pct_flops:.0f}% of the {fl_src or 'measured'} GFLOP/s ceiling: "
                     f"{ceiling_suspect(fl_src, 'GEMM')}")
    return "; ".join(parts) or None


def ceiling_suspect(src: str | None, what: str) -> str:
    if src == PUBLISHED:
        return "the published figure is for another clock or configuration than this device ran at"
    if src == AUTO_PROBE:
        return (f"the automatic {what} probe is short (a small size, a few samples) and may have run while the "
                "machine was busy; `workbench peaks` measures a better ceiling")
    return (f"the ceiling was measured with a slower {what} kernel or while the machine was busy; re-run "
            "`workbench peaks` on an idle machine")



def _num(v: Any) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def noise_text(row: Mapping[str, Any]) -> str:
    """Why a noisy row is flagged, in words ("" for a row that is not)."""
    if not is_noisy(row):
        return ""
    note = row.get("noise_note")
    if isinstance(note, str) and note.strip():
        return note.strip()
    spread = _num(row.get("noise")) or _num(row.get("rel_spread"))
    return (f"spread {spread:.0%} (IQR / median) above {verdicts.NOISY_SPREAD:.0%}" if spread is not None
            else "noisy")


def is_compute_bound(row: Mapping[str, Any]) -> bool:
    bound = row.get("bound")
    if isinstance(bound, str) and bound:
        return bound == "compute-bound"
    intensity = _num(row.get("intensity"))
    return intensity is not None and intensity > 4.0


def headline_pct(row: Mapping[str, Any]) -> float | None:
    """The % of peak that matters for the row: of the FLOP ceiling for compute-bound kernels, of the
    bandwidth ceiling for memory-bound ones (the other where only that one is known)."""
    bw, fl = _num(row.get("pct_peak_bw")), _num(row.get("pct_peak_flops"))
    first, second = (fl, bw) if is_compute_bound(row) else (bw, fl)
    return first if first is not None else second


_LLC_IN_NOTE = re.compile(r"(?:fits in|exceeds) the ([\d.]+ [KMGT]?i?B) last-level cache")


def parse_bytes(text: str) -> float | None:
    """The inverse of :func:`fmt_bytes` ("3.1 MiB" -> 3250585.6); None when it is not such a text."""
    number, _, unit = text.strip().partition(" ")
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}.get(unit)
    try:
        return float(number) * scale if scale else None
    except ValueError:
        return None


def llc_in_note(note: Any) -> float | None:
    """The last-level cache size a peak note names, if it names one."""
    m = _LLC_IN_NOTE.search(note) if isinstance(note, str) else None
    return parse_bytes(m.group(1)) if m else None


def row_peak_note(row: Mapping[str, Any], llc_bytes: float | None = None) -> str:
    """The explanation of the row's % of peak above 100 ("" when none is), worked out from the row's
    current percentages, so it agrees with them even after rounds rescaled them; the cache size comes
    from ``llc_bytes`` or the note stored with the row. Rows without percentages keep their stored note."""
    note = row.get("peak_note")
    stored = note.strip() if isinstance(note, str) else ""
    pct_bw, pct_fl = _num(row.get("pct_peak_bw")), _num(row.get("pct_peak_flops"))
    if pct_bw is None and pct_fl is None:
        return stored
    src = row.get("ceiling_source") if isinstance(row.get("ceiling_source"), str) else None
    bw_src = fl_src = src
    if src and " for GB/s, " in src:
        bw_src, fl_src = src.replace(" for GFLOP/s", "").split(" for GB/s, ")
    llc = llc_bytes if llc_bytes is not None else llc_in_note(stored)
    return peak_note(pct_bw, pct_fl, _num(row.get("bytes")), llc, bw_src, fl_src) or ""


def refresh_peak_note(row: dict[str, Any]) -> dict[str, Any]:
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
    return _num(host.get("last_level_cache_bytes")) if cpu_like else None
