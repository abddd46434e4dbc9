"""Issue 39: a ratio printed beside figures agrees with those printed figures, and a figure near a threshold keeps
the digit that shows which side of it it lies."""

from __future__ import annotations

from workbench.report.ratio_text import bound_text, interval_text, mark_text


def test_a_one_sided_bound_below_one_inverts_to_the_sentences_figure():
    # 01: "≤ 0.19×" beside "at least 5.4× its time" (1/0.19 = 5.26)
    cell = interval_text(None, 0.185)
    shown = float(cell.removeprefix("≤ ").removesuffix("×"))
    assert shown >= 0.185 and bound_text(1 / shown) == bound_text(1 / 0.185) == "5.4×"
    low = interval_text(0.185, None)   # a lower bound below 1 stays a lower bound
    assert float(low.removeprefix("≥ ").removesuffix("×")) <= 0.185
    assert interval_text(1.5, None) == "≥ 1.5×"


def test_a_ratio_beside_its_threshold_prints_on_its_own_side():
    assert mark_text(1.049, 1.05) == "1.049×"   # 05: "round 2 (1.05×)" said to be under a 5% threshold
    assert mark_text(1.07, 1.05) == "1.07×"
    assert mark_text(1.051, 1.05) == "1.051×"
