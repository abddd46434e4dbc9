"""Progress that reaches a log: a line per finished group or every 10 s, with cells done / total and the time left."""

from __future__ import annotations

import io

from workbench.core.progress import LogProgress, TerminalProgress, fmt_duration, make_progress


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
