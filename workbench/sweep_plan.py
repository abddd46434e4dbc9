"""What a sweep still has to run: every cell of its spec, the rounds each has stored, and the requests of a round.

A :class:`SweepPlan` is built from the spec and the rows a run has stored (none for a new run), so a
resumed run and a new one are planned alike. It yields the sweep's rounds (the cells due in each, in that
round's order), turns them into :class:`~workbench.harness.request.CellRequest` values, and keeps each
cell's row so far as results are merged in (:func:`workbench.harness.rounds.merge_rounds`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .cluster.executor import shared_host_note
from .harness.cell import new_result
from .harness.request import Cell, CellRequest, RoundRole
from .harness.result import CellResult
from .harness.rounds import is_final, merge_rounds, round_config, round_order, rounds_done
from .harness.throughput import Peaks
from .status import Status
from .store import Store
from .timestamps import now_iso

if TYPE_CHECKING:  # the plan takes a spec; the spec's module runs the plan
    from .sweep import SweepSpec

#: A stored row, as the store reads it.
StoredRow = dict[str, Any]


def cell_complete(row: Mapping[str, Any] | None, rounds: int) -> bool:
    """A cell's stored row needs no more rounds: it ended early, or has all ``rounds``."""
    return is_final(row) or rounds_done(row) >= rounds


class SweepPlan:
    """The cells of ``spec`` and the rows stored for them (``stored``: by cell key; empty for a new run)."""

    def __init__(self, spec: SweepSpec, stored: Mapping[str, StoredRow] | None = None, retry_crashed: bool = False):
        spec.check()
        self.spec = spec
        self.rounds = spec.n_rounds()
        self.cells: list[Cell] = spec.cells()  # bad names raise here, before a run is created
        if not self.cells:
            raise ValueError("the sweep has no cells: no kernel, size, variant and backend combination matched")
        stored = dict(stored or {})
        if retry_crashed:  # cells stored crashed are run again
            stored = {k: r for k, r in stored.items() if r.get("status") != Status.CRASHED}
        #: Each cell's row so far (all its rounds).
        self.rows: dict[str, StoredRow] = {c.key: stored[c.key] for c in self.cells if c.key in stored}
        #: Cells given a new row by this sweep.
        self.touched: set[str] = set()
        self.total = len(self.cells) * self.rounds
        self.done = self.total - sum(self.remaining(c) for c in self.cells)
        self._configs = {(c, later): round_config(spec.timing_config(c), self.rounds, later)
                         for c in spec.caches() for later in (False, True)}
        self._shapes = spec.llm_labels()

    @staticmethod
    def stored_summary(store: Store, run_id: str) -> tuple[int, int, int]:
        """(cells stored, of them complete, rounds the run asks for) of a stored run; an unknown run raises."""
        rounds = int((store.run(run_id).get("spec") or {}).get("rounds") or 1)
        rows = store.rows([run_id])
        return len(rows), sum(1 for r in rows if cell_complete(r, rounds)), rounds

    # -- what is left ---------------------------------------------------------------------------------------------
    def remaining(self, cell: Cell) -> int:
        """Rounds ``cell`` still needs (none once it ended early)."""
        row = self.rows.get(cell.key)
        return 0 if is_final(row) else max(0, self.rounds - rounds_done(row))

    def missing(self) -> int:
        """Cells without a row, or with fewer rounds than the sweep asks for and not ended early."""
        return sum(1 for c in self.cells if not cell_complete(self.rows.get(c.key), self.rounds))

    def backends(self) -> list[str]:
        """Backends with cells left to run (placeholders of unsupported cells run nothing)."""
        return sorted({c.backend for c in self.cells if self.remaining(c) > 0 and not c.unsupported})

    def rounds_due(self) -> Iterator[tuple[int, list[Cell]]]:
        """Each round and the cells due in it: round 0 in the spec's order, later rounds shuffled per round
        (seeded by the spec). Worked out as the round starts, from the rows merged so far."""
        for r in range(self.rounds):
            due = [c for c in self.cells if self.remaining(c) > 0 and rounds_done(self.rows.get(c.key)) <= r]
            if r > 0:
                due = round_order(due, lambda c: (c.kernel, c.dtype, c.params), self.spec.seed, r)
            yield r, due

    def request(self, cell: Cell, ceilings: Mapping[str, Peaks]) -> CellRequest:
        """How to run ``cell`` in its next round (``ceilings``: by backend, where the cells run here)."""
        n_prev = rounds_done(self.rows.get(cell.key))
        return CellRequest(cell, self._configs[cell.cache, n_prev > 0], RoundRole.of(n_prev, self.rounds),
                           self.spec.seed, self.spec.timeout_s, self.spec.build_timeout_s,
                           ceilings.get(cell.backend), round=n_prev + 1)

    # -- results coming in ----------------------------------------------------------------------------------------
    def merged(self, cell: Cell, result: CellResult, run_id: str, env_id: str) -> StoredRow:
        """The cell's row after this result (its rounds so far and this one), as the store is to keep it."""
        new = result.to_row()
        new.update(run_id=run_id, env_id=new.get("env_id") or env_id,  # a Dask worker's result: its machine's
                   llm_shape=self._shapes.get((cell.kernel, cell.params)))
        return shared_host_note(merge_rounds(self.rows.get(cell.key), new))

    def keep(self, cell: Cell, row: StoredRow) -> int:
        """Keep ``row`` (stored) as the cell's; returns the progress it makes, in cell visits (a cell that
        ended early also completes its rounds left)."""
        self.rows[cell.key] = row
        self.touched.add(cell.key)
        step = 1 + (max(0, self.rounds - rounds_done(row)) if is_final(row) else 0)
        self.done += step
        return step

    def progress_index(self) -> int:
        """Progress in cells (visits done × cells / visits in all, rounded up) less one: a bar of ``cells``
        fills once whatever the rounds."""
        return -(-self.done * len(self.cells) // self.total) - 1

    def touched_rows(self) -> list[StoredRow]:
        """The rows this sweep gave a new round, in the cells' order."""
        return [self.rows[c.key] for c in self.cells if c.key in self.touched]

    def stored_cells(self) -> int:
        return sum(1 for c in self.cells if c.key in self.rows)

    # -- resuming after a crash ------------------------------------------------------------------------------------
    def blame_in_flight(self, store: Store, run_id: str, env_id: str) -> None:
        """The cell a run was running in-process when it died (recorded before it ran, never finished) becomes
        ``crashed``: without this, ``--resume`` would run it again and die the same way. A cell that ran in a
        worker process is not to blame (its own crash would have been a row): the run was killed, and the
        resume simply runs it again."""
        marker = store.in_flight(run_id)
        if marker is None:
            return
        cell = next((c for c in self.cells if c.key == marker["cell_key"]), None)
        store.set_in_flight(run_id, None)
        if cell is None or is_final(self.rows.get(cell.key)) or marker.get("isolation") == "process":
            return
        res = new_result(cell)
        res.end(Status.CRASHED, (
            f"the run stopped while this cell was running (round {marker.get('round', '?')}, started "
            f"{marker.get('started_at', '?')}): the process died in it (a crash, a kill, or the system running out "
            "of memory); `--resume --retry-crashed` runs it again"), finished_at=now_iso())
        new = res.to_row()
        new.update(run_id=run_id, env_id=env_id)
        row = merge_rounds(self.rows.get(cell.key), new)
        store.record(row)
        self.rows[cell.key] = row
        self.done = self.total - sum(self.remaining(c) for c in self.cells)
