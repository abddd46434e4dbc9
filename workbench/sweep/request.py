"""One request for a sweep: what to measure (a :class:`~workbench.sweep.spec.SweepSpec`) and how to run it
(:class:`RunOptions`), checked once.

``workbench bench``, :func:`workbench.benchmark` and :func:`workbench.sweep.run_sweep` each build one
:class:`SweepRequest`. :meth:`SweepRequest.checked` refuses every bad value before a store is opened or a run
created, and expands the spec's cells once; the plan takes those cells as they are. So a cell's way from the
command to the timer checks each option in one place and plans each cell once.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.core.record import RowDict
from workbench.measure.request import Cell
from workbench.sweep.spec import SweepSpec

if TYPE_CHECKING:
    from workbench.store.database import Store

#: ``on_cell(row, index, total)``: called after every visit of a cell with the cell's row so far.
OnCell = Callable[[RowDict, int, int], None]


@dataclass(frozen=True)
class RunOptions:
    """How a sweep runs, as opposed to what it measures: where rows go, where cells run, what is shown.

    ``isolation`` and ``memory_cap``, when given, replace the spec's (a resumed run keeps its stored spec's
    otherwise). ``cluster``: ``local:N``, a Dask scheduler's address, or a
    :class:`workbench.cluster.ClusterExecutor` the caller closes; ``cluster_security`` is a ``tls://``
    scheduler's client credentials."""

    store: Store | str | os.PathLike[str] | None = None
    name: str | None = None
    #: Free text the run is stored with (``bench --tag``), to find it on a history.
    tag: str | None = None
    resume_run_id: str | None = None
    retry_crashed: bool = False
    progress: bool = True
    argv: Sequence[str] | None = None
    on_cell: OnCell | None = None
    should_stop: Callable[[], bool] | None = None
    isolation: str | None = None
    memory_cap: str | int | None = None
    cluster: Any = None
    cluster_security: Any = None

    def applied_to(self, spec: SweepSpec) -> SweepSpec:
        """``spec`` with these options' isolation and memory cap where they are given."""
        if self.isolation is None and self.memory_cap is None:
            return spec
        return dataclasses.replace(spec, isolation=self.isolation or spec.isolation,
                                   memory_cap=self.memory_cap if self.memory_cap is not None else spec.memory_cap)


@dataclass(frozen=True)
class SweepRequest:
    """A sweep to run: ``spec`` (None when resuming a stored run: its stored spec is used), ``options``, and
    the spec's cells once :meth:`checked` has expanded them (None before, and when resuming)."""

    spec: SweepSpec | None
    options: RunOptions = field(default_factory=RunOptions)
    cells: tuple[Cell, ...] | None = None

    def checked(self, flags: Mapping[str, str] | None = None) -> SweepRequest:
        """This request with the options applied to the spec, every value checked and the cells expanded:
        bad names, sizes that fit no kernel and invalid options raise ValueError here, naming the value
        (``flags`` names options as the command line spells them). A resumed run's stored spec is checked
        when the plan reads it from the store."""
        if self.spec is None:
            if self.options.resume_run_id is None:
                raise ValueError("run_sweep needs a SweepSpec (or resume_run_id of a stored run)")
            return self
        if self.cells is not None:
            return self
        spec = self.options.applied_to(self.spec)
        spec.check(flags)
        cells = tuple(spec.cells())
        if not cells:
            raise ValueError("the sweep has no cells: no kernel, size, variant and backend combination matched")
        return SweepRequest(spec, self.options, cells)
