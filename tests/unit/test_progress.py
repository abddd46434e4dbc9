"""Progress that reaches a log: a line per finished group or every 10 s, with cells done / total and the time left."""

from __future__ import annotations

import io

import pytest

from workbench.core.progress import LogProgress, TerminalProgress, TimeLeft, fmt_duration, join_status, make_progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_log_gets_a_line_per_finished_group_with_the_time_left():
    out, clock = io.StringIO(), Clock()
    p = LogProgress(10, stream=out, clock=clock)
    p.set_group("round 1/2: saxpy")
    p.set_description_str("round 1/2: saxpy/numpy")
    clock.t = 4.0
    p.update(4)
    assert out.getvalue() == ""  # within a group and under 10 s: quiet
    p.set_group("round 1/2: gemm")
    line = out.getvalue().strip()
    assert line == "4/10 cell rounds (40%), 4 s elapsed, about 6 s left: round 1/2: saxpy done"


def test_a_long_group_still_writes_every_ten_seconds():
    out, clock = io.StringIO(), Clock()
    p = LogProgress(100, initial=50, stream=out, clock=clock)
    p.set_group("gemm")
    p.set_description_str("gemm/numba-tiled on numba")
    clock.t = 10.5
    p.set_postfix_str("running 10.5 s")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("50/100 cell rounds (50%), 10 s elapsed: gemm/numba-tiled")
    assert "(running 10.5 s)" in lines[0] and "left" not in lines[0]  # none of this run's cells done yet
    clock.t = 12.0
    p.update(2)  # 2 s after the last line: nothing
    assert len(out.getvalue().splitlines()) == 1
    clock.t = 21.0
    p.update(1)
    assert "about 5 min 29 s left" in out.getvalue().splitlines()[-1]  # 3 cells in 21 s: 47 to go take 329 s


def test_the_last_group_is_reported_on_close():
    out, clock = io.StringIO(), Clock()
    p = LogProgress(2, stream=out, clock=clock)
    p.set_group("softmax")
    p.update(2)
    p.close()
    assert out.getvalue().strip().endswith("softmax done") and "2/2 cell rounds (100%)" in out.getvalue()


def test_terminal_or_log():
    assert make_progress(3, enabled=False) is None
    assert isinstance(make_progress(3, stream=io.StringIO()), LogProgress)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    bar = make_progress(3, stream=Tty())
    assert isinstance(bar, TerminalProgress)
    bar.set_group("x")
    bar.update(1)
    bar.close()


def test_durations():
    assert [fmt_duration(s) for s in (0.4, 59, 61, 3599, 3725)] == ["0 s", "59 s", "1 min 01 s", "59 min 59 s",
                                                                     "1 h 02 min"]


def test_a_line_before_any_cell_names_the_stage_never_an_empty_status():
    """Issue 38: the first line of a sweep read ``15 s elapsed:  (running 15.3 s)``, nothing named."""
    out, clock = io.StringIO(), Clock()
    p = LogProgress(306, stream=out, clock=clock)
    clock.t = 15.0
    p.set_postfix_str("running 15.3 s")
    assert out.getvalue().strip() == "0/306 cell rounds (0%), 15 s elapsed: running 15.3 s"
    assert join_status("", "") == "" and join_status("x", "") == "x" and join_status("x", "y") == "x (y)"


def test_time_left_counts_first_visits_apart_from_later_ones():
    """The quick suite's shape: a first visit (inputs, reference, checks) costs ~4x a later one, and 15 s go
    before the first cell. The rate so far (setup and first visits) read 3-4x the time left; the visits
    measured read it within the truth's spread."""
    cells, rounds, first_s, later_s, setup_s = [f"c{i}" for i in range(100)], 3, 3.0, 0.5, 15.0
    est = TimeLeft(rounds)
    for key in cells[:50]:  # half of round 1 done
        est.add(key, first_s, first=True)
    remaining = {k: rounds - 1 if k in cells[:50] else rounds for k in cells}
    truth = 50 * first_s + (sum(remaining.values()) - 50) * later_s
    naive = (setup_s + 50 * first_s) / 50 * sum(remaining.values())
    before = est.seconds_left(remaining)  # no later visit measured, no prior: a first visit's cost, no setup
    assert naive > 3 * truth and before < naive
    est.add(cells[0], later_s, first=False)  # one later visit measured: its ratio to the first applies
    remaining[cells[0]] -= 1
    truth -= later_s
    assert est.seconds_left(remaining) == pytest.approx(truth, rel=0.01)
    prior = TimeLeft(rounds, later_prior_s=later_s)  # the spec's budget per visit: a prior for later visits
    for key in cells[:50]:
        prior.add(key, first_s)
    assert prior.seconds_left({k: rounds - 1 if k in cells[:50] else rounds for k in cells}) == pytest.approx(
        truth + later_s)
    assert TimeLeft(3).seconds_left({"a": 3}) is None  # nothing measured: no guess


def test_log_progress_takes_the_sweeps_estimate():
    out, clock = io.StringIO(), Clock()
    p = LogProgress(10, stream=out, clock=clock)
    p.time_left = lambda: 42.0
    clock.t = 11.0
    p.update(1)
    assert "about 42 s left" in out.getvalue()


def test_a_sweeps_log_names_each_stage_and_estimates_from_its_visits(monkeypatch, capsys):
    from workbench.core import progress
    from workbench.sweep.driver import SweepSpec, run_sweep

    monkeypatch.setattr(progress.LogProgress.__init__, "__defaults__", (0, None, 0.0, progress.time.monotonic))
    monkeypatch.setenv("WORKBENCH_AUTO_PEAKS", "0")
    spec = SweepSpec(kernels=["saxpy"], variants=["numpy"], backends=["numpy"], sizes=[(4096,), (8192,)],
                     warmup_s=0.001, budget_s=0.01, min_samples=3, n_inputs=1, rounds=2, isolation="in-process")
    run_sweep(spec, progress=True, store=None)
    lines = capsys.readouterr().err.splitlines()
    assert any(line.endswith(": starting workers (numpy)") for line in lines), lines
    assert any("preparing numpy and its ceilings" in line for line in lines)
    assert not any(":  (" in line or line.endswith(": ") for line in lines)
    assert any("left:" in line for line in lines[2:])  # visits measured: a time left


def test_a_terminal_bar_shows_no_rate_so_far_estimate():
    """tqdm's own "<remaining" (its rate so far: set-up and first visits) read 3-4x long; the sweep's estimate
    goes in the postfix instead."""
    class Tty(io.StringIO):
        def isatty(self):
            return True

    bar = make_progress(3, stream=Tty())
    assert "{remaining}" not in bar.bar.bar_format and "{postfix}" in bar.bar.bar_format
    bar.close()
