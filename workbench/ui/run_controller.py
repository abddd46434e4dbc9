"""Runs a sweep in a background thread so the notebook stays responsive and Cancel can be clicked.

The sweep itself (:func:`workbench.sweep.driver.run_sweep`) stores every finished
row as it goes; the controller forwards rows to the views, learns the run id
as soon as the run is created (so the cell in flight can be read from the
store while it runs, see :meth:`RunController.in_flight`), and asks the sweep
to stop when Cancel is pressed: with cells in worker processes (the default)
the sweep polls that request while a cell runs and stops its worker at once;
in-process it can only stop once the running call returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from workbench.core.record import JsonObject
from workbench.store.database import open_store
from workbench.sweep.driver import run_sweep


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
        self.store: Any = None
        #: The id of the run being measured, known from the moment the sweep creates it.
        self.run_id: str | None = None

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
        self.outcome, self.error, self.run_id = None, None, None
        self.store = open_store(store)
        self._thread = threading.Thread(target=self._work, args=(spec, self.store, name),
                                        name="workbench-dashboard-sweep", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Ask the sweep to stop: the running cell's worker is stopped at once (in-process: once the running
        call returns); every finished row is kept and the run ends "interrupted"."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the sweep; True when it has finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def in_flight(self) -> JsonObject | None:
        """``{cell_key, label, round, started_at}`` of the cell running now, read from the store, or None."""
        if self.store is None or self.run_id is None:
            return None
        try:
            return self.store.in_flight(self.run_id)
        except Exception:  # noqa: BLE001 - a busy or closed store only means nothing to show this time
            return None

    def _work(self, spec: Any, store: Any, name: str | None) -> None:
        # run_sweep creates the run inside; catch its id on the way out so the running cell can be shown
        # before the first one finishes (the instance attribute shadows the method for this run only).
        create = store.new_run

        def new_run(**kw: Any) -> str:
            self.run_id = create(**kw)
            return self.run_id

        store.new_run = new_run
        try:
            self.outcome = run_sweep(spec, store=store, name=name, on_cell=self._on_row,
                                     should_stop=self._stop.is_set, progress=False)
        except BaseException as exc:  # noqa: BLE001 - reported in the status area, never lost in the thread
            self.error = exc
        finally:
            try:
                del store.new_run
            except AttributeError:
                pass
            self._on_done(self.outcome, self.error)
