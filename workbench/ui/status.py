"""The dashboard's status area, and the guard that keeps callback errors inside it.

A widget callback that raises inside ipywidgets only logs to the browser console
(or kills a background thread silently); wrapping every callback with
:meth:`StatusArea.guard` turns the exception into a visible message with its
traceback folded away, and the dashboard keeps working.
"""

from __future__ import annotations

import functools
import html
import logging
import traceback
from collections.abc import Callable
from typing import Any

import ipywidgets as w

log = logging.getLogger(__name__)

_COLORS = {"info": "#333", "ok": "#1a7f37", "warn": "#9a6700", "error": "#cf222e"}


class StatusArea:
    """One line of status text; errors add a collapsible traceback."""

    def __init__(self) -> None:
        self.widget = w.HTML(value="").add_class("wb-status")
        self.last_error: str | None = None

    def show(self, message: str, level: str = "info", detail: str | None = None) -> None:
        body = f'<span style="color:{_COLORS.get(level, "#333")}">{html.escape(message)}</span>'
        if detail:
            body += ("<details><summary>details</summary><pre style='font-size:11px;white-space:pre-wrap'>"
                     f"{html.escape(detail)}</pre></details>")
        self.widget.value = body

    def error(self, message: str, exc: BaseException | None = None) -> None:
        detail = "".join(traceback.format_exception(exc)) if exc is not None else None
        self.last_error = f"{message}: {exc!r}" if exc is not None else message
        log.warning("dashboard: %s", self.last_error)
        self.show(f"{message}: {exc}" if exc is not None else message, "error", detail)

    def guard(self, what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with any exception reported here instead of propagating."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a widget callback must never take the dashboard down
                self.error(f"{what} failed", exc)
                return None

        return wrapper
