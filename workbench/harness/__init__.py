"""The measurement harness: one timing loop, statistics, memory and failure isolation for every backend.

- :mod:`.timer` — warm-up, batching, adaptive sampling, timer-overhead calibration
- :mod:`.stats` — median / quartiles / spread of samples
- :mod:`.memory` — peak memory of one untimed call
- :mod:`.cell` — one cell from build to row, failures mapped to statuses
- :mod:`.worker` — the worker thread that lets a hung cell be abandoned
"""

from ..record import RESULT_COLUMNS, STATUSES, cell_key
from .cell import Cell, CheckOnly, InputCache, execute_cell, is_oom, run_cell
from .stats import Stats, summarize
from .timer import Timing, TimingConfig, time_calls, timer_overhead
from .worker import CellWorker

__all__ = ["Cell", "CellWorker", "CheckOnly", "InputCache", "RESULT_COLUMNS", "STATUSES", "Stats", "Timing",
           "TimingConfig", "cell_key", "execute_cell", "is_oom", "run_cell", "summarize", "time_calls",
           "timer_overhead"]
