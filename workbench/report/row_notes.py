"""Per-row notes of a report: noise, % of ceiling and the ceiling in words, for tables and key findings alike."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def fmt_num(x: Any, digits: int = 3) -> str:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if not math.isfinite(x) else f"{x:.{digits}g}"


def _f(row: Any, col: str) -> float | None:
    v = row.get(col) if hasattr(row, "get") else None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _text(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def exec_cache_text(value: Any) -> str:
    """A block variant's execution-cache statistics (the row's ``exec_cache`` JSON) in words; "" for none."""
    import json

    text = _text(value)
    try:
        s = json.loads(text) if text else None
    except ValueError:
        return ""
    if not isinstance(s, dict):
        return ""
    mode = s.get("mode")
    if mode != s.get("requested"):
        mode = f"{mode} (fell back from {s.get('requested')})"
    return (f"cache: {mode}, recorded in {fmt_num(s.get('record_s'))} s, {s.get('shape_hits')} hits on this shape"
            f" | cache {s.get('size')} shapes: {s.get('hits')} hits, {s.get('misses')} misses, "
            f"{s.get('recordings')} recordings, fusion {s.get('fusion_successes')}/{s.get('fusion_attempts')}, "
            f"{s.get('fallbacks')} fallbacks")


_SHORT_SOURCE = {"measured (workbench peaks)": "peaks", "measured (automatic probe)": "probe",
                 "published": "published"}


def row_notes(df: pd.DataFrame, environments: dict[str, dict[str, Any]] | None = None) -> pd.DataFrame:
    """Per row: ``noisy``, ``noise_note``, ``peak_note`` (old rows: worked out here), ``pct`` (the % of peak
    that matters for the row), ``ceiling`` (the ceiling it was compared with, in words) and ``exec_cache``
    (a block variant's execution-cache statistics, in words)."""
    from ..ceilings import headline_pct, is_compute_bound, is_noisy, llc_of, noise_text, row_peak_note

    out = []
    for _, r in df.iterrows():
        ok = r.get("status") == "ok"
        noisy = ok and is_noisy(r)
        pct = headline_pct(r) if ok else None
        compute = is_compute_bound(r)
        value, unit = (_f(r, "ceiling_gflops"), "GFLOP/s") if compute else (_f(r, "ceiling_gbps"), "GB/s")
        if value is None:
            value, unit = (_f(r, "ceiling_gbps"), "GB/s") if compute else (_f(r, "ceiling_gflops"), "GFLOP/s")
        src = _text(r.get("ceiling_source"))
        short = _SHORT_SOURCE.get(src, src)
        ceiling = f"{fmt_num(value)} {unit} ({short})" if ok and value is not None else ""
        out.append({"noisy": bool(noisy), "noise_note": noise_text(r) if noisy else "",
                    "peak_note": row_peak_note(r, llc_of(environments, r)) if ok else "", "pct": pct,
                    "ceiling": ceiling, "ceiling_source": src if ok and value is not None else "",
                    "exec_cache": exec_cache_text(r.get("exec_cache"))})
    return pd.DataFrame(out, columns=["noisy", "noise_note", "peak_note", "pct", "ceiling", "ceiling_source",
                                      "exec_cache"], index=df.index)
