"""The report as data: built once from the rows, then rendered as HTML or Markdown.

:func:`build_report` decides everything a reader sees — which sections exist and in what order, the key
findings, every table's text, the figures, the roofs behind "% of peak" — so
:mod:`workbench.report.render` only turns the tree into markup and the two formats cannot drift apart.
"""

from __future__ import annotations

import base64
import datetime as _dt
import io
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pandas as pd

from workbench.core.allocator import release_free_memory
from workbench.core.frames import where_rows
from workbench.core.record import JsonObject
from workbench.core.status import Status
from workbench.judge.compare import speedup_vs_baseline
from workbench.judge.verdicts import is_disturbed, verdict_label
from workbench.report import plots
from workbench.report.data import REPORT_COLUMNS, ReportData, check_baseline, gather
from workbench.report.env_summary import environment_line, machines_table, run_names
from workbench.report.findings import (
    KeyFindings,
    is_default_reference,
    key_findings,
    parse_reference,
    pick_reference,
)
from workbench.report.history import HistorySection, history_section
from workbench.report.reference_checks import ReferenceChecks
from workbench.report.row_notes import fmt_num, row_notes, text_of
from workbench.report.styles import parse_baseline
from workbench.report.summary import (
    UNSUPPORTED_CELLS,
    failures_table,
    noise_summary,
    peak_summary,
    runs_table,
    speedup_table,
    status_counts,
    summary_table,
    verdict_counts,
)
from workbench.report.tables import Pivot, pivot
from workbench.roofs.model import RoofKey, RoofKind, RoofSet, resolve_roofs
from workbench.version import __version__

#: At most this many rows go into the "All rows" table (about 3 MB of HTML); a larger report says how many
#: there are and the command that writes them all, since a page of a million rows opens in no browser.
MAX_TABLE_ROWS = 5_000


#: The columns :func:`workbench.roofs.model.resolve_roofs` reads of the rows.
ROOF_COLUMNS = ("env_id", "backend", "device", "dtype", "ceiling_gbps", "ceiling_gflops", "ceiling_source")

#: The columns of a kernel's judged speed-ups that the key findings read (kept for them across kernels): the basis
#: among them, with the noise and rounds its caveat words read, so a pair left too few rounds at speed reads so there,
#: not "disturbed" (issue 39: the report said "disturbed" of a pair its tutorials said "could not tell" of).
JUDGED_COLUMNS = ("run_id", "variant", "backend", "params", "verdict", "speedup", "ci_low", "ci_high", "floor",
                  "coverage", "settle", "basis", "noise", "n_a")


class _ByName:
    """Fields readable as ``x["name"]`` too: the template and older callers index them like the dicts
    they replace."""

    def __getitem__(self, name: str) -> Any:
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


@dataclass(frozen=True)
class Section(_ByName):
    """One section of the report, in reading order: its anchor and its heading."""

    id: str
    title: str


@dataclass(frozen=True)
class ReportFigure(_ByName):
    caption: str
    svg: str


@dataclass
class KernelSection(_ByName):
    """One kernel: its compact table, the figures that carry something, its speed-ups over the reference."""

    kernel: str
    anchor: str
    n_ok: int
    n_rows: int
    pivot: Pivot
    speedups: list[dict[str, str]]
    verdicts: dict[str, int]
    figures: list[ReportFigure] = field(default_factory=list)
    #: How many speed-ups there are (``speedups`` holds the first of them when a report caps its tables).
    n_speedups: int = 0

    @property
    def speedups_note(self) -> str:
        """One line when the speed-up table holds only some of the kernel's speed-ups ("" when all)."""
        shown = len(self.speedups)
        return (f"the first {shown:,} of {self.n_speedups:,} speed-ups are shown; the verdict counts count them all"
                if self.n_speedups > shown else "")


@dataclass
class ResultRow(_ByName):
    """One line of the all-rows table and the flags shown beside it."""

    cells: dict[str, str]
    noisy: bool
    noise_note: str
    peak_note: str


@dataclass
class Report(_ByName):
    """Everything a report shows, in the order it shows it (``sections``)."""

    title: str
    generated: str
    version: str
    sections: list[Section]
    findings: KeyFindings
    multi: bool
    env_lines: list[dict[str, str]]
    runs: pd.DataFrame
    counts: dict[str, int]
    n_rows: int
    flag_lines: list[str]
    noise_line: str
    peak_lines: list[str]
    kernels: list[KernelSection]
    failures: pd.DataFrame
    unsupported: pd.DataFrame
    results: list[ResultRow]
    result_columns: list[str]
    results_table: pd.DataFrame
    rows_note: str
    peaks: pd.DataFrame
    machines: pd.DataFrame
    environments: list[EnvironmentSection]
    roofs: dict[RoofKey, RoofSet]
    #: Each series of the report's cells on its timeline, when the store holds several runs of them.
    history: HistorySection | None = None

    @property
    def peaks_shown(self) -> pd.DataFrame:
        """The measured peaks as printed: numbers to 4 significant digits (57.64, not 57.64209317349725)."""
        out = self.peaks.copy()
        for c in out.columns:
            if pd.api.types.is_float_dtype(out[c]):
                out[c] = [fmt_num(v, 4) for v in out[c]]
        return out

    @property
    def device_roofs(self) -> list[tuple[str, list[str]]]:
        """Each device's roofs in words, once per device however many runtimes share them."""
        seen: dict[str, list[str]] = {}
        for rs in self.roofs.values():
            if rs.roofs and rs.device not in seen:
                order = list(RoofKind)
                seen[rs.device] = [r.text() for r in sorted(rs.roofs, key=lambda r: (order.index(r.kind),
                                                                                     r.dtype or ""))]
        return list(seen.items())

    @property
    def n_figures(self) -> int:
        return sum(len(k.figures) for k in self.kernels)

    @property
    def speedups(self) -> pd.DataFrame:
        """Every kernel's speed-ups over the reference, one table."""
        frames = [pd.DataFrame(k.speedups) for k in self.kernels if k.speedups]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def build_report(store_or_df: Any, run_ids: str | Iterable[str] | None = None, *, title: str | None = None,
                 baseline: Any = None, figures: bool = True, max_table_rows: int = MAX_TABLE_ROWS) -> Report:
    """The report of ``run_ids`` (None: all; ``latest``): key findings against one reference (``baseline``,
    default numpy's library variant), then per kernel a compact table, its figures (``figures``) and its
    speed-ups; a baseline that names no measured series is a ValueError listing them. Every summary counts
    all rows; the all-rows table holds the first ``max_table_rows`` (``rows_note`` says how to get the rest),
    and each kernel's speed-up table as many (its ``speedups_note`` says so)."""
    data = gather(store_or_df, run_ids, columns=REPORT_COLUMNS, thin=True)
    check_baseline(data.df, baseline)
    df = data.df
    names = run_names(data.runs, data.run_ids, data.environments)
    # the columns the roofs are found from, not a copy of every OK row (a million rows: +40% of the frame)
    roof_rows = df[[c for c in ROOF_COLUMNS if c in df]]
    roofs = resolve_roofs(where_rows(roof_rows, df["status"] == Status.OK) if "status" in df else roof_rows,
                          data.peaks)
    notes = row_notes(df, data.environments, roofs)
    release_free_memory()  # each phase's temporaries: glibc keeps their pages between what stays
    checks = ReferenceChecks(df)  # one index of the reference series for the findings and every kernel
    shown = min(len(df), max_table_rows)
    table = summary_table(df.head(shown), data.environments, notes.head(shown))
    results = [ResultRow({k: text_of(v) for k, v in rec.items()}, bool(n["noisy"]), n["noise_note"], n["peak_note"])
               for rec, (_, n) in zip(table.to_dict("records"), notes.head(shown).iterrows(), strict=True)]
    runs = runs_table(data)
    runs["name"] = [names.get(r, n) for r, n in zip(runs["run"], runs["name"], strict=True)]
    judged: dict[tuple[str, tuple[str, str]], pd.DataFrame] = {}
    kernels = kernel_sections(data, baseline, run_names=names, figures=figures, checks=checks, judged=judged,
                              max_rows=max_table_rows)
    noise_line, peak_lines = noise_summary(df, notes), peak_summary(df, notes)
    history = history_section(store_or_df, df["kernel"].dropna().unique() if "kernel" in df else [], figure_svg,
                              figures)
    return Report(
        title=title or "Kernel Workbench report: " + (", ".join(names.get(r, r) for r in data.run_ids)
                                                      or "(no runs)"),
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), version=__version__,
        sections=_sections(data, kernels, history),
        findings=key_findings(df, baseline, runs=data.runs, environments=data.environments, run_names=names,
                              roofs=roofs, checks=checks, judged=judged),
        multi=len(data.run_ids) > 1 or len(data.environments) > 1,
        env_lines=[{"env_id": e, "line": environment_line(rec, _backends_of(df, e))}
                   for e, rec in data.environments.items()],
        runs=runs, counts=status_counts(df), n_rows=len(df),
        flag_lines=[line for line in [noise_line, *peak_lines] if line], noise_line=noise_line,
        peak_lines=peak_lines, kernels=kernels, failures=failures_table(df),
        unsupported=failures_table(df, UNSUPPORTED_CELLS), results=results,
        result_columns=list(table.columns), results_table=table,
        rows_note=_rows_note(store_or_df, data.run_ids, len(df), shown), peaks=data.peaks,
        machines=machines_table(df, data.environments), environments=environment_sections(data.environments),
        roofs=roofs, history=history)


def _rows_note(store_or_df: Any, run_ids: list[str], n_rows: int, shown: int) -> str:
    """One line when the all-rows table holds only some rows: how many there are and the exact command
    that writes every one of them as CSV (empty when the table holds them all)."""
    if shown >= n_rows:
        return ""
    path = getattr(store_or_df, "path", None)
    store = f" --store {shlex.quote(str(path))}" if path is not None else ""
    command = f"workbench report {' '.join(shlex.quote(r) for r in run_ids)}{store} --out rows.csv"
    return f"{n_rows:,} rows: the first {shown:,} are shown here; every row as CSV: {command}"


def _sections(data: ReportData, kernels: list[KernelSection], history: HistorySection | None = None) -> list[Section]:
    """The sections this report has, in reading order (measured peaks only where some were measured; the
    history only where the store holds several runs of the report's cells)."""
    out = [Section("key-findings", "Key findings"), Section("contents", "Contents"), Section("summary", "Runs"),
           Section("plots", "Kernels"), Section("failures", "Cells that did not pass")]
    if history is not None:
        out.insert(4, Section("history", "History"))
    if len(data.peaks):
        out.append(Section("peaks", "Measured peaks"))
    return [*out, Section("results", "All rows"), Section("environment", "Environment")]


def figure_data_uri(fig: Any, dpi: int = 160) -> str:
    """A PNG data URI at twice screen resolution (for places that need an image file, not markup)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def figure_svg(fig: Any, salt: str) -> str:
    """The figure as inline SVG markup: sharp at any zoom, text that stays text, and no base64 overhead.

    ``salt`` keeps the ids of this figure's clip paths and markers apart from every other figure's on the
    page (and the same from one run of the report to the next)."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return compact_svg(buf.getvalue())


_SVG_NUMBER = re.compile(r"(\d+\.\d\d)\d+")
_SVG_GID = re.compile(r' id="[A-Za-z.]+(?:_[A-Za-z]+)*_\d+"')
_SVG_FONTS = re.compile(r"font-family: [^;\"]+")


def compact_svg(text: str) -> str:
    """matplotlib's SVG without what a page does not need: the XML header and metadata, coordinates past
    1/100 pt, the figure-local ids (``axes_1``: they would repeat on every figure of the page),
    indentation, and the dozen fallback font names on every label (about 25% less)."""
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = _SVG_NUMBER.sub(r"\1", text)
    text = _SVG_GID.sub("", text)
    text = _SVG_FONTS.sub("font-family: 'DejaVu Sans', Verdana, sans-serif", text)
    text = re.sub(r"\s*\n\s*", " ", text)
    return re.sub(r">\s+<", "><", text)


def _intensity_varies(ok: pd.DataFrame) -> bool:
    v = pd.to_numeric(ok.get("intensity", pd.Series(dtype=float)), errors="coerce").dropna()
    return len(v) > 1 and v.max() / v.min() > 1.2 if len(v) and v.min() > 0 else False


def kernel_sections(data: ReportData, baseline: Any = None, styles: Any = None,
                    run_names: dict[str, str] | None = None, figures: bool = True,
                    checks: ReferenceChecks | None = None,
                    judged: dict[tuple[str, tuple[str, str]], pd.DataFrame] | None = None,
                    max_rows: int | None = None) -> list[KernelSection]:
    """Per kernel: its compact table and only the figures that carry something.

    Always the time / % of ceiling figure; a roofline only where it has points and a roof and the
    kernel's arithmetic intensity changes with size (with one intensity the points stack on one
    vertical, and the % of ceiling panel already says how far below the roof they are); a memory
    figure only where the series' memories differ (:func:`workbench.report.plots.memories_differ`).
    ``checks``: the report's :class:`ReferenceChecks` of ``data.df`` (else one is built); ``judged`` collects
    each kernel's :func:`~workbench.judge.compare.speedup_vs_baseline` table by (kernel, reference), every
    run's rows judged once for both the kernel's section and the key findings. ``max_rows``: a kernel's
    speed-up table holds at most that many rows (its verdict counts and ``n_speedups`` count them all).
    """
    out = []
    df = data.df
    styles = styles if styles is not None else plots.styles_for(df)
    variant, backend = parse_reference(baseline)
    checks = checks if checks is not None else ReferenceChecks(df)
    for i, kernel in enumerate(dict.fromkeys(df["kernel"]) if "kernel" in df else []):
        k = where_rows(df, df["kernel"] == kernel)
        ok = where_rows(k, k["status"] == Status.OK)
        ref = pick_reference(ok, variant, backend, fallback=is_default_reference(baseline))
        figs = _kernel_figures(data, ok, k, str(kernel), i, styles, run_names) if figures and len(ok) else []
        table = speedup_vs_baseline(ok, baseline_variant=ref[0], baseline_backend=ref[1]) if ref else None
        if table is not None and judged is not None:  # what the key findings read of it (the whole table
            judged[(str(kernel), ref)] = table[[c for c in JUDGED_COLUMNS if c in table]]  # of 1M rows: 200 MB)
        against = {"variant": ref[0], "backend": ref[1]} if ref else baseline
        if table is None and len(ok):  # no report reference here: the kernel's own baseline, as the table says
            table = speedup_vs_baseline(ok, *parse_baseline(against))
        # every speed-up is counted; only the rows shown are formatted (and their references checked)
        judged_rows = table[table["verdict"] != "baseline"] if table is not None else pd.DataFrame(columns=["verdict"])
        shown = judged_rows if max_rows is None else judged_rows.head(max_rows)
        every = speedup_table(ok, against, checks, shown) if len(ok) else shown
        out.append(KernelSection(str(kernel), f"kernel-{i + 1}", len(ok), len(k), pivot(k, ref, run_names, max_rows),
                                 _records(every), verdict_counts(_shown_verdicts(judged_rows)), figs,
                                 len(judged_rows)))
        release_free_memory()  # the kernel's copies and judged pairs, garbage now (see build_report)
    return out


def _kernel_figures(data: ReportData, ok: pd.DataFrame, k: pd.DataFrame, kernel: str, i: int, styles: Any,
                    run_names: dict[str, str] | None) -> list[ReportFigure]:
    figs = [ReportFigure("time per call and share of the ceiling against size",
                         figure_svg(plots.plot_kernel(k, kernel, styles=styles, run_names=run_names), f"k{i}t"))]
    if _intensity_varies(ok) and plots.has_roof(ok, data.peaks):
        fig = plots.plot_roofline(ok, data.peaks, environments=data.environments, styles=styles,
                                  run_names=run_names, title=f"{kernel}: roofline")
        figs.append(ReportFigure("roofline: arithmetic intensity grows with size", figure_svg(fig, f"k{i}r")))
    if plots.memories_differ(ok):
        fig = plots.plot_memory(ok, styles=styles, run_names=run_names)
        figs.append(ReportFigure("peak memory of one call (each backend's own method)", figure_svg(fig, f"k{i}m")))
    return figs


def _backends_of(df: pd.DataFrame, env_id: str) -> set[str]:
    """The backends with rows measured in environment ``env_id`` (every row's, where rows name none)."""
    if "backend" not in df:
        return set()
    backends = df["backend"]  # that column only: a copy of the environment's rows was 40% of a 1M-row frame
    if "env_id" in df and (mine := (df["env_id"] == env_id).to_numpy()).any():
        backends = backends[mine]
    return {str(b) for b in backends.dropna().unique()}


def _shown_verdicts(judged: pd.DataFrame) -> list[str]:
    """The verdicts as the speed-up table prints them: "disturbed" where the interval cannot inform."""
    floors = judged["floor"] if "floor" in judged else [None] * len(judged)
    bases = judged["basis"] if "basis" in judged else [None] * len(judged)   # too few rounds at speed: said so
    return [verdict_label(text_of(v), f, b) if is_disturbed(f) else text_of(v)
            for v, f, b in zip(judged["verdict"], floors, bases, strict=True)]


def _records(df: pd.DataFrame) -> list[dict[str, str]]:
    return [{k: text_of(v) for k, v in r.items()} for r in df.to_dict("records")]


class EnvironmentSection(TypedDict):
    """One environment record as (section, key, value) text rows (see :func:`environment_sections`)."""

    env_id: str
    rows: list[tuple[str, str, str]]


def environment_sections(envs: Mapping[str, JsonObject]) -> list[EnvironmentSection]:
    """Each environment record flattened to (section, key, value) text rows.

    Dicts give one row per key; lists of records (backends, thread pools) one
    row per item, named by its ``name`` and summarised as ``key=value`` pairs.
    """
    out: list[EnvironmentSection] = []
    for env_id, rec in envs.items():
        rows: list[tuple[str, str, str]] = []
        for section, value in (rec or {}).items():
            if isinstance(value, dict):
                rows += [(str(section), str(k), _scalar_text(v)) for k, v in value.items()]
            elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
                for i, item in enumerate(value):
                    name = item.get("name") or item.get("user_api") or item.get("filepath") or str(i)
                    rows.append((str(section), str(name), _pairs(item)))
            else:
                rows.append((str(section), "", _scalar_text(value)))
        out.append({"env_id": env_id, "rows": rows})
    return out


def _scalar_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, default=str)


def _pairs(item: JsonObject, prefix: str = "") -> str:
    parts = []
    for k, v in item.items():
        if k == "name" and not prefix or v is None or v == "" or v == {} or v == []:
            continue
        if isinstance(v, dict):
            inner = _pairs(v, f"{prefix}{k}.")
            if inner:
                parts.append(inner)
        else:
            parts.append(f"{prefix}{k}={v if isinstance(v, str) else json.dumps(v, default=str)}")
    return "; ".join(parts)


