"""Issue 39, tutorial 07 (idle run, 21:45): the summary under the lines of a two-run comparison said "of each
cell's noise (one sigma) its own rounds give ±7.7% to ±14%" over the undisturbed cells alone, beside lines reading
±25% and ±27%; it advised "about 2 runs a side" from ±1.0% while every line said its own rounds made most of its
noise; and a line quoted "23 µs for run A" beside its own note that run A's cell is disturbed."""

import math

from workbench.report.claims import verdict_sentence
from workbench.report.noise_parts import noise_parts_text, rerun_advice, summary_advice

RUN = math.log1p(0.010)   # the runs' scatter, ±1.0% (one sigma)


def _row(noise_pct: float, floor: float) -> dict:
    return {"noise": math.log1p(noise_pct / 100), "floor": floor}


# 07's numba lines: three undisturbed (own rounds ±7.7%, ±11%, ±14%; floors ±25%, ±32%, ±48%), two disturbed
# (own rounds ±25% and ±27%)
ROWS = [_row(7.8, 0.25), _row(11.0, 0.32), _row(14.0, 0.48), _row(25.0, 0.9), _row(27.0, 1.1)]


def test_the_summary_covers_the_cells_the_lines_print_disturbed_ones_apart():
    text = noise_parts_text(ROWS, RUN, "measured from the scatter of 5 matched cells")
    # comparisons, not cells: a "disturbed cell" is another thing (docs/statistics.md, "Disturbed comparisons")
    assert "Of the 3 undisturbed comparisons' noise" in text and "Of the 2 disturbed comparisons' noise" in text
    assert "cells' noise" not in text
    assert "noise floors, as the lines print them, ±25% to ±48%" in text    # the figures each line prints
    # the disturbed lines' own figures: their own rounds are nearly all of it (the runs' part is ±1.0%), said once
    assert "(±25% to ±27% one sigma;" in text and "nearly all comes from their own rounds" in text
    assert "each cell's noise" not in text


def test_which_part_weighs_more_is_said_once():
    # 07: "nearly all comes from their own rounds. ... The parts add in quadrature: most of the noise comes from the
    # cells' own rounds", one thing said twice
    text = noise_parts_text([_row(400.0, 9.0), _row(800.0, 20.0)], RUN, "assumed")
    assert "nearly all comes from their own rounds" in text and "quadrature" not in text
    assert "quadrature" in noise_parts_text(ROWS, RUN, "assumed")


def test_one_value_is_not_printed_as_a_range():
    assert "±2.3% to ±2.3%" not in noise_parts_text([_row(13.2, 0.45)], math.log1p(0.13), "assumed")


def test_the_summary_advises_what_the_lines_advise():
    noises = [r["noise"] for r in ROWS]
    lines = {rerun_advice(n, RUN, False) for n in noises}
    assert all("more rounds in each run could settle it" in h for h in lines)
    summary = summary_advice(noises, RUN, False)
    assert "runs a side to settle" not in summary and summary.startswith("more rounds in each run could settle them")
    # the run-to-run part dominating every line: the summary's runs figure, as before
    wide = math.log1p(0.13)
    assert "runs a side to settle ±5%" in summary_advice([wide, wide], wide, False)
    # some lines each way: both, each said of the cells it holds for
    mixed = summary_advice([math.log1p(0.011), math.log1p(0.2)], RUN, False)
    assert "(1 of 2 cells)" in mixed and "more rounds in each run could settle them" in mixed


def test_a_disturbed_cells_median_is_not_quoted_beside_its_note():
    v = {"verdict": "inconclusive", "speedup": 1.6, "ci_low": 0.2, "ci_high": 8.0, "floor": 5.0, "noise": 0.25,
         "n_a": 3, "n_b": 3, "basis": "rounds", "run_noise": 0.01, "median_a": 23e-6, "median_b": 37.1e-6}
    assert "23 µs for run A" in verdict_sentence(v, "run A", "run B", busy=False)
    sentence = verdict_sentence({**v, "cells_disturbed": 1}, "run A", "run B", busy=False)
    assert "23 µs" not in sentence and "medians differ" not in sentence


def test_advice_follows_the_part_its_line_names_even_when_the_runs_part_is_not_small():
    # 07's n=4096 line: "its interval rests on its own rounds (±3.5%) more than the runs' scatter (±2.0%)", then
    # advised "about 2 runs a side" alone (the runs' part alone, 3 sigmas = ±6%, passes 5%, and the old rule then
    # sent every such cell to runs). The advice now leads with rounds and names the runs the runs' part needs.
    run = math.log1p(0.020)
    noise = math.hypot(math.log1p(0.035), run)
    hint = rerun_advice(noise, run, False)
    assert hint.startswith("more rounds in each run could settle it (its own rounds make most of its noise)")
    assert "about 2 runs a side" in hint and "still needs" in hint
    assert summary_advice([noise, noise], run, False).startswith("more rounds in each run could settle them")
    # the runs' part the larger: runs only, as before
    assert rerun_advice(math.hypot(math.log1p(0.01), run), run, False).startswith("run each side again")
