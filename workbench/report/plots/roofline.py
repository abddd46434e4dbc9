"""The roofline: points at (FLOP/byte, GFLOP/s) under their device's roofs, and why any point sits above one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from workbench.core.units import fmt_bytes
from workbench.report.plots import series as ps
from workbench.report.plots.frame import MAX_LISTED, finish, new_figure, split_ok
from workbench.report.plots.lines import quartile_span
from workbench.report.styles import SeriesStyle, styles_for
from workbench.roofs.ceilings import ceiling_suspect, llc_of, probe_read_low
from workbench.roofs.model import (
    AUTO_PROBE,
    CACHE_LEVELS,
    MEASURED,
    PUBLISHED,
    RoofKey,
    RoofKind,
    RoofSet,
    above_top_roof,
    is_probe_workload,
    named_flops_roof,
    resolve_roofs,
)

ROOF_COLORS = ("#222", "#7a1f5c", "#1f5c7a", "#5c7a1f")


@dataclass(frozen=True)
class DrawnRoof:
    """One roof line of a roofline: the backends whose rows it bounds and their roof set."""

    label: str
    bandwidth: float | None
    flops: float | None
    source: str
    published: bool
    #: Measured cache-level bandwidths, innermost first: (level, GB/s), drawn as the cache-aware roofline's
    #: thinner slopes above the DRAM one.
    caches: tuple[tuple[str, float], ...] = ()


def _short_source(src: str) -> str:
    return {MEASURED: "measured", AUTO_PROBE: "probed", PUBLISHED: "published", "": "measured"}.get(src, src)


def roof_lines(roofs: Mapping[RoofKey, RoofSet], dtype: str | None) -> dict[RoofKey, DrawnRoof]:
    """The roof line each (environment, backend) is drawn under: DRAM bandwidth and the peak FLOP/s of
    ``dtype``; backends sharing one device and identical roofs share one line (every CPU runtime)."""
    groups: dict[tuple[Any, ...], list[RoofKey]] = {}
    for key, rs in roofs.items():
        bw, fl = rs.get(RoofKind.DRAM), rs.get(RoofKind.FLOPS, dtype)
        bw = bw if bw is not None and bw.known else None
        fl = fl if fl is not None and fl.known else None
        if bw is None and fl is None:
            continue
        src = _short_source((bw or fl).source)  # type: ignore[union-attr]
        caches = tuple((k.short, rs.value(k)) for k in CACHE_LEVELS if rs.value(k))
        ident = (rs.device, bw.value if bw else None, fl.value if fl else None, src, caches)
        groups.setdefault(ident, []).append(key)
    out = {}
    for (device, bw, fl, src, caches), keys in groups.items():
        backends = list(dict.fromkeys(k[1] for k in keys))
        who = backends[0] if len(backends) == 1 else f"{device} ({len(backends)} runtimes)"
        # the legend names both figures of the solid line: its slope is the DRAM bandwidth (the dashed ones
        # are the cache levels, named with theirs), its flat top the peak FLOP/s
        # a measured or probed flat top is a GEMM library's rate, not the hardware's (04: its legend read
        # "105 GFLOP/s" beside numpy's point at 87.6% of it, as if numpy neared the machine's peak)
        top = f"{fl:.3g} GFLOP/s" + ("" if src == "published" else " (a GEMM library's measured rate)")
        figures = ", ".join(([f"DRAM {bw:.3g} GB/s"] if bw else []) + ([top] if fl else []))
        line = DrawnRoof(f"{who} roof ({src}): {figures}", bw, fl, src, src == "published", caches)  # type: ignore[arg-type]
        out.update({k: line for k in keys})
    return out


def _above_reason(r: Any, line: DrawnRoof, roofs: RoofSet | None, llc: float | None) -> str:
    """Why a point sits above its roof, in a few words (points with the same reason are counted together):
    implausible above the device's top roof; else the measured cache level holding its working set, or no
    explanation at all where no cache ceiling was measured."""
    implausible = above_top_roof(r, roofs)
    if implausible:
        return implausible.partition(":")[0] + " (above the device's top roof: L1 bandwidth or peak FLOP/s)"
    kind = {"probed": AUTO_PROBE, "published": PUBLISHED}.get(line.source, MEASURED)
    gbps, gflops, nbytes = (float(r.get(c) or 0) for c in ("gbps", "gflops", "bytes"))
    reasons = []
    if line.bandwidth and gbps > line.bandwidth:
        level = roofs.cache_level_for(nbytes) if roofs is not None else None
        if level is not None and level.known:
            within = "within" if gbps <= level.value else "above"  # type: ignore[operator]
            reasons.append(f"working set fits in the {level.kind.cache}, {within} its measured "
                           f"{level.value:.3g} GB/s ceiling")
        elif nbytes and llc:
            fits = f"≤ {fmt_bytes(llc)} fits in the last-level cache" if nbytes <= llc else \
                f"exceeds the {fmt_bytes(llc)} last-level cache"
            reasons.append(f"working set {fits}, but no cache bandwidth was measured, so nothing explains the "
                           f"{line.source} {line.bandwidth:.3g} GB/s slope being passed: "
                           f"{ceiling_suspect(kind, 'bandwidth')}")
        else:
            reasons.append(f"above the {line.source} {line.bandwidth:.3g} GB/s slope: "
                           f"{ceiling_suspect(kind, 'bandwidth')}")
    if line.flops and gflops > line.flops:
        # the probe's own call: the one hedged cause, with this point's ratio, that its row's note gives too (04
        # printed a second explanation here beside the row's)
        own = is_probe_workload(r, named_flops_roof(r, roofs))
        why = probe_read_low(gflops / line.flops) if own else ceiling_suspect(kind, "GEMM")
        reasons.append(f"above the {line.source} {line.flops:.3g} GFLOP/s roof: {why}")
    return "; ".join(reasons) or "above the roof"


def _roofline_points(ok: pd.DataFrame) -> pd.DataFrame:
    if ok.empty or not {"intensity", "gflops"} <= set(ok.columns):
        return ok.iloc[0:0]
    inten, gfl = (pd.to_numeric(ok[c], errors="coerce") for c in ("intensity", "gflops"))
    return ok[(inten > 0) & (gfl > 0)]


def plot_roofline(df: pd.DataFrame, peaks: pd.DataFrame | None = None, *, ax: Axes | None = None,
                  title: str | None = None, published: bool = True,
                  environments: Mapping[str, Any] | None = None, styles: Mapping[str, SeriesStyle] | None = None,
                  run_names: Mapping[str, str] | None = None) -> Figure:
    """Points at (FLOP/byte, GFLOP/s) under their device's DRAM bandwidth slope and compute roof.

    The roofs are :func:`workbench.roofs.model.resolve_roofs`'s (stored probe, the rows' own, published); every
    runtime on one device with the same roofs shares one line. Points above their roof are ringed and the
    reason is written under the axes: implausible above the device's top roof, else the measured cache level
    holding the working set, or no explanation where no cache ceiling was measured; noisy cells are hollow.
    With no roof at all the points are still drawn, and a note says so.
    """
    ok, bad = split_ok(df)
    styles = styles if styles is not None else styles_for(df)
    ok = _roofline_points(ok)
    roofs = resolve_roofs(ok, peaks, published=published)
    ok = ps.pooled_over_runs(ok, ["variant", "backend", "dtype", "cache", "env_id", "params"])
    dtypes = list(dict.fromkeys(ok["dtype"].astype(str))) if len(ok) and "dtype" in ok else [None]
    lines = {(key, dt): line for dt in dtypes for key, line in roof_lines(roofs, dt).items()}
    fig, axes = (ax.figure, [ax]) if ax is not None else new_figure(1, width=5.6, height=3.6)
    a = axes[0]
    xs = ok["intensity"].to_numpy(float) if len(ok) else np.array([0.1, 10.0])
    # at least a decade either way of the points, and every drawn slope's ridge point (where it meets its compute
    # roof) a factor of 3 inside: a legend naming an L1 slope whose ridge lies left of the axes drew nothing
    ridges = [bw and fl and fl / bw for ln in lines.values() for bw, fl in
              ((ln.bandwidth, ln.flops), *((g, ln.flops) for _, g in ln.caches))]
    lo = min([xs.min() / 10, *(r / 3 for r in ridges if r)])
    x = np.logspace(np.log10(max(lo, 1e-4)), np.log10(xs.max() * 10), 100)
    _draw_roofline_axes(a, title)
    _draw_roof_lines(a, x, lines, len(dtypes))
    notes: list[str] = []
    if len(ok):
        _draw_points(a, ok, styles, run_names)
        notes = _ring_points_above(a, ok, lines, roofs, environments)
        ps.pooled_legend(a, ok)
        tops = [ln.get_ydata().max() for ln in a.lines if len(ln.get_ydata())] + [ok["gflops"].max()]
        hi = max(tops) * 3
        a.set_ylim(min(ok["gflops"].min() / 10, hi / 1000), hi)
        a.set_xlim(x[0], x[-1])
        if not lines:
            a.text(0.02, 0.98, "no ceiling known (nothing measured, probed or published for these devices):\n"
                   "points drawn without a roof; `workbench peaks` measures one", ha="left", va="top", fontsize=7,
                   transform=a.transAxes, color="#777")
    else:
        a.text(0.5, 0.5, "no ok rows with intensity and GFLOP/s", ha="center", va="center", transform=a.transAxes)
    return finish(fig, bad, layout=ax is None, notes=notes[:MAX_LISTED])


#: The roof line each (environment, backend) and dtype is drawn under.
RoofLines = dict[tuple[RoofKey, str | None], DrawnRoof]


def _draw_roof_lines(a: Axes, x: np.ndarray, lines: RoofLines, n_dtypes: int) -> None:
    """Each distinct roof once (named with its dtype where the rows have several), with the thinner slopes of
    its measured cache levels."""
    for i, (line, dt) in enumerate(dict.fromkeys((ln, dt) for (_, dt), ln in lines.items())):
        label = line.label if n_dtypes < 2 else f"{line.label} {dt}"
        color = ROOF_COLORS[i % len(ROOF_COLORS)]
        _draw_roof(a, x, line.bandwidth, line.flops, label, ":" if line.published else "-", color)
        for j, (level, gbps) in enumerate(line.caches):
            # the first dashed slope says what the dashed ones are (04's "LLC 87.6 GB/s" was never explained)
            what = "dashed: a cache level's bandwidth, " if j == 0 else ""
            _draw_roof(a, x, gbps, line.flops, f"{what}{level} {gbps:.3g} GB/s", "--", color, lw=0.8)


def _ring_points_above(a: Axes, ok: pd.DataFrame, lines: RoofLines, roofs: Mapping[RoofKey, RoofSet],
                       environments: Mapping[str, Any] | None) -> list[str]:
    """Ring the points above their roof; returns a note per reason, naming a few of its points."""
    above: dict[str, list[str]] = {}
    ring_x, ring_y = [], []
    for _, r in ok.iterrows():
        key = (str(r.get("env_id") or "") if pd.notna(r.get("env_id")) else "", str(r["backend"]))
        line = lines.get((key, str(r.get("dtype"))) if "dtype" in ok else (key, None))
        if line is None:
            continue
        inten, gflops = float(r["intensity"]), float(r["gflops"])
        roof = min(line.bandwidth * inten if line.bandwidth else np.inf, line.flops or np.inf)
        if np.isfinite(roof) and gflops > roof * 1.001:
            ring_x.append(inten)
            ring_y.append(gflops)
            reason = _above_reason(r, line, roofs.get(key), llc_of(dict(environments or {}), r))
            above.setdefault(reason, []).append(f"{r.get('variant')} @ {r.get('backend')} "
                                                f"{r.get('size_label') or ''}".strip())
    notes: list[str] = []
    if ring_x:
        a.scatter(ring_x, ring_y, s=90, facecolors="none", edgecolors="#d95f02", linewidths=1.4, zorder=5,
                  label=f"above its roof ({len(ring_x)}): see below")
        for reason, who in above.items():
            example = ", ".join(who[:2]) + (f" and {len(who) - 2} more" if len(who) > 2 else "")
            notes.append(f"above the roof, {len(who)} point{'s' if len(who) > 1 else ''} ({example}): {reason}")
    return notes


def _draw_roofline_axes(a: Axes, title: str | None) -> None:
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("arithmetic intensity (FLOP/byte)")
    a.set_ylabel("GFLOP/s")
    a.set_title(title or "roofline")
    a.grid(True, alpha=0.3)
    a.xaxis.set_major_formatter(FuncFormatter(lambda v, pos: f"{v:g}"))
    a.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: f"{v:g}"))


def _draw_points(a: Axes, ok: pd.DataFrame, styles: Mapping[str, SeriesStyle],
                 run_names: Mapping[str, str] | None) -> None:
    """Each series' points in its marker; noisy ones hollow, disturbed ones (the tables' "disturbed": no rate
    printed) their quartiles only, an x at each, counted apart, as in the line figures."""
    cols = ps.series_columns(ok)
    runs = ps.run_order(ok)
    n_noisy = n_disturbed = 0
    for key, g in ok.groupby(cols, sort=True, dropna=False):
        style, _ = ps.line_style(key, cols, styles, runs)
        label = ps.series_label(key, cols, run_names, styles)
        disturbed = ps.disturbed_mask(g)
        readable = g[~disturbed]
        if len(readable):
            a.scatter(readable["intensity"], readable["gflops"], s=22, marker=style.marker, color=style.color,
                      label=label, zorder=3)
        else:  # the series' legend entry all the same
            a.plot([], [], ls="none", marker=style.marker, color=style.color, label=label)
        noisy = ps.noisy_mask(g) & ~disturbed
        if noisy.any():
            ps.mark_noisy(a, g["intensity"][noisy], g["gflops"][noisy], style.color, size=6, marker=style.marker)
            n_noisy += int(noisy.sum())
        if disturbed.any():
            ps.mark_disturbed(a, g["intensity"][disturbed], g["gflops"][disturbed], style.color, size=6,
                              span=quartile_span(g[disturbed], "gflops"))   # its quartiles only, as the lines draw it
            n_disturbed += int(disturbed.sum())
    ps.noisy_legend(a, n_noisy)
    ps.disturbed_legend(a, n_disturbed)


def has_roof(df: pd.DataFrame, peaks: pd.DataFrame | None = None, published: bool = True) -> bool:
    """Whether a roofline of these rows would have points and at least one roof line: without either it
    says nothing."""
    ok = _roofline_points(split_ok(df)[0])
    if ok.empty:
        return False
    roofs = resolve_roofs(ok, peaks, published=published)
    dtypes = list(dict.fromkeys(ok["dtype"].astype(str))) if "dtype" in ok else [None]
    return any(roof_lines(roofs, dt) for dt in dtypes)


def _draw_roof(ax: Axes, x: np.ndarray, bw: float | None, flops: float | None, label: str, ls: str,
               color: str, lw: float = 1.5) -> None:
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
    ax.plot(x, y, ls=ls, lw=lw, color=color, label=label)
