"""Reports, tables and figures from tidy measurement rows (see ``docs/measurement-record.md``)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # matplotlib and jinja2 load only when a report or plot is asked for.
    if name in ("write_report", "render_html", "render_markdown", "summary_table"):
        from workbench.report import exporters, render, summary

        return getattr({"write_report": exporters, "summary_table": summary}.get(name, render), name)
    raise AttributeError(f"module 'workbench.report' has no attribute {name!r}")


__all__ = ["render_html", "render_markdown", "summary_table", "write_report"]
