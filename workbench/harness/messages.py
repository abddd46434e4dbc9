"""The messages between a sweep's process and its worker processes (pickled over a socket pair).

Parent to worker process: :class:`Start` (once, first), then :class:`Prepare`, :class:`RunCell` and
finally :class:`Stop`. Worker process to parent: :class:`Ready` after :class:`Start`, :class:`Prepared`,
and for each cell :class:`RunStarted` (its build is done: the run limit starts) then :class:`CellDone`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.shipping import Shipment
from .request import CellRequest
from .result import CellResult


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
    backend: str


@dataclass(frozen=True)
class RunCell:
    job_id: int
    request: CellRequest
    #: The catalog entries the cell needs, when they were defined inline (:mod:`workbench.catalog.shipping`).
    shipment: Shipment


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Ready:
    pid: int


@dataclass(frozen=True)
class Prepared:
    backend: str
    problem: str | None


@dataclass(frozen=True)
class RunStarted:
    job_id: int


@dataclass(frozen=True)
class CellDone:
    job_id: int
    result: CellResult
