"""Wall-clock timestamps as stored in rows, runs and exports: one format, one home (bottom layer)."""

from __future__ import annotations

from datetime import datetime, timezone


def now_iso() -> str:
    """Now in UTC, ISO 8601 to the millisecond with a ``Z`` suffix (``2026-11-25T21:05:33.123Z``): sorts as text."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
