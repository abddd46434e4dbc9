"""Figures from tidy measurement rows: time, throughput, speed-up, roofline, memory.

Every function takes rows shaped like ``docs/measurement-record.md`` and returns
a :class:`matplotlib.figure.Figure` built without pyplot, so nothing is shown,
no global figure list grows while a report renders dozens of plots, and it
works headless and from the dashboard's worker thread (PNG output goes through
Agg). Rows whose status is not ``ok`` never become points; they are listed
under the axes so a missing line is never a silent one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatterSciNotation, LogLocator, NullFormatter

#: Metric names (and friendly aliases) -> contract column or derived quantity.
METRIC_ALIASES: dict[str, str] = {
    "time": "median_s", "median_s": "median_s", "s": "median_s",
    "gb/s": "gbps", "gbps": "gbps", "bandwidth": "gbps",
    "gflop/s": "gflops", "gflops": "gflops",
    "% of peak": "pct_peak_bw", "pct_peak_bw": "pct_peak_bw", "pct_peak_flops": "pct_peak_flops",
    "pct_published": "pct_published",
    "speed-up": "speedup", "speedup": "speedup",
    "memory": "peak_mem_bytes", "peak_mem_bytes": "peak_mem_bytes",
}
METRIC_LABELS: dict[str, str] = {
    "median_s": "time per call (s, median)", "gbps": "GB/s", "gflops": "GFLOP/s",
    "pct_peak_bw": "% of measured peak bandwidth", "pct_peak_flops": "% of measured peak FLOP/s",
    "pct_published": "% of published peak", "speedup": "speed-up vs baseline (x)",
    "peak_mem_bytes": "peak memory",
}
#: Metrics that are (something) / median time: their quartile band is value * median / q3 .. / q1.
INVERSE_TIME = {"gbps", "gflops", "pct_peak_bw", "pct_peak_flops", "pct_published"}
MAX_LISTED = 8
ROOF_COLORS = ("#222", "#7a1f5c", "#1f5c7a", "#5c7a1f")


def resolve_metric(metric: str) -> str:
    key = METRIC_ALIASES.get(str(metric).strip().lower())
    if key is None:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(sorted(set(METRIC_ALIASES)))}")
    return key


# -- helpers ----------------------------------------------------------------------------------

def new_figure(n_axes: int = 1, width: float = 6.4, height: float = 4.0) -> tuple[Figure, list[Axes]]:
    cols = 1 if n_axes == 1 else 2
    rows = (n_axes + cols - 1) // cols
    fig = Figure(figsize=(width * cols, height * rows))  # fixed margins (see finish): layout engines cost 2-3x
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(n_axes)]
    return fig, axes


def split_ok(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows that can be plotted, rows that cannot and must be listed)."""
    if "status" not in df:
        return df, df.iloc[0:0]
    ok = df["status"] == "ok"
    return df[ok], df[~ok]


def series_columns(df: pd.DataFrame) -> list[str]:
    """Columns that tell lines apart: variant and backend, plus whatever else varies here."""
    cols = ["variant", "backend"]
    for extra in ("dtype", "cache", "run_id", "device"):
        if extra in df and df[extra].nunique(dropna=False) > 1:
            cols.append(extra)
    return cols


def series_label(key: Any, cols: list[str]) -> str:
    key = key if isinstance(key, tuple) else (key,)
    d = dict(zip(cols, key, strict=True))
    label = f"{d.get('variant')} @ {d.get('backend')}"
    extras = [str(d[c]) for c in cols[2:]]
    return label + (f" ({', '.join(extras)})" if extras else "")


def _sorted_numeric(g: pd.DataFrame, col: str) -> pd.DataFrame:
    g = g.copy()
    g[col] = pd.to_numeric(g[col], errors="coerce")
    return g.sort_values("size")


def _log_if_wide(ax: Axes, x: Iterable[float], y: Iterable[float] | None = None) -> None:
    """Log axes where values span a wide range (sizes are usually swept geometrically: x from 4x on)."""
    for values, setter, ratio in ((x, ax.set_xscale, 4), (y, ax.set_yscale, 20)):
        if values is None:
            continue
        v = np.asarray([f for f in values if f is not None and np.isfinite(f) and f > 0], float)
        if len(v) and v.max() / v.min() > ratio:
            setter("log")
            if v.max() / v.min() < 300:  # under ~2.5 decades: label 1-2-5 steps, not every minor tick
                axis = ax.xaxis if setter == ax.set_xscale else ax.yaxis
                axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.set_major_formatter(LogFormatterSciNotation(labelOnlyBase=False))
                axis.set_minor_formatter(NullFormatter())


def _short_method(method: str) -> str:
    """The head of a memory-method description ("tracemalloc (python + numpy ...)" -> "tracemalloc")."""
    if method.startswith("inputs+outputs") and " by " in method:  # the harness's prefix: name the method
        method = method.split(" by ", 1)[1]
    head = method.split("(")[0].split(";")[0].strip()
    return head[:40] or method[:40]


def _bytes_unit(values: pd.Series) -> tuple[str, float]:
    """The binary unit that keeps the largest value readable, and its size in bytes."""
    top = float(pd.to_numeric(values, errors="coerce").max() or 0)
    unit, scale = "B", 1.0
    for u in ("KiB", "MiB", "GiB", "TiB"):
        if top >= scale * 1024:
            unit, scale = u, scale * 1024
    return unit, scale


def finish(fig: Figure, bad: pd.DataFrame, layout: bool = True, notes: list[str] | None = None) -> Figure:
    """List the rows left out of the figure (status and reason) under the axes, and set the margins.

    ``notes`` (e.g. why points sit above a roofline) go under the axes first, in dark orange.
    ``layout`` False leaves the size and margins of a figure the caller made (``ax=`` given) alone.
    """
    lines = [f"{r.get('kernel')}: {r.get('variant')} @ {r.get('backend')} {r.get('size_label') or ''} "
             f"— {r.get('status')}: {str(r.get('message') or '')[:70]}" for _, r in bad.head(MAX_LISTED).iterrows()]
    if len(bad) > MAX_LISTED:
        lines.append(f"... and {len(bad) - MAX_LISTED} more")
    notes = list(notes or [])
    w, h = fig.get_size_inches()
    line_h = 0.13
    bad_h = line_h * (len(lines) + 1) if lines else 0.0
    notes_h = line_h * (len(notes) + 0.5) if notes else 0.0
    note_h = bad_h + notes_h
    if not layout:
        if lines:
            fig.text(0.01, 0.01, "not plotted: " + "\n".join(lines), fontsize=7, color="#a33", va="bottom")
        if notes:
            fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", va="bottom")
        return fig
    if note_h:
        fig.set_size_inches(w, h + note_h)
        h += note_h
    if lines:
        fig.supxlabel("not plotted: " + "\n".join(lines), fontsize=7, color="#a33", ha="left", x=0.01, y=0.01,
                      va="bottom")
    if notes:
        fig.text(0.01, 0.01 + bad_h / h, "\n".join(notes), fontsize=7, color="#8a4b00", ha="left", va="bottom")
    # margins in inches, so panels keep their size whatever the note adds
    fig.subplots_adjust(left=0.85 / w, right=1 - 0.15 / w,
                        top=1 - 0.35 / h, bottom=(0.55 + note_h) / h, wspace=0.25, hspace=0.45)
    return fig


def noisy_mask(df: pd.DataFrame) -> np.ndarray:
    """Which rows are noisy: their ``noisy`` flag, or (rows stored before it) relative spread above 10%."""
    from ..ceilings import is_noisy

    return np.array([is_noisy(r) for _, r in df.iterrows()], dtype=bool) if len(df) else np.zeros(0, bool)


def _mark_noisy(ax: Axes, x: Any, y: Any, color: Any, size: float = 7.0) -> None:
    """Hollow rings over noisy points (white inside, the series colour around)."""
    ax.plot(x, y, ls="none", marker="o", ms=size, mfc="white", mec=color, mew=1.3, zorder=4)


def _noisy_legend(ax: Axes, n: int) -> None:
    if n:
        ax.plot([], [], ls="none", marker="o", ms=6, mfc="white", mec="#555", mew=1.3,
                label=f"hollow: noisy cell ({n})")


def _kernels(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["kernel"])) if "kernel" in df and len(df) else [""]


def _for_kernel(df: pd.DataFrame, kernel: str) -> pd.DataFrame:
    return df[df["kernel"] == kernel] if kernel and "kernel" in df else df


# -- line plots against size ------------------------------------------------------------------

def plot_metric(df: pd.DataFrame, metric: str = "median_s", *, baseline: Any = None, ax: Axes | None = None,
                title: str | None = None, bands: bool = True) -> Figure:
    """One line per variant/backend of ``metric`` against size, one panel per kernel.

    ``metric`` is a column (``median_s``, ``gbps``, ``gflops``, ``pct_peak_bw`` ...)
    or an alias (``time``, ``GB/s``, ``% of peak``); ``speedup`` draws speed-ups
    against ``baseline`` with confidence intervals instead.
    """
    metric = resolve_metric(metric)
    if metric == "speedup":
        return plot_speedup(df, baseline=baseline, ax=ax, title=title)
    if metric == "peak_mem_bytes":
        return plot_memory(df, ax=ax, title=title)
    ok, bad = split_ok(df)
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        _draw_metric(a, _for_kernel(ok, kernel), metric, bands)
        a.set_title(title or (f"{kernel}: {METRIC_LABELS[metric]}" if kernel else METRIC_LABELS[metric]))
    return finish(fig, bad, layout=ax is None)


def _draw_metric(ax: Axes, ok: pd.DataFrame, metric: str, bands: bool) -> None:
    ax.set_xlabel("size (product of the size parameters)")
    ax.set_ylabel(METRIC_LABELS[metric])
    if ok.empty or metric not in ok or ok[metric].isna().all():
        ax.text(0.5, 0.5, f"no {metric} values", ha="center", va="center", transform=ax.transAxes)
        return
    cols = series_columns(ok)
    n_noisy = 0
    for key, g in ok.groupby(cols, sort=True, dropna=False):
        g = _sorted_numeric(g, metric).dropna(subset=[metric])
        if g.empty:
            continue
        (line,) = ax.plot(g["size"], g[metric], marker="o", ms=3, label=series_label(key, cols))
        band = quartile_band(g, metric) if bands else None
        if band is not None:
            ax.fill_between(g["size"], band[0], band[1], color=line.get_color(), alpha=0.2, linewidth=0)
        noisy = noisy_mask(g)
        if noisy.any():
            _mark_noisy(ax, g["size"][noisy], g[metric][noisy], line.get_color())
            n_noisy += int(noisy.sum())
    _noisy_legend(ax, n_noisy)
    _log_if_wide(ax, ok["size"], ok[metric] if not metric.startswith("pct") else None)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def quartile_band(g: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Lower/upper edge of the interquartile band of ``metric`` (None when quartiles are unknown)."""
    if not {"q1_s", "q3_s", "median_s"} <= set(g.columns):
        return None
    q1, q3, med = (pd.to_numeric(g[c], errors="coerce").to_numpy(float) for c in ("q1_s", "q3_s", "median_s"))
    if np.isnan(q1).all() or np.isnan(q3).all():
        return None
    if metric == "median_s":
        return q1, q3
    if metric in INVERSE_TIME:
        v = g[metric].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return v * med / q3, v * med / q1
    return None


def plot_time(df: pd.DataFrame, **kw: Any) -> Figure:
    """Median time per call against size, with the q1–q3 band."""
    return plot_metric(df, "median_s", **kw)


def plot_throughput(df: pd.DataFrame, metric: str = "gbps", **kw: Any) -> Figure:
    """Throughput (GB/s, GFLOP/s or % of peak) against size, with the quartile band."""
    return plot_metric(df, metric, **kw)


# -- speed-up ---------------------------------------------------------------------------------

def parse_baseline(baseline: Any) -> tuple[str | None, str | None]:
    """(variant, backend) from None, "variant", "variant @ backend" or {"variant": .., "backend": ..}."""
    if baseline is None:
        return None, None
    if isinstance(baseline, Mapping):
        return baseline.get("variant") or None, baseline.get("backend") or None
    if isinstance(baseline, (tuple, list)):
        return (baseline[0] or None), (baseline[1] if len(baseline) > 1 else None) or None
    variant, _, backend = str(baseline).partition(" @ ")
    return variant.strip() or None, backend.strip() or None


def plot_speedup(df: pd.DataFrame, baseline: Any = None, *, ax: Axes | None = None, title: str | None = None,
                 table: pd.DataFrame | None = None) -> Figure:
    """Speed-up of each variant over a baseline against size; error bars are 95% intervals from the rounds.

    ``baseline`` defaults to each kernel's library variant (see
    :func:`workbench.stats_compare.speedup_vs_baseline`); ``table`` takes an
    already computed speed-up table.
    """
    from ..stats_compare import speedup_vs_baseline

    ok, bad = split_ok(df)
    if table is None:
        variant, backend = parse_baseline(baseline)
        table = speedup_vs_baseline(ok, baseline_variant=variant, baseline_backend=backend) if len(ok) else None
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        t = table if table is None else _for_kernel(table, kernel)
        _draw_speedup(a, t)
        a.set_title(title or (f"{kernel}: speed-up" if kernel else "speed-up"))
    return finish(fig, bad, layout=ax is None)


def _draw_speedup(ax: Axes, t: pd.DataFrame | None) -> None:
    ax.set_xlabel("size (product of the size parameters)")
    ax.set_ylabel(METRIC_LABELS["speedup"])
    ax.axhline(1.0, color="#555", lw=1, ls="--")
    if t is None or t.empty or t["speedup"].isna().all():
        ax.text(0.5, 0.5, "no baseline to compare with", ha="center", va="center", transform=ax.transAxes)
        return
    t = t[~((t["variant"] == t["baseline_variant"]) & (t["backend"] == t["baseline_backend"]))]
    t = t.dropna(subset=["speedup"])
    cols = series_columns(t)
    for key, g in t.groupby(cols, sort=True, dropna=False):
        g = g.sort_values("size")
        s = g["speedup"].to_numpy(float)
        lo = np.nan_to_num(s - g["ci_low"].to_numpy(float), nan=0.0).clip(min=0)
        hi = np.nan_to_num(g["ci_high"].to_numpy(float) - s, nan=0.0).clip(min=0)
        base = f"{g['baseline_variant'].iloc[0]} @ {g['baseline_backend'].iloc[0]}"
        ax.errorbar(g["size"], s, yerr=[lo, hi], marker="o", ms=3, capsize=3,
                    label=f"{series_label(key, cols)} vs {base}")
    _log_if_wide(ax, t["size"], None)
    ratios = np.append(t["speedup"].to_numpy(float), 1.0)
    if ratios.min() > 0 and ratios.max() / ratios.min() > 4:  # ratios read best on a log scale
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if len(t):
        ax.legend(fontsize=7)


# -- roofline ---------------------------------------------------------------------------------

def normalize_peaks(peaks: pd.DataFrame | None) -> pd.DataFrame:
    """Measured ceilings as wide columns env_id, backend, dtype, gbps, gflops.

    Accepts the store's long table (``metric`` = ``bandwidth_gbps`` / ``gflops``,
    ``value``) or an already wide one.
    """
    cols = ["env_id", "backend", "dtype", "gbps", "gflops"]
    if peaks is None or len(peaks) == 0:
        return pd.DataFrame(columns=cols)
    p = peaks.copy()
    if "metric" in p and "value" in p:  # the store's long form
        idx = [c for c in ("env_id", "backend", "dtype") if c in p]
        p = p.pivot_table(index=idx, columns="metric", values="value", aggfunc="max").reset_index()
        p.columns.name = None
    renames = {"bandwidth_gbps": "gbps", "bw_gbps": "gbps", "mem_bw_gbps": "gbps", "peak_gbps": "gbps",
               "compute_gflops": "gflops", "peak_gflops": "gflops"}
    p = p.rename(columns={k: v for k, v in renames.items() if k in p and v not in p})
    for c in cols:
        if c not in p:
            p[c] = np.nan
    return p[cols]


def roof_for(table: pd.DataFrame, backend: str, dtypes: set[str], env_ids: set[str] | None = None
             ) -> tuple[float | None, float | None]:
    """(GB/s, GFLOP/s) ceilings of one backend: best bandwidth probed in any dtype, compute in the rows' dtypes."""
    rows = table[table["backend"] == backend]
    if env_ids and rows["env_id"].notna().any():
        rows = rows[rows["env_id"].isin(env_ids)]
    if rows.empty:
        return None, None
    bw = pd.to_numeric(rows["gbps"], errors="coerce").max()
    fl_rows = rows[rows["dtype"].isin(dtypes) | rows["dtype"].isna()] if dtypes else rows
    fl = pd.to_numeric(fl_rows["gflops"], errors="coerce").max()
    return (float(bw) if pd.notna(bw) else None), (float(fl) if pd.notna(fl) else None)


def _roof_sources(peaks: pd.DataFrame | None, backend: str, env_ids: set[str] | None) -> str:
    """"measured" or "probed" (every stored ceiling of the backend came from the automatic probe)."""
    from ..ceilings import AUTO_PROBE, source_of_method

    if peaks is None or not len(peaks) or "method" not in peaks or "backend" not in peaks:
        return "measured"
    rows = peaks[peaks["backend"] == backend]
    if env_ids and "env_id" in rows:
        rows = rows[rows["env_id"].isin(env_ids)] if rows["env_id"].isin(env_ids).any() else rows
    methods = [source_of_method(m) for m in rows["method"]]
    return "probed" if methods and all(m == AUTO_PROBE for m in methods) else "measured"


def _row_ceilings(rows: pd.DataFrame) -> tuple[float | None, float | None, str]:
    """Ceilings the rows themselves were compared with (``ceiling_gbps`` / ``ceiling_gflops``)."""
    def top(col: str) -> float | None:
        if col not in rows:
            return None
        v = pd.to_numeric(rows[col], errors="coerce").max()
        return float(v) if pd.notna(v) and v > 0 else None

    srcs = [s for s in rows.get("ceiling_source", pd.Series(dtype=object)).dropna() if s]
    return top("ceiling_gbps"), top("ceiling_gflops"), (str(srcs[0]) if srcs else "row ceilings")


def _above_reason(r: Any, bw: float | None, fl: float | None, src: str, llc: float | None) -> str:
    """Why a point sits above its roof, in a few words (points with the same reason are counted together)."""
    from ..ceilings import AUTO_PROBE, MEASURED, PUBLISHED, ceiling_suspect, fmt_bytes, llc_in_note

    kind = {"measured": MEASURED, "probed": AUTO_PROBE, "published": PUBLISHED}.get(src, src)
    reasons = []
    gbps, gflops, nbytes = (float(r.get(c) or 0) for c in ("gbps", "gflops", "bytes"))
    if llc is None:  # no environment record here: the row's own note may name the cache
        llc = llc_in_note(r.get("peak_note"))
    if bw and gbps > bw:
        if nbytes and llc and nbytes <= llc:
            reasons.append(f"working set ≤ {fmt_bytes(llc)} fits in the last-level cache, so it beats the DRAM "
                           f"slope ({src} {bw:.3g} GB/s)")
        else:
            reasons.append(f"above the {src} {bw:.3g} GB/s slope: {ceiling_suspect(kind, 'bandwidth')}")
    if fl and gflops > fl:
        reasons.append(f"above the {src} {fl:.3g} GFLOP/s roof: {ceiling_suspect(kind, 'GEMM')}")
    return "; ".join(reasons) or "above the roof"


def _wrap(text: str, width: int = 120) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent="    ") or [text]


def plot_roofline(df: pd.DataFrame, peaks: pd.DataFrame | None = None, *, ax: Axes | None = None,
                  title: str | None = None, published: bool = True,
                  environments: Mapping[str, Any] | None = None) -> Figure:
    """Points at (FLOP/byte, GFLOP/s) under each backend's bandwidth slope and compute roof.

    The roof of a backend is, in order: its ceilings in ``peaks`` (the store's
    table: ``workbench peaks`` or the automatic probe), the ceilings its rows
    name (``ceiling_gbps`` / ``ceiling_gflops``), the published figure for its
    device (``datasets/published_peaks.csv``). Points above their roof are
    ringed and the reason is written under the axes (most often a working set
    that fits in the last-level cache, from ``environments``); noisy cells are
    hollow. With no ceiling at all the points are still drawn, and a note says so.
    """
    from ..ceilings import llc_of
    from ..datasets import published_peak

    ok, bad = split_ok(df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(1, width=9.6)
    a = axes[0]
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("arithmetic intensity (FLOP/byte)")
    a.set_ylabel("GFLOP/s")
    a.set_title(title or "roofline")
    ok = ok.dropna(subset=["intensity", "gflops"]) if len(ok) else ok
    ok = ok[(pd.to_numeric(ok["intensity"]) > 0) & (pd.to_numeric(ok["gflops"]) > 0)] if len(ok) else ok
    xs = ok["intensity"].to_numpy(float) if len(ok) else np.array([0.1, 10.0])
    # at least two decades either way, so the ridge point and a narrow cloud of points both show
    x = np.logspace(np.log10(max(xs.min() / 10, 1e-4)), np.log10(xs.max() * 10), 100)
    table = normalize_peaks(peaks)
    dtypes = set(ok["dtype"]) if len(ok) and "dtype" in ok else set()
    env_ids = set(ok["env_id"].dropna()) if len(ok) and "env_id" in ok else None
    roofs: dict[str, tuple[float | None, float | None, str]] = {}
    drawn_published: set[tuple[str, str]] = set()
    for i, backend in enumerate(list(dict.fromkeys(ok["backend"])) if len(ok) else []):
        rows = ok[ok["backend"] == backend]
        bw, fl = roof_for(table, backend, dtypes, env_ids)
        src = _roof_sources(peaks, backend, env_ids) if (bw or fl) else ""
        if not (bw or fl):
            bw, fl, src = _row_ceilings(rows)
            src = {"measured (workbench peaks)": "measured", "measured (automatic probe)": "probed"}.get(src, src)
        if not (bw or fl) and published and "device" in rows:
            for (device, dtype), _ in rows.groupby(["device", "dtype"]):
                pfl, pbw = published_peak(str(device), str(dtype))
                if pfl or pbw:
                    bw, fl, src = pbw, pfl, "published"
                    drawn_published.add((str(device), str(dtype)))
                    break
        if bw or fl:
            roofs[backend] = (bw, fl, src)
            _draw_roof(a, x, bw, fl, f"{backend} roof ({src})", ":" if src == "published" else "-",
                       ROOF_COLORS[i % len(ROOF_COLORS)])
    if published and len(ok) and "device" in ok:
        for (device, dtype), _ in ok.groupby(["device", "dtype"]):
            if (str(device), str(dtype)) in drawn_published:
                continue
            fl, bw = published_peak(str(device), str(dtype))
            if fl or bw:
                _draw_roof(a, x, bw, fl, f"{device} {dtype} datasheet", ":", "#999")
    notes: list[str] = []
    if len(ok):
        cols = [c for c in series_columns(ok) if c != "device"]  # the backend names the device here
        n_noisy = 0
        for key, g in ok.groupby(cols, sort=True, dropna=False):
            pts = a.scatter(g["intensity"], g["gflops"], s=18, label=series_label(key, cols), zorder=3)
            noisy = noisy_mask(g)
            if noisy.any():
                _mark_noisy(a, g["intensity"][noisy], g["gflops"][noisy], pts.get_facecolor()[0], size=6)
                n_noisy += int(noisy.sum())
        _noisy_legend(a, n_noisy)
        above: dict[str, list[str]] = {}
        ax_x, ax_y = [], []
        for _, r in ok.iterrows():
            bw, fl, src = roofs.get(r["backend"], (None, None, ""))
            inten, gflops = float(r["intensity"]), float(r["gflops"])
            roof = min(bw * inten if bw else np.inf, fl if fl else np.inf)
            if np.isfinite(roof) and gflops > roof * 1.001:
                ax_x.append(inten)
                ax_y.append(gflops)
                reason = _above_reason(r, bw, fl, src, llc_of(dict(environments or {}), r))
                above.setdefault(reason, []).append(f"{r.get('variant')} @ {r.get('backend')} "
                                                    f"{r.get('size_label') or ''}".strip())
        if ax_x:
            a.scatter(ax_x, ax_y, s=90, facecolors="none", edgecolors="#d95f02", linewidths=1.4, zorder=5,
                      label=f"above its roof ({len(ax_x)}): see below")
            for reason, who in above.items():
                example = ", ".join(who[:2]) + (f" and {len(who) - 2} more" if len(who) > 2 else "")
                notes += _wrap(f"above the roof, {len(who)} point{'s' if len(who) > 1 else ''} ({example}): {reason}")
    else:
        a.text(0.5, 0.5, "no ok rows with intensity and GFLOP/s", ha="center", va="center", transform=a.transAxes)
    if len(ok):
        tops = [ln.get_ydata().max() for ln in a.lines if len(ln.get_ydata())] + [ok["gflops"].max()]
        hi = max(tops) * 3
        a.set_ylim(min(ok["gflops"].min() / 10, hi / 1000), hi)
        a.set_xlim(x[0], x[-1])
        if not roofs:
            a.text(0.02, 0.98, "no ceiling known (nothing measured, probed or published for these devices):\n"
                   "points drawn without a roof; `workbench peaks` measures one", ha="left", va="top", fontsize=7,
                   transform=a.transAxes, color="#777")
    a.grid(True, alpha=0.3)
    if a.get_legend_handles_labels()[0]:
        if ax is None:  # beside the axes: the points and roofs stay visible
            a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        else:
            a.legend(fontsize=7)
    fig = finish(fig, bad, layout=ax is None, notes=notes[:MAX_LISTED * 2])
    if ax is None:
        w = fig.get_size_inches()[0]
        fig.subplots_adjust(right=1 - 3.2 / w)
    return fig


def _draw_roof(ax: Axes, x: np.ndarray, bw: float | None, flops: float | None, label: str, ls: str,
               color: str) -> None:
    bw = bw if bw is not None and np.isfinite(bw) and bw > 0 else None
    flops = flops if flops is not None and np.isfinite(flops) and flops > 0 else None
    if bw and flops:
        y = np.minimum(bw * x, flops)
    elif bw:
        y = bw * x
    elif flops:
        y = np.full_like(x, flops)
    else:
        return
    ax.plot(x, y, ls=ls, lw=1.5, color=color, label=label)


# -- memory -----------------------------------------------------------------------------------

def plot_memory(df: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Figure:
    """Peak memory of one untimed call against size, per variant/backend, by the backend's method."""
    ok, bad = split_ok(df)
    kernels = _kernels(ok if len(ok) else df)
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(len(kernels))
    for a, kernel in zip(axes, kernels, strict=False):
        k = _for_kernel(ok, kernel)
        k = k.dropna(subset=["peak_mem_bytes"]) if "peak_mem_bytes" in k else k.iloc[0:0]
        a.set_xlabel("size (product of the size parameters)")
        a.set_ylabel(METRIC_LABELS["peak_mem_bytes"])
        a.set_title(title or (f"{kernel}: peak memory" if kernel else "peak memory"))
        if k.empty:
            a.text(0.5, 0.5, "no memory measurements", ha="center", va="center", transform=a.transAxes)
            continue
        unit, scale = _bytes_unit(k["peak_mem_bytes"])
        a.set_ylabel(f"{METRIC_LABELS['peak_mem_bytes']} ({unit})")
        cols = series_columns(k)
        for key, g in k.groupby(cols, sort=True, dropna=False):
            g = _sorted_numeric(g, "peak_mem_bytes")
            methods = sorted({_short_method(str(m)) for m in g.get("mem_method", pd.Series(dtype=str)).dropna() if m})
            a.plot(g["size"], g["peak_mem_bytes"] / scale, marker="s", ms=3,
                   label=series_label(key, cols) + (f" [{', '.join(methods)}]" if methods else ""))
        _log_if_wide(a, k["size"], pd.to_numeric(k["peak_mem_bytes"], errors="coerce"))
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    return finish(fig, bad, layout=ax is None)
