"""The messages between a sweep's process and its worker processes (pickled over a socket pair).

Parent to worker process: :class:`Start` (once, first), then :class:`Prepare`, :class:`RunCell` and
finally :class:`Stop`. Worker process to parent: :class:`Ready` after :class:`Start`, :class:`Prepared`,
and for each cell :class:`RunStarted` (its build is done: the run limit starts), :class:`FirstCallDone` (in a
first round: its first call returned) then :class:`CellDone`.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.catalog.shipping import Shipment
from workbench.measure.request import CellRequest
from workbench.measure.result import CellResult


@dataclass(frozen=True)
class Start:
    """How the worker process is to run its backend's cells."""

    backend: str
    memory_cap: int | None
    boundscheck: bool
    parent_pid: int
    #: The parent's import path: inline kernels may import its modules.
    sys_path: tuple[str, ...]
    input_cache_bytes: int
    #: The folder of inputs and references shared by the sweep's worker processes (None: none).
    shared_dir: str | None


@dataclass(frozen=True)
class Prepare:
    """Import the backend's runtime and query its device before the first cell (its cost is no cell's)."""

    backend: str


@dataclass(frozen=True)
class Stop:
    """End the worker process (sent between cells; the parent kills it if it has not exited within seconds)."""


@dataclass(frozen=True)
class Ready:
    """The worker process has started and imported the workbench: the parent waits for this before any work."""

    pid: int


@dataclass(frozen=True)
class Prepared:
    """The answer to :class:`Prepare`: why the backend cannot run here, or None."""

    backend: str
    problem: str | None


@dataclass(frozen=True)
class JobMessage:
    """A message about one cell: the parent numbers each :class:`RunCell`, and the answers carry its number
    (an answer to a cell abandoned after its time limit is told apart from the next cell's)."""

    job_id: int


@dataclass(frozen=True)
class RunCell(JobMessage):
    """Build and run one cell; the answers are :class:`RunStarted`, then :class:`CellDone`. ``shipment``: the
    catalog entries the cell needs, when they were defined inline (:mod:`workbench.catalog.shipping`)."""

    request: CellRequest
    shipment: Shipment


@dataclass(frozen=True)
class RunStarted(JobMessage):
    """The cell's build is done: its run limit starts now."""


@dataclass(frozen=True)
class FirstCallDone(JobMessage):
    """The cell's first call returned: the first call's own limit is over, the run limit applies."""


@dataclass(frozen=True)
class CellDone(JobMessage):
    """The cell's result (a crash or a time limit ends the worker process instead: the parent writes that row)."""

    result: CellResult
