"""The typed spine: a CellRequest in, a CellResult out, one executor protocol, a sweep plan from spec and store."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from workbench.core.record import RESULT_COLUMNS, STATUSES, Row
from workbench.core.status import Status
from workbench.measure.cell import Cell, CheckOnly, failed_result
from workbench.measure.isolation import InProcessExecutor
from workbench.measure.messages import CellDone, RunCell
from workbench.measure.request import CellRequest, RoundRole
from workbench.measure.result import _IDENTITY, _OWN, _PARTS, SWEEP_COLUMNS, CellResult
from workbench.measure.timer import Cancelled, TimingConfig
from workbench.store.database import Store
from workbench.sweep.driver import SweepSpec
from workbench.sweep.plan import SweepPlan

FAST = TimingConfig(warmup_s=0.001, budget_s=0.01, min_samples=3, max_samples=20, n_inputs=2)
CELL = Cell.make("vector_add", "numpy", "numpy", "float32", {"n": 1000})


def test_record_statuses_are_the_status_enum_but_implausible():
    assert STATUSES == tuple(s.value for s in Status if s is not Status.IMPLAUSIBLE)


def test_every_result_column_has_one_home():
    fields = [*_IDENTITY, *_OWN, *SWEEP_COLUMNS, *(f.name for k in _PARTS.values() for f in dataclasses.fields(k))]
    assert sorted(fields) == sorted(RESULT_COLUMNS) and len(fields) == len(set(fields))


#: Where a result's part holds a column's value unencoded (the row stores the samples as JSON text).
UNENCODED = {"samples_s": "list[float] | None", "host_samples_s": "list[float] | None"}


@pytest.mark.parametrize("part", sorted(_PARTS))
def test_a_result_part_declares_its_columns_as_the_row_types_them(part):
    """The parts are written out by hand (readers and type checkers see their fields): each field must stay the
    stored column of that name (docs/measurement-record.md, via Row), with Row's type, and default to None."""
    row_types = {f.name: str(f.type) for f in dataclasses.fields(Row)}
    for f in dataclasses.fields(_PARTS[part]):
        assert f.name in RESULT_COLUMNS, (part, f.name)
        assert str(f.type) == UNENCODED.get(f.name, row_types[f.name]), (part, f.name, f.type)
        assert f.default is None, (part, f.name)


@pytest.mark.parametrize("done, rounds, role", [(0, 1, RoundRole.FIRST), (0, 3, RoundRole.FIRST),
                                                (1, 3, RoundRole.LATER), (2, 3, RoundRole.LAST)])
def test_the_round_role_says_what_a_round_does(done, rounds, role):
    got = RoundRole.of(done, rounds)
    assert got is role
    assert got.later == (done > 0) and got.check_after == (done == 0 or done + 1 >= rounds)
    assert RoundRole.of_flags(got.later, got.check_after) is got


def test_a_measured_result_round_trips_through_its_row():
    with _executor() as ex:
        ((request, res),) = list(ex.run([CellRequest(CELL, FAST, timeout_s=30)]))
    assert isinstance(res, CellResult) and res.status is Status.OK and res.cell == CELL
    assert res.timing.n_samples >= 3 and res.timing.median_s > 0 and res.rates.gbps > 0
    row = res.to_row()
    assert set(RESULT_COLUMNS) <= set(row) and row["status"] == "ok" and type(row["status"]) is str
    assert isinstance(row["samples_s"], str) and row["cell_key"] == CELL.key
    assert CellResult.from_row(row).to_row() == row


def test_notes_follow_the_message_in_the_row():
    res = failed_result(CELL, Status.TIMEOUT, "no result", seed=3, started=0.0)
    res.note("its worker thread was abandoned")
    assert res.to_row()["message"] == "no result; its worker thread was abandoned"
    assert res.to_row()["seed"] == 3


def test_requests_and_results_cross_the_process_boundary_as_dataclasses():
    request = CellRequest(CELL, CheckOnly((0, 1)), RoundRole.LAST, seed=5, timeout_s=9.0, round=3)
    msg = pickle.loads(pickle.dumps(RunCell(1, request, None)))
    assert msg.request == request and msg.request.first_seed == 0
    done = pickle.loads(pickle.dumps(CellDone(1, failed_result(CELL, Status.CRASHED, "x", seed=5, started=0.0))))
    assert done.result.status is Status.CRASHED


def test_the_executor_protocol_runs_in_order_tells_each_start_and_stops_between_cells():
    cells = [Cell.make("vector_add", "numpy", "numpy", "float32", {"n": n}) for n in (100, 200, 300)]
    started, stop = [], [False]
    with _executor() as ex:
        it = ex.run([CellRequest(c, CheckOnly()) for c in cells], should_stop=lambda: stop[0],
                    on_start=lambda r: started.append(r.cell))
        first = next(it)
        assert first[0].cell == cells[0] and first[1].status is Status.OK and started == cells[:1]
        stop[0] = True
        with pytest.raises(Cancelled):
            next(it)
    assert started == cells[:1]


def test_the_plan_resumes_what_the_store_lacks(tmp_path):
    spec = SweepSpec(kernels=["vector_add"], variants=["numpy"], backends=["numpy"], sizes=[100, 200], rounds=2,
                     budget_s=0.01)
    plan = SweepPlan(spec)
    assert plan.missing() == 2 and plan.done == 0 and plan.total == 4 and plan.backends() == ["numpy"]
    (r, due), = [next(plan.rounds_due())]
    first = plan.request(due[0], {})
    assert r == 0 and first.role is RoundRole.FIRST and first.round == 1
    st = Store(tmp_path / "s.sqlite")
    run_id = st.new_run(spec=spec.to_dict())
    row = plan.merged(due[0], failed_result(due[0], Status.OK, "", seed=0, started=0.0), run_id, "env")
    st.record(row)
    assert plan.keep(due[0], row) == 1
    again = SweepPlan(spec, {r["cell_key"]: r for r in st.rows(run_id)})
    assert again.missing() == 2 and again.remaining(due[0]) == 1 and again.request(due[0], {}).role is RoundRole.LAST
    assert SweepPlan.stored_summary(st, run_id) == (1, 0, 2)


class _executor:
    """An in-process executor, closed on exit."""

    def __enter__(self) -> InProcessExecutor:
        self.ex = InProcessExecutor()
        return self.ex

    def __exit__(self, *exc: object) -> None:
        self.ex.close()
