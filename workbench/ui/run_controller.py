"""Runs a sweep in a background thread so the notebook stays responsive and Cancel can be clicked.

The sweep itself (:func:`workbench.sweep.run_sweep`) stores every finished
row as it goes; the controller only forwards rows to the views and asks the
sweep to stop after the current cell when Cancel is pressed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class RunController:
    """Owns at most one running sweep."""

    def __init__(self, on_row: Callable[[dict, int, int], None],
                 on_done: Callable[[Any, BaseException | None], None]) -> None:
        self._on_row = on_row
        self._on_done = on_done
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.outcome: Any = None
        self.error: BaseException | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def cancel_requested(self) -> bool:
        return self._stop.is_set()

    def start(self, spec: Any, store: Any = None, name: str | None = None) -> None:
        if self.running:
            raise RuntimeError("a sweep is already running; cancel it or wait for it to finish")
        self._stop.clear()
        self.outcome, self.error = None, None
        self._thread = threading.Thread(target=self._work, args=(spec, store, name),
                                        name="workbench-dashboard-sweep", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop after the cell that is running now; every finished row is kept."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the sweep; True when it has finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def _work(self, spec: Any, store: Any, name: str | None) -> None:
        from ..sweep import run_sweep

        try:
            self.outcome = run_sweep(spec, store=store, name=name, on_cell=self._on_row,
                                     should_stop=self._stop.is_set, progress=False)
        except BaseException as exc:  # noqa: BLE001 - reported in the status area, never lost in the thread
            self.error = exc
        finally:
            self._on_done(self.outcome, self.error)
