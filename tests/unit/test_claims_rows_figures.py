"""Figures printed beside each other come from one another (tutorial 10, one core busy)."""

import json

from workbench.report.claims_rows import median_rounds, own_rounds_share, quartiles_wide, two_figures


def test_a_share_names_the_round_it_comes_from():
    # 10: "4.2 GB/s (median), 16% of its own rounds' probes (1.8/23.1, 4.6/23.1, 3.8/23.1)": 16% is 3.8/23.1
    row = {"bytes": 1e9, "round_medians_s": json.dumps([1 / 1.8, 1 / 4.6, 1 / 3.8]),
           "round_bandwidth_gbs": json.dumps([23.1, 23.1, 23.1])}
    (g, p), = median_rounds(row)
    assert round(g, 1) == 3.8 and g / p == own_rounds_share(row)
    even = {**row, "round_medians_s": json.dumps([1 / 1.8, 1 / 4.6, 1 / 3.8, 1 / 2.0]),
            "round_bandwidth_gbs": json.dumps([23.1] * 4)}
    assert sum(g / p for g, p in median_rounds(even)) / 2 == own_rounds_share(even)
    assert median_rounds({"bytes": 1e9}) == []


def test_a_ratio_of_three_figure_medians_prints_two_figures_at_least():
    # 10: "the paired samples' medians 23.8 ms / 3.16 ms, 8x" (7.5)
    assert two_figures("8×", 23.8 / 3.16) == "7.5×"
    assert two_figures("7.53×", 7.53) == "7.53×" and two_figures("0.9×", 0.93) == "0.93×"
    assert two_figures("12×", 12.4) == "12×"


def test_a_cell_whose_quartiles_span_past_half_its_median_is_wide():
    # 10: medians 810 µs and 3.16 ms whose quartile ranges overlap: one of them spans past ±50%
    assert quartiles_wide({"median_s": 3.16e-3, "q1_s": 0.7e-3, "q3_s": 3.3e-3, "iqr_s": 2.6e-3})
    assert quartiles_wide({"median_s": 3.16e-3, "q1_s": 3.0e-3, "q3_s": 3.3e-3, "iqr_s": 1.8e-3})  # the table's IQR
    assert not quartiles_wide({"median_s": 3.16e-3, "q1_s": 3.0e-3, "q3_s": 3.3e-3, "iqr_s": 0.3e-3})
    assert not quartiles_wide({"median_s": 3.16e-3})


def test_a_ratio_of_three_figure_medians_prints_three_figures_where_asked():
    """10: "1.1×" beside medians of 42.9 µs and 37.2 µs (1.15), "8.7×" beside 23.8 ms / 2.75 ms (8.65)."""
    from workbench.report.claims_rows import figures_at_least

    assert figures_at_least("1.1×", 42.9 / 37.2, 3) == "1.15×"
    assert figures_at_least("8.7×", 23.8 / 2.75, 3) == "8.65×"
    assert figures_at_least("1.064×", 1.0642, 3) == "1.064×"   # finer already: kept
    assert figures_at_least("1,234×", 1234.4, 3) == "1,234×"
    # 10: "the table's medians 69.1 µs / 63.1 µs, 1.1×" where three figures were promised: a trailing zero is a figure
    assert figures_at_least("1.1×", 69.1 / 63.1, 3) == "1.10×"
    assert figures_at_least("2×", 2.0, 3) == "2.00×" and figures_at_least("12×", 123.4 / 10, 3) == "12.3×"


def test_a_ratio_of_printed_medians_is_the_printed_figures_ratio():
    """10: "123 µs / 119 µs, 1.04×" (123.4 / 118.6 unrounded): a reader dividing the printed medians gets 1.03."""
    from workbench.report.claims_rows import figures_at_least, printed_ratio

    r = printed_ratio(123.4e-6, 118.6e-6)
    assert abs(r - 123 / 119) < 1e-12 and figures_at_least("1.0×", r, 3) == "1.03×"
    assert abs(printed_ratio(2.75e-3, 24.3e-6) - 2.75e-3 / 24.3e-6) < 1e-9   # across units
