"""The measurement harness: one timing loop, statistics, memory and failure isolation for every backend.

- :mod:`.request` — :class:`CellRequest`: a cell and how to run it (what every executor takes)
- :mod:`.result` — :class:`CellResult`: what comes back (its row only at the store boundary)
- :mod:`.executor` — the one executor protocol; :mod:`.isolation` and :mod:`.process_worker` implement it here
- :mod:`.timer` — warm-up, batching, adaptive sampling, timer-overhead calibration
- :mod:`.stats` — median / quartiles / spread of samples
- :mod:`.memory` — peak memory of one untimed call
- :mod:`.cell` — one cell from build to result, failures mapped to statuses
- :mod:`.worker` — the worker thread that lets a hung cell be abandoned
"""

from workbench.core.record import RESULT_COLUMNS, STATUSES, cell_key
from workbench.judge.stats import Stats, summarize
from workbench.measure.cell import InputCache, is_oom, measure, run_cell
from workbench.measure.isolation import execute_cell
from workbench.measure.request import Cell, CellRequest, CheckOnly, RoundRole
from workbench.measure.result import CellResult
from workbench.measure.timer import Timing, TimingConfig, time_calls, timer_overhead
from workbench.measure.worker import CellWorker

__all__ = ["Cell", "CellRequest", "CellResult", "CellWorker", "CheckOnly", "InputCache", "RESULT_COLUMNS",
           "RoundRole", "STATUSES", "Stats", "Timing", "TimingConfig", "cell_key", "execute_cell", "is_oom",
           "measure", "run_cell", "summarize", "time_calls", "timer_overhead"]
