"""What a sweep still has to run: every cell of its spec, the rounds each has stored, and the requests of a round.

A :class:`SweepPlan` is built from the spec and the rows a run has stored (none for a new run), so a
resumed run and a new one are planned alike. It yields the sweep's rounds (the cells due in each, in that
round's order), turns them into :class:`~workbench.measure.request.CellRequest` values, and keeps each
cell's row so far as results are merged in (:func:`workbench.measure.rounds.merge_rounds`).
"""

from __future__ import annotations

import random
import secrets
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from workbench.catalog import get_kernel, variants
from workbench.cluster.executor import shared_host_note
from workbench.core.record import size_label
from workbench.core.status import Status
from workbench.core.timestamps import now_iso
from workbench.judge.verdicts import MIN_ROUNDS, PAIR_D, TWIN_PAIR_D, effects
from workbench.measure.cell_facts import new_result
from workbench.measure.request import Cell, CellRequest, RoundRole
from workbench.measure.result import CellResult
from workbench.measure.rounds import (
    is_final,
    label_round,
    median_above_fastest,
    merge_pair,
    merge_rounds,
    merge_twin,
    round_config,
    round_order,
    round_seed,
    rounds_done,
)
from workbench.measure.speed_probe import MIN_BANDWIDTH_BYTES
from workbench.measure.timer import MIN_PAIRS
from workbench.roofs.throughput import Peaks, work
from workbench.store.database import Store
from workbench.sweep.spec import SweepSpec

#: A stored row, as the store reads it.
StoredRow = dict[str, Any]


#: Rounds' worth of every cell's budget held back from the planned rounds (when they are enough to judge by:
#: ``MIN_ROUNDS``, and some group has two cells to compare): it pays for the A/A twins and for extra rounds
#: of the pairs still inconclusive, so a sweep takes about as long as it did without them.
RESERVE_ROUNDS = 1
#: Most extra rounds an undecided pair gets beyond the planned ones.
MAX_EXTRA_ROUNDS = 6
#: Share of the reserve the A/A twins may take; extra rounds get the rest (and whatever the twins leave).
TWIN_SHARE = 0.5
#: Seconds a visit costs beyond its warm-up and timing (worker round trip, input rotation, the store write),
#: to price the twins before any visit is measured: ~0.16 s measured on the shared 2-core machine at load ~8
#: (a 45-cell sweep, 3 rounds: 0.39 s a visit, 0.23 s of it warm-up and timing). Extra rounds are priced by
#: the visits of the sweep's own later rounds.
VISIT_OVERHEAD_S = 0.15
#: A cell is timed beside its baseline before their times are known when a visit's budget is at least this:
#: ``workbench bench``'s default visit (0.5 s over 4 rounds' shares) is; a quick suite's (0.04 s) is not.
PAIR_BUDGET_S = 0.05


def group_of(cell: Cell) -> tuple[Any, ...]:
    """The group of a cell: the contenders sharing its inputs (kernel, dtype, size), measured back to back."""
    return cell.kernel, cell.dtype, cell.params


def cell_complete(row: Mapping[str, Any] | None, rounds: int) -> bool:
    """A cell's stored row needs no more rounds: it ended early, or has all ``rounds``."""
    return is_final(row) or rounds_done(row) >= rounds


class SweepPlan:
    """The cells of ``spec`` and the rows stored for them (``stored``: by cell key; empty for a new run)."""

    def __init__(self, spec: SweepSpec, stored: Mapping[str, StoredRow] | None = None, retry_crashed: bool = False,
                 cells: Sequence[Cell] | None = None):
        """``cells``: the spec's cells as :meth:`workbench.sweep.request.SweepRequest.checked` expanded them
        (checked and expanded here when not given: a resumed run's stored spec)."""
        if cells is None:
            spec.check()
            cells = spec.cells()  # bad names raise here, before a run is created
        self.spec = spec
        self.rounds = spec.n_rounds()
        # one cell per key: a name or size given twice (--kernels a,a --sizes n=100,n=100) ran once but was counted
        # once per mention in the progress ("3/6 cell rounds (50%)" at the end)
        self.cells: list[Cell] = list({c.key: c for c in cells}.values())
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
        groups: dict[Any, int] = {}
        for c in self.cells:
            if not c.unsupported:
                groups[group_of(c)] = groups.get(group_of(c), 0) + 1
        #: Rounds' worth of budget held back for A/A twins and extra rounds (:data:`RESERVE_ROUNDS`).
        self.reserve = RESERVE_ROUNDS if self.rounds >= MIN_ROUNDS and max(groups.values(), default=0) > 1 else 0
        self._configs = {(c, later): round_config(spec.timing_config(c), self.rounds + self.reserve, later)
                         for c in spec.caches() for later in (False, True)}
        #: Seconds of timing the planned rounds leave for twins and extra rounds.
        self.pool_s = sum(self.remaining(c) * spec.budget_s * (1 / self.rounds - 1 / (self.rounds + self.reserve))
                          for c in self.cells if not c.unsupported) if self.reserve else 0.0
        self._shapes = spec.llm_labels()
        #: (kernel, variant, backend, dtype) -> where it hung, for variants that hung in this sweep.
        self._hung: dict[tuple[str, str, str, str], str] = {}
        #: This sweep's round ids (``round_ids`` of its rows): unique per visit of a round, across resumes.
        self._session = secrets.token_hex(3)
        self._round_id, self._round_index = "", 0
        self._visited: set[str] = set()  # cells measured in the round under way (a second visit is the twin)
        self._requested: set[str] = set()  # cells asked for in the round under way (a second request: the twin)
        self._last_keep = time.perf_counter()
        self._visit_s: list[float] = []  # what each visit of a later round cost, in seconds
        self._extra = False  # the round under way is an extra round (or a twin's visit is paid from the pool)
        self._partners: dict[str, Cell] | None = None
        #: The machine's speed probe as the round under way started (:mod:`workbench.measure.speed_probe`).
        self.speed_probe_s: float | None = None
        #: The host's memory bandwidth as the round under way started, where one of its cells is past the LLC.
        self.bandwidth_probe_gbs: float | None = None
        self._bytes: dict[str, float] = {}  # cell key -> bytes one call moves, from the spec
        self._llc_bytes: int | None = None

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

    def rounds_due(self, interleaved: bool = True) -> Iterator[tuple[int, list[Cell]]]:
        """Each round and the cells due in it: round 0 in the spec's order, later rounds shuffled per round
        (seeded by the spec), each reference with an A/A twin measured a second time in its group; then,
        while the reserve lasts, extra rounds of the pairs still inconclusive (:meth:`extra_rounds`). Worked
        out as each round starts, from the rows merged so far. ``interleaved`` False (cells of a round run
        at once, on a cluster): no twins and no extra rounds, which need visits one after another."""
        twins = self.twins() if interleaved and self.reserve else set()
        refs = self.references()
        for r in range(self.rounds):
            due = [c for c in self.cells if self.remaining(c) > 0 and rounds_done(self.rows.get(c.key)) <= r]
            if r > 0:
                due = round_order(due, group_of, self.spec.seed, r, anchor=lambda c: c.key in refs)
            else:  # references first: a contender is timed beside its baseline only once that has passed
                due = references_first(due, refs)
            yield from self._round(r, with_twins(due, twins, self.spec.seed, r))
        if interleaved and self.reserve:
            yield from self.extra_rounds()

    def _round(self, r: int, due: list[Cell]) -> Iterator[tuple[int, list[Cell]]]:
        """Yield round ``r`` with its id set; the sweep runs it before asking for the next."""
        self._round_id, self._round_index, self._extra = f"{self._session}:{r}", r, r >= self.rounds
        self._visited, self._requested = set(), set()
        self._last_keep = time.perf_counter()
        yield r, due

    def references(self) -> set[str]:
        """Keys of each group's references, the cells its others are judged against by default: its library
        variants (one per backend); without one, its first cell (:func:`workbench.judge.compare.library_variants`
        judges stored rows the same way)."""
        groups: dict[Any, list[Cell]] = {}
        for c in self.cells:
            groups.setdefault((group_of(c), c.cache), []).append(c)
        out: set[str] = set()
        for members in groups.values():
            lib = [c for c in members if (v := variants(c.kernel).get(c.variant)) is not None and v.library]
            out |= {c.key for c in lib or members[:1]}
        return out

    def twins(self) -> set[str]:
        """Keys of the references given an A/A twin: one group of each kernel with something to compare
        (its largest size: the noisiest, usually), its library variant of each backend (without one, the
        group's first cell); as many as :data:`TWIN_SHARE` of the reserve pays for. One twin per kernel shows
        the run's floor; the rest of the reserve goes to extra rounds, which settle verdicts."""
        groups: dict[Any, list[Cell]] = {}
        for c in self.cells:
            if not c.unsupported and self.remaining(c) >= MIN_ROUNDS:
                groups.setdefault((group_of(c), c.cache), []).append(c)
        references = self.references()
        refs: dict[str, list[Cell]] = {}  # by kernel, in the spec's order: the last group with a pair wins
        for members in groups.values():
            if len(members) > 1:
                refs[members[0].kernel] = [c for c in members if c.key in references]
        order = [c for cells in refs.values() for c in cells]
        cost = self.rounds * (self._round_cost(order[0]) if order else 0.0)
        n = int(TWIN_SHARE * self.pool_s // cost) if cost > 0 else 0
        return {c.key for c in order[:n]}

    def _round_cost(self, cell: Cell) -> float:
        """Seconds one later-round visit of ``cell`` is expected to cost: its warm-up and timing, plus the
        overhead measured on this sweep's later rounds (:data:`VISIT_OVERHEAD_S` before any)."""
        if self._visit_s:
            return statistics.median(self._visit_s)
        config = self._configs[cell.cache, True]
        return config.warmup_s + config.budget_s + VISIT_OVERHEAD_S

    def extra_rounds(self) -> Iterator[tuple[int, list[Cell]]]:
        """Extra rounds of the pairs :func:`workbench.judge.compare.undecided_pairs` still calls
        inconclusive (both cells of each pair) and of the cells whose median may rest on disturbed rounds
        (:meth:`disturbed`, with their baselines), while the reserve pays for them and for at most
        :data:`MAX_EXTRA_ROUNDS`. A cell left out of one extra round takes part in none after it, so the
        rounds it shares with its baseline stay the same rounds (rows pair on their ``round_ids``).
        Groups enter a round in a shuffled order until its expected cost would exceed what is left."""
        from workbench.judge.compare import undecided_pairs  # pandas: only once the planned rounds are done

        active, refs = {c.key for c in self.cells}, self.references()
        for r in range(self.rounds, self.rounds + MAX_EXTRA_ROUNDS):
            keys: set[str] = set()
            t0 = time.perf_counter()
            for row, base in undecided_pairs(self.rows[c.key] for c in self.cells if c.key in self.rows):
                if row in active and base in active:
                    keys |= {row, base}
            keys |= {k for k in self.disturbed() if k in active}
            self.pool_s -= time.perf_counter() - t0  # judging is paid from the reserve too
            due = round_order([c for c in self.cells if c.key in keys and not is_final(self.rows.get(c.key))],
                              group_of, self.spec.seed, r, anchor=lambda c: c.key in refs)
            fitted: list[Cell] = []
            budget = self.pool_s
            for _, members in _groups(due):
                cost = sum(self._round_cost(c) for c in members)
                if cost <= budget:
                    fitted += members
                    budget -= cost
            if not fitted:
                return
            active &= {c.key for c in fitted}
            yield from self._round(r, fitted)

    def disturbed(self) -> set[str]:
        """Keys of the cells whose median round is well above their fastest (:func:`median_above_fastest`: the
        median may rest on disturbed rounds), with each one's baseline, so their rounds stay paired."""
        out: set[str] = set()
        partners = self.partners()
        for c in self.cells:
            if median_above_fastest(self.rows.get(c.key)):
                out.add(c.key)
                if (ref := partners.get(c.key)) is not None:
                    out.add(ref.key)
        return out

    def partners(self) -> dict[str, Cell]:
        """Each cell's default baseline on its own backend (cell key -> the reference cell, see
        :meth:`references`), timed beside it in alternating blocks at every visit: the pair a report judges by
        default then rests on each visit's own ratio, not on two visits' medians taken seconds apart."""
        if self._partners is None:
            refs = self.references()
            by_place: dict[tuple, Cell] = {}
            for c in self.cells:
                if c.key in refs and not c.unsupported:
                    by_place.setdefault((group_of(c), c.cache, c.backend), c)
            self._partners = {c.key: ref for c in self.cells if c.key not in refs and not c.unsupported
                              and (ref := by_place.get((group_of(c), c.cache, c.backend))) is not None}
        return self._partners

    def _partner(self, cell: Cell, twin: bool, budget_s: float) -> Cell | None:
        """Whom ``cell`` is timed beside now: a twin's visit beside the reference itself (an A/A pair), a
        contender beside its baseline once that has been verified and timed ok; and only while a visit's
        budget (``budget_s``) holds :data:`~workbench.measure.timer.MIN_PAIRS` block pairs of the slower of
        the two, as far as their earlier rounds tell (unknown: while it is at least :data:`PAIR_BUDGET_S`).
        A pair of 50 ms calls would otherwise take 3-4 times a quick suite's visit, for drift that calls that
        long barely see. A cell whose paired visits could no longer add up to MIN_ROUNDS in the planned rounds
        is timed alone (extra rounds go on pairing a cell that has paired visits already)."""
        ref = cell if twin else self.partners().get(cell.key)
        if ref is None or (self.rows.get(ref.key) or {}).get("status") not in (Status.OK, Status.IMPLAUSIBLE):
            return None  # a baseline not yet verified and timed (one that crashes its worker would take the cell)
        row = self.rows.get(cell.key) or {}
        paired = len(effects(row.get(TWIN_PAIR_D if twin else PAIR_D)))
        n_prev = rounds_done(row) - (1 if twin else 0)  # a twin's visit comes after its own of the round
        left = self.rounds - n_prev if n_prev < self.rounds else 0
        if paired + left < MIN_ROUNDS and not (left == 0 and paired):
            return None  # its paired visits could not reach a verdict's rounds: time it alone, as before
        medians = [m for c in (cell, ref) if (m := (self.rows.get(c.key) or {}).get("median_s"))]
        if len(medians) < 2:
            return ref if budget_s >= PAIR_BUDGET_S else None
        return ref if max(medians) * MIN_PAIRS <= budget_s else None

    def request(self, cell: Cell, ceilings: Mapping[str, Peaks]) -> CellRequest:
        """How to run ``cell`` in its next round (``ceilings``: by backend, where the cells run here). A
        twin's visit, and an extra round, warm up and time only: the cell's own rounds check its output."""
        n_prev = rounds_done(self.rows.get(cell.key))
        twin = cell.key in self._requested
        self._requested.add(cell.key)
        role = RoundRole.LATER if twin or n_prev >= self.rounds else RoundRole.of(n_prev, self.rounds)
        config = self._configs[cell.cache, n_prev > 0 or twin]
        return CellRequest(cell, config, role, self.spec.seed, self.spec.timeout_s, self.spec.build_timeout_s,
                           ceilings.get(cell.backend), round=n_prev + 1,
                           partner=self._partner(cell, twin, config.budget_s))

    # -- hung variants ---------------------------------------------------------------------------------------------
    def past_the_cache(self, cells: Sequence[Cell], llc_bytes: int | None) -> bool:
        """Whether any of ``cells`` moves more bytes a call than the last-level cache holds (its spec's count;
        with no LLC known, more than the bandwidth probe's smallest array): such a round gets a bandwidth probe."""
        self._llc_bytes = llc_bytes
        return any(self._past_cache(cell) for cell in cells if not cell.unsupported)

    def _past_cache(self, cell: Cell) -> bool:
        """Whether one call of ``cell`` moves more bytes than the last-level cache holds (the spec's count)."""
        if cell.key not in self._bytes:
            try:
                spec = get_kernel(cell.kernel)
                self._bytes[cell.key] = work(spec, spec.validate_params(cell.params_dict), cell.dtype)[1]
            except Exception:  # noqa: BLE001 - a cell its spec cannot size is judged when it runs, not here
                self._bytes[cell.key] = 0.0
        return self._bytes[cell.key] > (self._llc_bytes or MIN_BANDWIDTH_BYTES)

    def note_hang(self, cell: Cell, result: CellResult) -> None:
        """Remember a variant whose cell timed out before its first call returned (a build or a first call that
        never came back): its other cells in this sweep are not run (:meth:`hung_before`)."""
        if result.status == Status.TIMEOUT and result.timing.first_call_s is None:
            self._hung.setdefault(_variant_of(cell), f"{size_label(cell.params_dict)}: {result.message or 'timeout'}")

    def hung_before(self, cell: Cell) -> str | None:
        """Why ``cell`` is not run: its variant hung at another size of this sweep (each hang costs the wait for
        its first call, 5 s or more, and a worker restart; a 12-cell sweep of a catalog with one hanging
        variant spent 14 s on its two sizes). None when it runs."""
        why = self._hung.get(_variant_of(cell))
        if why is None or self.rows.get(cell.key) is not None:
            return None
        build = getattr(variants(cell.kernel).get(cell.variant), "build", None)
        if getattr(build, "give_up", None) is not None:  # quick()'s callables: its own rule (larger sizes only)
            return None
        return (f"not run: {cell.kernel}/{cell.variant} on {cell.backend} hung earlier in this sweep at {why}; "
                "taken to hang at this size too (run it alone with `workbench bench --variants "
                f"{cell.variant} --sizes ...` to see)")

    # -- results coming in ----------------------------------------------------------------------------------------
    def merged(self, cell: Cell, result: CellResult, run_id: str, env_id: str) -> StoredRow:
        """The cell's row after this result (its rounds so far and this one), as the store is to keep it."""
        new = result.to_row()
        new.update(run_id=run_id, env_id=new.get("env_id") or env_id,  # a Dask worker's result: its machine's
                   llm_shape=self._shapes.get((cell.kernel, cell.params)), speed_probe_s=self.speed_probe_s,
                   # the host's bandwidth only on the rows it bears on: a cache-resident cell's time does not follow
                   # the memory bus, and the probe's own spread would only widen its comparisons
                   bandwidth_probe_gbs=(self.bandwidth_probe_gbs if self.bandwidth_probe_gbs is not None
                                        and self._past_cache(cell) else None))
        prev = self.rows.get(cell.key)
        if cell.key in self._visited and prev is not None:  # its second visit this round: the A/A twin
            return merge_twin(prev, new, self._round_id)
        return shared_host_note(merge_pair(prev, label_round(prev, merge_rounds(prev, new), self._round_id), new,
                                           self._round_id))

    def keep(self, cell: Cell, row: StoredRow) -> int:
        """Keep ``row`` (stored) as the cell's; returns the progress it makes, in cell visits (a cell that
        ended early also completes its rounds left; a twin's visit and an extra round make none: the bar
        counts the planned rounds). What the visit cost is paid from the reserve when it was not planned."""
        now = time.perf_counter()
        cost, self._last_keep = now - self._last_keep, now
        twin = cell.key in self._visited
        self._visited.add(cell.key)
        left = self.remaining(cell)  # rounds it still needed, this one included
        self.rows[cell.key] = row
        self.touched.add(cell.key)
        if self._round_index > 0:
            self._visit_s.append(cost)
        if twin or self._extra:
            self.pool_s -= cost
            return 0
        # a cell that ended early completes the rounds it had left, counted before this row (a worker crash in
        # round 2 of 5 counted 1 + 5 - 1: the bar read "6/5 cell rounds (120%)")
        step = left if is_final(row) else 1
        self.done += step
        return step

    def round_label(self, request: CellRequest) -> str:
        """The round a request belongs to, for a progress label: "round 2/3", "extra round 4" (undecided pairs)."""
        return f"extra round {request.round}" if request.round > self.rounds else f"round {request.round}/{self.rounds}"

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


def _groups(cells: list[Cell]) -> Iterator[tuple[Any, list[Cell]]]:
    """``cells`` (groups back to back) as (group, its cells), in order."""
    out: dict[Any, list[Cell]] = {}
    for c in cells:
        out.setdefault(group_of(c), []).append(c)
    yield from out.items()


def references_first(due: list[Cell], refs: set[str]) -> list[Cell]:
    """``due`` with each group's references moved to just before its first other cell (the rest in order):
    in round 1 the contenders come after the baseline they are timed beside, which has then been verified
    and timed on its own (a baseline that crashes its worker process ends there, not inside a contender's
    visit)."""
    by_group: dict[Any, list[Cell]] = {}
    for c in due:
        if c.key in refs:
            by_group.setdefault((group_of(c), c.cache), []).append(c)
    out: list[Cell] = []
    placed: set[Any] = set()
    for c in due:
        g = (group_of(c), c.cache)
        if g not in placed:
            placed.add(g)
            out += by_group.get(g, [])
        if c.key not in refs:
            out.append(c)
    return out


def with_twins(due: list[Cell], twins: set[str], seed: int, round_index: int) -> list[Cell]:
    """``due`` (groups back to back) with a second visit of each twin reference in its group: at the group's
    end in round 0 (its own first visit builds and verifies it), else at a random place not next to its own
    visit, so the pair is as far apart as its contenders are from it."""
    if not twins:
        return due
    rng = random.Random(round_seed(seed, round_index) + ":twins")
    out: list[Cell] = []
    for _, members in _groups(due):
        for ref in [c for c in members if c.key in twins]:
            at = members.index(ref)
            slots = [i for i in range(len(members) + 1) if i not in (at, at + 1)]
            where = len(members) if round_index == 0 or not slots else rng.choice(slots)
            members = members[:where] + [ref] + members[where:]
        out += members
    return out


def _variant_of(cell: Cell) -> tuple[str, str, str, str]:
    return cell.kernel, cell.variant, cell.backend, cell.dtype
