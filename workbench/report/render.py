"""HTML and Markdown from one :class:`workbench.report.model.Report`: markup only.

The sections, their order and every text come from the model (:func:`workbench.report.model.build_report`);
a renderer turns each section it is given into its format and never decides what the report contains.
The HTML page embeds its figures as inline SVG and its CSS inline, so it can be mailed, archived or
opened offline; every string that came from a user is escaped (jinja2's autoescaping in HTML,
:func:`workbench.report.tables.md_escape` in Markdown).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pandas as pd

from workbench.report.model import Report, Section, build_report
from workbench.report.row_notes import text_of
from workbench.report.tables import md_escape, pivot_markdown


def render_html(store_or_df: Any, run_ids: str | Iterable[str] | None = None, *, title: str | None = None,
                baseline: Any = None) -> str:
    """The report of ``run_ids`` as one self-contained HTML page (:func:`html`)."""
    return html(build_report(store_or_df, run_ids, title=title, baseline=baseline))


def render_markdown(store_or_df: Any, run_ids: str | Iterable[str] | None = None, *, title: str | None = None,
                    baseline: Any = None) -> str:
    """The report of ``run_ids`` as Markdown (:func:`markdown`); figures are left out."""
    return markdown(build_report(store_or_df, run_ids, title=title, baseline=baseline, figures=False))


def _html_template() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("workbench.report", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    return env.get_template("report.html.j2")


def html(report: Report) -> str:
    return _html_template().render(report=report, records=_records)


def html_pieces(report: Report, chunk_chars: int = 1 << 20) -> Iterator[str]:
    """:func:`html` of ``report`` in pieces of about ``chunk_chars`` characters, for a file written as they
    come (the same text). Why: rendering whole joined the template's millions of small strings (a 100k-row
    report's page: 25 MB from 3.3 million pieces) in one list first, then the page, then its bytes."""
    buf: list[str] = []
    size = 0
    for piece in _html_template().generate(report=report, records=_records):
        buf.append(piece)
        size += len(piece)
        if size >= chunk_chars:
            yield "".join(buf)
            buf, size = [], 0
    if buf:
        yield "".join(buf)


def _records(df: pd.DataFrame) -> list[dict[str, str]]:
    return [{k: text_of(v) for k, v in r.items()} for r in df.to_dict("records")] if len(df) else []


def md_table(df: pd.DataFrame) -> str:
    """A GitHub-style pipe table; every header and cell escaped (:func:`workbench.report.tables.md_escape`)."""
    if df.empty:
        return "_none_\n"

    def cell(v: Any) -> str:
        return md_escape(text_of(v))

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body]) + "\n"


def markdown(report: Report) -> str:
    parts = [f"# {md_escape(report.title)}\n", *[f"{md_escape(e['line'])}\n" for e in report.env_lines]]
    for section in report.sections:
        parts += _MD_SECTIONS[section.id](report, section)
    return "\n".join(parts)


def _md_findings(r: Report, s: Section) -> list[str]:
    kf = r.findings
    table = pd.DataFrame([{"kernel": f.kernel, **({"run": f.run} if r.multi else {}),
                           "size": f"{f.size_class}: {f.size}" if f.size_class else f.size,
                           "fastest": f.fastest_shown, "median time": f.time_shown,
                           "speed-up (paired)": f.speedup_text or f.runner_up, kf.interval_label: f.ci_text,
                           "verdict": f.verdict_text,
                           "% of ceiling": f.pct_text,
                           "caveats": "; ".join(c["detail"] for c in f.caveats)} for f in kf.findings])
    return [f"## {s.title}\n", f"Speed-ups over one reference for the whole report: {md_escape(kf.reference)}.\n",
            *[f"- {md_escape(c)}" for c in kf.caveats], "", md_table(table)]


def _md_summary(r: Report, s: Section) -> list[str]:
    counts = ", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in r.counts.items()) or "none"
    return ["## Summary\n", md_table(r.runs), f"\nCells by status: {counts}\n",
            *[f"\n{md_escape(line)}\n" for line in r.flag_lines]]


def _md_kernels(r: Report, s: Section) -> list[str]:
    parts = ["\n## Per kernel\n"]
    for k in r.kernels:
        parts += [f"\n### {md_escape(k.kernel)}\n", pivot_markdown(k.pivot)]
    speedups = r.speedups
    if len(speedups):
        totals: dict[str, int] = {}
        for k in r.kernels:
            for v, n in k.verdicts.items():
                totals[v] = totals.get(v, 0) + n
        notes = [f"{md_escape(k.kernel)}: {k.speedups_note}" for k in r.kernels if k.speedups_note]
        parts += ["\n## Speed-up vs the reference\n", *[f"{n}\n\n" for n in notes], md_table(speedups)]
        if totals:
            parts.append("\nVerdicts: " + ", ".join(f"{md_escape(k)} {md_escape(v)}" for k, v in totals.items()) + "\n")
    return parts


def _md_history(r: Report, s: Section) -> list[str]:
    h = r.history
    if h is None:
        return []
    lines = [f"\n## {s.title}\n", h.summary, ""]
    for f in [*h.figures, *h.others]:
        lines.append(f"- **{f.label}** on {f.machine}: {f.runs} runs, noise {f.noise}"
                     + "".join(f"\n  - {c}" for c in f.changes))
    return lines


def _md_failures(r: Report, s: Section) -> list[str]:
    unsupported = r.counts.get("unsupported")
    note = (f"\n{unsupported} cells were unsupported (the variant does not apply on that backend or dtype: not a "
            "failure); each says why under Results.\n") if unsupported else ""
    return [f"\n## {s.title}\n", md_table(r.failures.drop(columns=["traceback"])), note]


def _md_peaks(r: Report, s: Section) -> list[str]:
    devices = [f"- {md_escape(device)}: {md_escape('; '.join(lines))}" for device, lines in r.device_roofs]
    return [f"\n## {s.title}\n", *devices, "", md_table(r.peaks_shown)]


def _md_results(r: Report, s: Section) -> list[str]:
    return ["\n## Results\n", *([f"{md_escape(r.rows_note)}\n"] if r.rows_note else []), md_table(r.results_table)]


def _md_environment(r: Report, s: Section) -> list[str]:
    parts = ["\n## Machines\n", md_table(r.machines)] if len(r.machines) else []
    for env in r.environments:
        parts += [f"\n## Environment {md_escape(env['env_id'])}\n",
                  md_table(pd.DataFrame(env["rows"], columns=["section", "key", "value"]))]
    return parts


_MD_SECTIONS: dict[str, Callable[[Report, Section], list[str]]] = {
    "key-findings": _md_findings, "contents": lambda r, s: [], "summary": _md_summary, "plots": _md_kernels,
    "history": _md_history,
    "failures": _md_failures, "peaks": _md_peaks, "results": _md_results, "environment": _md_environment}
