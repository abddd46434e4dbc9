"""Text as the store keeps it: capped and cleaned where a row is stored, so that every stored row can be
exported, imported elsewhere and printed.

Why here: a variant raising a 20 MiB message once made a 42 MB store and HTML report, and its export was then
refused whole by ``workbench import`` (whose limits are :mod:`workbench.store.export_schema`'s); a variant name
holding ESC made the export unimportable too, and a message holding a lone surrogate (``\\udcff``) ended the
sweep, unstorable. So a result row's text is cleaned as it is stored: control characters (ESC, NUL ...) and
lone surrogates become visible escapes (``\\x1b``, ``\\udcff``), short text (names, statuses) is cut at
:data:`~workbench.store.export_schema.MAX_TEXT_CHARS`, and long text (messages, tracebacks) at
:data:`MAX_STORED_LONG_TEXT_CHARS`, keeping its start and its end (where a traceback names the error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.core.record import JSON_COLUMNS, RESULT_COLUMNS
from workbench.store.export_schema import CONTROL_CHARS, LONG_TEXT_COLUMNS, MAX_TEXT_CHARS

#: The longest message or traceback stored (an import accepts 16 times more: a stored row always imports).
MAX_STORED_LONG_TEXT_CHARS = 64 << 10
#: Columns that are identifiers we made (never rewritten: rows are found by them).
_ID_COLUMNS = ("run_id", "cell_key", "env_id")
_TEXT_COLUMNS = tuple(k for k, t in RESULT_COLUMNS.items()
                      if t.startswith("TEXT") and k not in _ID_COLUMNS and k not in JSON_COLUMNS)


def _escape(m: Any) -> str:
    return f"\\x{ord(m.group()):02x}"


def stored_text(value: str, limit: int) -> str:
    """``value`` with control characters but tab and line breaks escaped, at most ``limit`` characters: a
    longer one keeps its first and last parts around a note of how much was cut."""
    text = CONTROL_CHARS.sub(_escape, value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ('\udcff' from a bytes message decoded with surrogateescape)
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # SQLite refused it: the sweep ended
    if len(text) <= limit:
        return text
    keep = limit - 60  # the note below is shorter than 60 characters
    note = f"\n… [{len(text) - keep:,} characters cut] …\n"
    head = keep * 2 // 3
    return text[:head] + note + text[len(text) - (keep - head):]


def stored_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with each text column as :func:`stored_text` makes it (other fields as they are)."""
    out = dict(row)
    for key in _TEXT_COLUMNS:
        v = out.get(key)
        if isinstance(v, str):
            out[key] = stored_text(v, MAX_STORED_LONG_TEXT_CHARS if key in LONG_TEXT_COLUMNS else MAX_TEXT_CHARS)
    return out


def stored_json(value: Any) -> Any:
    """``value`` (decoded JSON) with every string in it as :func:`stored_text` makes it: a commit or a folder
    name of a run's ``code_commits`` reaches the terminal, the Markdown report and the HTML hover text."""
    if isinstance(value, str):
        return stored_text(value, MAX_TEXT_CHARS)
    if isinstance(value, list):
        return [stored_json(v) for v in value]
    if isinstance(value, dict):
        return {stored_json(k): stored_json(v) for k, v in value.items()}
    return value
