"""Tutorials 06-08: each printed figure follows the numbers beside it (issue 39's readers' classes)."""

import json
from typing import Any

import pytest

from tests.unit.test_tutorial_10_11_sentences import helpers


def test_a_bimodal_cell_prints_both_modes_not_a_headline():
    # 06's readers: the pivot showed a bimodal cell's slow mode (6.64 ms) unmarked beside "the gap is unsettled";
    # 06's pivot prints report.marked_times (it had its own cell_time)
    import pandas as pd

    from workbench.report.marked_times import marked_times

    cell = {"kernel": "k", "variant": "v", "backend": "numpy", "dtype": "float32", "status": "ok"}
    rows = pd.DataFrame([
        {**cell, "size_label": "n=1", "round_medians_s": json.dumps([3.45e-3, 3.46e-3, 6.64e-3]), "median_s": 6.64e-3},
        {**cell, "size_label": "n=2", "round_medians_s": json.dumps([3.45e-3, 3.46e-3, 3.5e-3]), "median_s": 3.46e-3}])
    bimodal, one = marked_times(rows)
    assert bimodal.startswith("two modes: ") and "(2 rounds)" in bimodal and "(1 round)" in bimodal
    assert not one.startswith("two modes")


@pytest.fixture(scope="module")
def nb07() -> dict[str, Any]:
    return helpers("07_reports")


@pytest.mark.parametrize(("lo", "hi"), [(0.87, 1.10), (0.952, 1.049), (0.5, 0.9), (1.02, 1.31)])
def test_a_bound_is_one_of_the_printed_ends_of_its_interval(nb07, lo, hi):
    # 07's readers: "0.9×-1.1×" beside "more than 1.15×", a bound drawn from the interval's unrounded end
    b_lo, b_hi = (x.removesuffix("×") for x in nb07["b_over_a"](lo, hi))
    assert len(b_lo.split(".")[-1]) == len(b_hi.split(".")[-1])   # one precision
    unit = 10 ** -len(b_lo.split(".")[-1]) if "." in b_lo else 1
    # rounded outward, by less than one printed unit: each end is still a bound
    assert 1 / hi - unit < float(b_lo) <= 1 / hi and 1 / lo <= float(b_hi) < 1 / lo + unit


def test_an_idle_rerun_is_advised_only_where_it_can_settle_it(nb07):
    # 07's readers: "rerun this machine's side while it is otherwise idle" beside a scatter of ±19% (3 sigmas ±57%)
    busy = "other processes used up to 80% of the CPU"
    assert nb07["blamed_busy"](0.174, busy, 0.5) == ""          # e^(3·0.174)-1 = 69%: the scatter alone passes ±50%
    assert nb07["blamed_busy"](0.05, busy, 0.5) == busy         # a narrow scatter: this machine's rounds widen it
    assert nb07["blamed_busy"](0.05, busy, 0.01) == ""          # its rounds agreed closer than the scatter
    assert nb07["blamed_busy"](0.05, "", 0.5) == ""


def test_a_figure_draws_no_band_the_table_withholds_as_disturbed():
    # 08's readers: figures drew quartile bands for cells the summary table read "disturbed" (IQR past ±50%)
    import numpy as np
    import pandas as pd

    from workbench.report.plots.lines import quartile_band

    g = pd.DataFrame({"median_s": [1.0, 1.0], "q1_s": [0.9, 0.5], "q3_s": [1.1, 1.7], "iqr_s": [0.2, 1.2],
                      "gbps": [2.0, 2.0]})
    for metric in ("median_s", "gbps"):
        lo, hi = quartile_band(g, metric)
        assert np.isfinite([lo[0], hi[0]]).all() and np.isnan([lo[1], hi[1]]).all()


@pytest.fixture(scope="module")
def nb08() -> dict[str, Any]:
    return helpers("08_compare_functions")


def test_a_paired_interval_is_said_in_its_estimates_direction(nb08):
    # 08's readers: "took 1.03x the time paired ... (paired interval 0.94x-1.01x)", the speed-up's interval
    slower = {"speedup": 1 / 1.03, "ci_low": 0.94, "ci_high": 1.01}
    said = nb08["paired_interval"](slower, "torch")
    # its coverage named, its ends rounded outward (1/0.94 = 1.064)
    assert said.startswith("paired 97.5% interval: torch took 0.99") and said.endswith("1.07× the time")
    faster = {"speedup": 1.07, "ci_low": 1.02, "ci_high": 1.12}
    assert nb08["paired_interval"](faster, "torch") == "paired 97.5% interval 1.02×-1.12×, as torch's speed-up"


def test_a_settled_pair_beside_a_disturbed_cell_says_what_it_rests_on(nb08):
    import pandas as pd

    df = pd.DataFrame({"size_label": ["n=64"] * 2, "variant": ["numpy", "torch"], "status": ["ok"] * 2,
                       "median_s": [1e-3, 2.5e-4], "iqr_s": [8e-4, 1e-5]})
    v = {"size_label": "n=64", "floor": 0.2}
    assert "reads numpy disturbed" in nb08["disturbed_cells_note"](df, v, ["numpy", "torch"])
    assert nb08["disturbed_cells_note"](df.assign(iqr_s=[1e-4, 1e-5]), v, ["numpy", "torch"]) == ""
    assert nb08["disturbed_cells_note"](df, {**v, "floor": 0.9}, ["numpy", "torch"]) == ""   # said disturbed already


def test_a_tutorial_defines_disturbed_by_the_cell_rule_only():
    """08 printed the timeit repr's "disturbed (its quartiles lie half its median or more apart ...)" and, a cell
    later, "disturbed (round spread past 50% or quartiles wider than the median)": two rules under one word. A
    printed rule beside "disturbed" in any tutorial is the cell rule (judge.disturbed.CELL_RULE), in its words."""
    import re
    from pathlib import Path

    from workbench.judge.disturbed import CELL_RULE

    head = CELL_RULE.split(" (")[0]   # "its quartiles lie half its median or more apart"
    for source in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("_nb_*.py")):
        for n, line in enumerate(source.read_text().splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for said in re.findall(r"disturbed \(([^)]*)", line):
                if re.search(r"quartil|spread|IQR|round", said):
                    assert said.startswith((head, "{CELL_RULE}")), f"{source.name}:{n}: disturbed ({said}"


def test_a_direction_on_a_disturbed_cell_is_said_and_counted_apart(nb07):
    """07: "faster at 2 of 5 sizes ... as the text above expects" counted a size whose run A numba cell its figure
    crossed out; its sentence did not say so. Counted apart, never as settled, and its sentence names the cell."""
    import types

    import pandas as pd

    cell = {"variant": "numba", "backend": "numba"}
    nb07["run_a"] = types.SimpleNamespace(run_id="A")
    nb07["df"] = pd.DataFrame([
        {**cell, "size_label": "n=1", "run_id": "A", "median_s": 1.0, "iqr_s": 0.1},
        {**cell, "size_label": "n=1", "run_id": "B", "median_s": 0.8, "iqr_s": 0.1},
        {**cell, "size_label": "n=2", "run_id": "A", "median_s": 1.0, "iqr_s": 0.9},   # disturbed: IQR 90%
        {**cell, "size_label": "n=2", "run_id": "B", "median_s": 0.5, "iqr_s": 0.05}])
    faster = {"verdict": "faster", "speedup": 1.25, "ci_low": 1.15, "ci_high": 1.35, "floor": 0.1}
    g = pd.DataFrame([{**cell, "size_label": "n=1", **faster}, {**cell, "size_label": "n=2", **faster}])
    said, counts = nb07["counted"](g)
    assert list(said) == ["faster", "inconclusive"]   # the checks read the disturbed size as no finding
    assert counts.startswith("faster at 1 of 2 sizes (1 more rests on a disturbed comparison or cell")
    assert "could not tell" not in counts and counts.endswith("faster at n=2)")
    note = nb07["cell_note"](g.iloc[1].to_dict(), "")
    assert note.startswith("; run A's numba cell is disturbed (its quartiles lie half") and "no value" in note
    assert nb07["cell_note"](g.iloc[0].to_dict(), "") == ""


def test_the_rerun_advice_comes_from_the_part_of_the_noise_that_dominates(nb07):
    """07: "compare about 2 runs a side" (from the runs' ±1.0%) beside "its own rounds make most of its noise" (8.9×
    either way), and on a busy machine "(more rounds ... add its disturbance too) (its own rounds make most of its
    noise)": one advice, from the dominant part, with no count of runs drawn from the other."""
    import math

    rounds_heavy = nb07["rerun_advice"](math.log(8.9), 0.01, True)
    assert "runs a side (" not in rounds_heavy and "compare about" not in rounds_heavy
    assert rounds_heavy.count("(") == 1 and "otherwise idle" in rounds_heavy and "its own rounds" in rounds_heavy
    assert "more rounds in each run" in nb07["rerun_advice"](math.log(8.9), 0.01, False)
    runs_heavy = nb07["rerun_advice"](0.05, 0.045, False)   # the runs' scatter is most of it: runs, with a count
    assert "runs a side" in runs_heavy and "its own rounds" not in runs_heavy


def test_the_noisy_column_and_the_printed_own_rounds_follow_one_rule(nb07):
    # 07's readers: "noisy: no" beside a line reading "its interval rests on its own rounds (±19%)", past the 10% a
    # cell's rounds are held to: the column now marks what the line prints, and says which rule marked it
    import math

    run = math.log1p(0.02)
    own19 = {"noise": math.hypot(math.log1p(0.19), run), "noisy": False}
    assert nb07["noisy_mark"](own19, run) == "yes: its own rounds ±19.0%"
    quiet = {"noise": math.hypot(math.log1p(0.035), run), "noisy": False}
    assert nb07["noisy_mark"](quiet, run) == "no"
    assert nb07["noisy_mark"]({**quiet, "noisy": True}, run) == "yes: a cell's mark"



def test_no_bound_is_read_from_a_comparison_resting_on_a_disturbed_cell(nb07):
    # 07 printed "the comparison was disturbed, as it rests on a disturbed cell (run A's cell); by its interval run
    # B took 0.061x-0.068x run A's time": a figure beside its own "no ratio is read from it"
    v = {"verdict": "inconclusive", "speedup": 15.5, "ci_low": 14.7, "ci_high": 16.4, "floor": 0.2}
    text = "run B against run A: the comparison was disturbed, as it rests on a disturbed cell: no ratio is read"
    assert nb07["interval_bound"](v, text, text.split(":")[0]) is None
    assert nb07["interval_bound"](v, "could not tell run B from run A", "could not tell") is not None   # the rule
    plain = "could not tell run B from run A: run B measured 1.02x faster, within its ±20% noise floor"
    near = {**v, "speedup": 1.02, "ci_low": 0.85, "ci_high": 1.2}
    assert nb07["interval_bound"](near, plain, plain).startswith("; by its interval run B took 0.83")
    assert nb07["interval_bound"](near, plain, plain + " (99% interval (0.85x-1.20x))") == ""
    assert nb07["interval_bound"](near, plain, "run B measured 1.01x faster (99% interval 0.97x-1.06x)") == ""


def test_a_pair_with_a_cell_the_pivot_marks_disturbed_reads_no_ratio():
    # 06 printed "float32 was faster: float16 took 24.0x its time (97.5% interval 23.2x-25.0x)" of a float16 cell its
    # pivot marked "~ 961 µs, disturbed", and its summary then counted one shape fewer as settled
    from workbench.report.claims import check_claim, verdict_claim

    nb06 = helpers("06_llm_shapes")
    calm = {"median_s": 40e-6, "q1_s": 39e-6, "q3_s": 41e-6, "iqr_s": 2e-6}
    wide = {"median_s": 961e-6, "q1_s": 700e-6, "q3_s": 1400e-6, "iqr_s": 700e-6}
    fields = nb06["disturbed_fields"](calm, wide)
    assert fields == {"cells_disturbed": 1, "disturbed_cells": "float16"}
    v = {"verdict": "slower", "speedup": 1 / 24.0, "ci_low": 1 / 25.0, "ci_high": 1 / 23.2, "floor": 0.05, **fields}
    claim = verdict_claim(v, "float32", "float16")
    check_claim(v, claim.text())
    assert "24" not in claim.text() and "rests on a disturbed cell (float16's cell)" in claim.head
    assert nb06["disturbed_fields"](calm, calm)["cells_disturbed"] == 0


def test_a_disturbed_cell_prints_no_median_and_no_noisy_mark():
    # 06's readers: the pivot printed "~ 63 µs, disturbed" of the cell the figure crosses out "not among the hollow
    # ones", whose legend says "its median is no value to read" (docs/statistics.md: it "prints no median")
    import pandas as pd

    from workbench.report.marked_times import marked_times

    cell = {"kernel": "k", "variant": "v", "backend": "numpy", "dtype": "float32", "status": "ok", "noisy": True,
            "rel_spread": 0.6, "round_medians_s": json.dumps([60e-6, 63e-6, 66e-6])}
    rows = pd.DataFrame([{**cell, "size_label": "n=1", "median_s": 63e-6, "q1_s": 40e-6, "q3_s": 90e-6,
                          "iqr_s": 50e-6},
                         {**cell, "size_label": "n=2", "median_s": 63e-6, "q1_s": 60e-6, "q3_s": 66e-6,
                          "iqr_s": 6e-6}])
    wide, narrow = marked_times(rows)
    assert wide == "disturbed"
    assert narrow.startswith("~ ") and "63" in narrow


def test_every_hand_drawn_disturbed_mark_is_given_the_quartiles_it_draws():
    # 06's readers: its legend read "an x at each [quartile], dotted between" while its hand-drawn figure showed one
    # x near the median: it called mark_disturbed without the cells' quartiles (span=), the one-x fallback
    import re
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    calls = []
    for path in sorted(notebooks.glob("_nb_*.py")):
        text = path.read_text()
        for m in re.finditer(r"mark_disturbed\(", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            calls.append((path.name, text[m.start():i]))
    assert calls
    assert [name for name, call in calls if "span=" not in call] == []


def test_a_hand_drawn_figure_draws_a_disturbed_two_mode_cell_as_disturbed():
    # 06's idle reader: the legend counted "bar: two-mode cell (2)" while the table read "disturbed" for the same
    # cells (report.marked_times: a disturbed cell reads "disturbed" alone, whatever its modes). A notebook that
    # masks its two-mode cells out of the disturbed ones draws them as bars: the table's rule is disturbed first.
    import re
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    found = [p.name for p in sorted(notebooks.glob("_nb_*.py"))
             if re.search(r"disturbed_mask\([^)]*\)\s*&\s*~\s*two", p.read_text())]
    assert found == []


def _timed(median: float, q1: float, q3: float) -> Any:
    from types import SimpleNamespace

    from workbench.judge.verdicts import spread_disturbed
    return SimpleNamespace(median_s=median, q1_s=q1, q3_s=q3, disturbed=spread_disturbed(q3 - q1, median))


def test_two_timeits_are_said_to_their_printed_figures_without_restating_the_rule(nb08):
    """08's reader: "timeit 4 ms" of a line claiming three significant figures, and the cell rule printed a third
    time, in nested parentheses after a plural subject ("timeit and %wb_timeit were disturbed (its quartiles ...")."""
    from workbench.judge.disturbed import CELL_RULE

    said = nb08["agreement"](_timed(4.0e-3, 1e-3, 8e-3), _timed(5.36e-3, 1e-3, 9e-3))
    assert said.startswith("timeit 4.00 ms, %wb_timeit 5.36 ms median: both read disturbed")
    assert CELL_RULE not in said and "its quartiles" not in said and "cannot be read" in said
    agree = nb08["agreement"](_timed(4.0e-3, 3.9e-3, 4.2e-3), _timed(4.1e-3, 3.95e-3, 4.3e-3))
    assert agree.endswith("each median lies within the other's quartiles: they agree.")


def test_the_timeit_is_set_beside_a_printed_torch_row_per_row(nb08):
    """08's reader: the text named "its torch row at 2048 rows" of a run that measured n=64 and n=257 only, and left
    the gap the printed rows show unsaid (80.6 µs / 257 against 4 ms / 4096 a row)."""
    import pandas as pd

    df = pd.DataFrame({"variant": ["torch", "torch", "numpy"], "status": ["ok"] * 3, "size": [64, 257, 257],
                       "size_label": ["n=64", "n=257", "n=257"], "median_s": [22.2e-6, 80.6e-6, 317e-6],
                       "iqr_s": [6.7e-7, 3.4e-6, 1.4e-5]})
    said = nb08["per_row_note"](df, _timed(4.0e-3, 1e-3, 8e-3), 4096)
    assert "2048" not in said and "torch row at n=257 took 80.6 µs, 314 ns a row" in said
    assert "4.00 ms for 4096 rows, 977 ns a row" in said and "3.1×" in said and "read disturbed" in said
    wide = df.assign(iqr_s=[6.7e-7, 9e-5, 1.4e-5])   # n=257 disturbed: its median is not printed, so not used
    assert "torch row at n=64" in nb08["per_row_note"](wide, _timed(4.0e-3, 3.9e-3, 4.2e-3), 4096)
    close = nb08["per_row_note"](df, _timed(1.30e-3, 1.2e-3, 1.4e-3), 4096)   # 317 ns against 314 ns a row: no gap
    assert "within 1% of each other a row" in close and "gap" not in close and "read disturbed" not in close


def test_the_figure_is_said_with_what_its_axis_can_show(nb08):
    """08's reader: no sentence referred to the figure, and the settled 8% numpy / numpy-naive gap could not be seen
    on its 0-25 GB/s axis."""
    import pandas as pd

    df = pd.DataFrame({"variant": ["numpy", "torch", "numpy-naive"] * 2, "status": ["ok"] * 6,
                       "size": [64] * 3 + [257] * 3, "gbps": [6.46, 23.6, 5.97, 6.64, 26.1, 6.1],
                       "median_s": [81.2e-6, 22.2e-6, 87.8e-6, 317e-6, 80.6e-6, 345e-6],
                       "iqr_s": [2e-6, 6.7e-7, 2.6e-6, 1.4e-5, 3.4e-6, 2.1e-5]})
    said = nb08["figure_note"](df, 27.0)
    assert "0 to 27 GB/s" in said and "torch 23.6–26.1" in said and "too small to see there" in said
    assert "0.49–0.54 GB/s from numpy" in said
    assert "visible there" in nb08["figure_note"](df.assign(gbps=[6.46, 23.6, 3.0, 6.64, 26.1, 3.1]), 27.0)
